#!/bin/bash
# tests/t_deps.sh -- the Debian package sets (scripts/packages,
# scripts/packages-test, scripts/deps). `make demo` installs what cairn
# needs to build and run and nothing the tests alone need (a browser, a
# PostgreSQL server, node); `make check` and .ci/run install everything,
# npm included (make test-data and make check-clients fetch from it).
# Nothing is installed here: scripts/deps --list only prints.
set -u
cd "$(dirname "$0")/.."
passed=0
failed=0
ok() { passed=$((passed + 1)); }
bad() { echo "t_deps: $*" >&2; failed=$((failed + 1)); }

run_set=$(scripts/deps --list 2>&1)
test_set=$(scripts/deps --test --list 2>&1)
has() { printf '%s\n' "$1" | grep -qx -- "$2"; }

# 1. the run set builds cairn and holds no test-only package
for p in build-essential pkg-config libsqlite3-dev python3-jieba git; do
	if has "$run_set" "$p"; then ok; else bad "scripts/deps --list lacks $p"; fi
done
for p in chromium postgresql-15 nodejs npm jq gnuplot-nox python3-numpy; do
	if has "$run_set" "$p"; then bad "make demo would install the test package $p"; else ok; fi
done

# 2. the test set is the run set plus the tests' packages, npm included
for p in $run_set; do
	has "$test_set" "$p" || { bad "scripts/deps --test --list lacks the run package $p"; continue; }
	ok
done
for p in chromium postgresql-15 jq curl sqlite3 openssl; do
	if has "$test_set" "$p"; then ok; else bad "scripts/deps --test --list lacks $p"; fi
done
# node and npm: asked for unless the command is there already (a node
# that brings its own npm conflicts with Debian's npm package: asking apt
# for it there fails the whole install)
for p in nodejs:node npm:npm; do
	pkg=${p%%:*} cmd=${p#*:}
	if grep -qx "$pkg" scripts/packages-test; then ok; else bad "scripts/packages-test lacks $pkg"; fi
	if command -v "$cmd" > /dev/null 2>&1; then
		if has "$test_set" "$pkg"; then bad "$cmd is on PATH, yet scripts/deps asks for $pkg"; else ok; fi
	elif has "$test_set" "$pkg"; then ok
	else bad "scripts/deps --test --list lacks $pkg"; fi
done
# without them on PATH, both are asked for (a PATH of the tools the
# script uses, and no node)
tools=$(mktemp -d /tmp/cairn-deps-XXXXXX)
for t in cat grep dirname; do ln -s "$(command -v "$t")" "$tools/$t"; done
nopath=$(PATH=$tools /bin/sh scripts/deps --test --list 2>&1)
rm -rf "$tools"
for pkg in nodejs npm; do
	if has "$nopath" "$pkg"; then ok; else bad "without node on PATH, scripts/deps --test --list lacks $pkg"; fi
done
# every package name is one bookworm could have (no stray words)
if printf '%s\n' "$test_set" | grep -qvE '^[a-z0-9][a-z0-9.+-]+$'; then
	bad "a line of the package lists is no package name: $(printf '%s\n' "$test_set" | grep -vE '^[a-z0-9][a-z0-9.+-]+$' | head -1)"
else
	ok
fi

# 3. which make target installs which set; .ci/run installs the test set
mkn() { env -u MAKEFLAGS -u MAKELEVEL make -n --no-print-directory \
	DEPS='echo RUN-SET' TEST_DEPS='echo TEST-SET' "$@" 2>/dev/null; }
if mkn deps | grep -qx 'echo RUN-SET'; then ok; else bad "make deps does not run scripts/deps"; fi
if mkn deps-test | grep -qx 'echo TEST-SET'; then ok; else bad "make deps-test does not run scripts/deps --test"; fi
if grep -q '^demo: deps$' Makefile; then ok; else bad "make demo does not install the run set alone"; fi
for t in check test-data check-clients eval; do
	if grep -q "^$t: deps-test\$" Makefile; then ok; else bad "make $t does not install the test set"; fi
done
if grep -q 'scripts/deps --test --list' .ci/run; then ok; else bad ".ci/run does not install the test set"; fi
if scripts/deps --bogus > /dev/null 2>&1; then bad "scripts/deps took an unknown option"; else ok; fi

echo "deps: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
