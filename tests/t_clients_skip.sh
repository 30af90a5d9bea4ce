#!/bin/bash
# EVIDENCE-OF: `make check-clients` (tests/clients/
# claude-code.sh) reports "skipped", never "passed", when npm cannot
# install Claude Code, and the skip fails the run under
# CAIRN_FAIL_ON_SKIP=1 (as in .ci/run). An `npm` that fails as one without
# a registry does stands first on the PATH, and Claude Code's folder is
# empty, so nothing is installed and nothing reaches the network.
#
#   tests/t_clients_skip.sh CAIRN
set -u
cd "$(dirname "$0")/.."
tmp=$(mktemp -d /tmp/cairn-clients-skip-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0
ok() { passed=$((passed + 1)); }
bad() { echo "t_clients_skip: $*" >&2; failed=$((failed + 1)); }

mkdir -p "$tmp/bin"
printf '#!/bin/sh\necho "npm error code ENOTFOUND (no registry in this test)" >&2\nexit 1\n' > "$tmp/bin/npm"
chmod +x "$tmp/bin/npm"
run() { # FAIL_ON_SKIP: the client check's stdout to $tmp/out, its exit status to $tmp/rc
	PATH="$tmp/bin:$PATH" CAIRN_CLIENTS_DIR="$tmp/claude-code" CAIRN_FAIL_ON_SKIP=$1 \
		timeout 60 bash tests/clients/claude-code.sh "$2" > "$tmp/out" 2> "$tmp/err"
	echo $? > "$tmp/rc"
}
run 0 "$1"
if grep -q '^skipped: Claude Code could not be installed from npm' "$tmp/out"; then ok; else
	bad "no 'skipped: ...' line: $(head -3 "$tmp/out") $(tail -2 "$tmp/err")"; fi
if [ "$(tail -1 "$tmp/out")" = "claude-code: 0 passed, 0 failed, 1 skipped" ]; then ok; else
	bad "result line: $(tail -1 "$tmp/out")"; fi
if [ "$(cat "$tmp/rc")" = 0 ]; then ok; else bad "exit $(cat "$tmp/rc") without CAIRN_FAIL_ON_SKIP"; fi
run 1 "$1"
if [ "$(cat "$tmp/rc")" = 1 ]; then ok; else bad "exit $(cat "$tmp/rc") with CAIRN_FAIL_ON_SKIP=1, expected 1"; fi
if [ ! -e "$tmp/claude-code/node_modules" ]; then ok; else bad "something was installed"; fi

# which Claude Code build tests/tools/claude-code-setup takes: npm 9
# (Debian's) installs the glibc and the musl platform packages side by
# side; the one for this machine's C library is taken, by name and by its
# package.json's "libc" (a folder laid out as that npm leaves it; the
# failing npm above makes sure nothing is fetched)
ver=$(sed -n 's/^VER=//p' tests/tools/claude-code-setup)
case $(uname -m) in x86_64 | amd64) cpu=x64 ;; aarch64 | arm64) cpu=arm64 ;; *) cpu=$(uname -m) ;; esac
cc=$tmp/cc/node_modules/@anthropic-ai
mkdir -p "$cc/claude-code" "$cc/claude-code-linux-$cpu" "$cc/claude-code-linux-$cpu-musl"
printf '{"name":"@anthropic-ai/claude-code","version":"%s"}\n' "$ver" > "$cc/claude-code/package.json"
for l in glibc musl; do
	d=$cc/claude-code-linux-$cpu; [ $l = musl ] && d=$d-musl
	printf '{"os":["linux"],"cpu":["%s"],"libc":["%s"]}\n' "$cpu" "$l" > "$d/package.json"
	printf '#!/bin/sh\necho %s\n' "$l" > "$d/claude"
	chmod +x "$d/claude"
done
pick() { PATH="$tmp/bin:$PATH" "$@" tests/tools/claude-code-setup "$tmp/cc" 2> "$tmp/pick.err"; }
if [ "$(uname -s)" = Linux ] && command -v node > /dev/null; then
	got=$(pick env CAIRN_CLAUDE_LIBC=glibc)
	if [ "$got" = "$cc/claude-code-linux-$cpu/claude" ]; then ok; else
		bad "on glibc claude-code-setup took '$got' $(cat "$tmp/pick.err")"; fi
	got=$(pick env -u CAIRN_CLAUDE_LIBC)
	if ldd --version 2>&1 | grep -qi musl; then want=$cc/claude-code-linux-$cpu-musl/claude; else
		want=$cc/claude-code-linux-$cpu/claude; fi
	if [ "$got" = "$want" ]; then ok; else bad "this machine's C library: took '$got', want '$want'"; fi
	got=$(pick env CAIRN_CLAUDE_LIBC=musl)
	if [ "$got" = "$cc/claude-code-linux-$cpu-musl/claude" ]; then ok; else
		bad "on musl claude-code-setup took '$got'"; fi
	# a package whose "libc" is not this machine's is not taken
	printf '{"os":["linux"],"cpu":["%s"],"libc":["musl"]}\n' "$cpu" > "$cc/claude-code-linux-$cpu/package.json"
	if got=$(pick env CAIRN_CLAUDE_LIBC=glibc); then
		bad "a build for musl was taken on glibc: '$got'"
	else
		ok
	fi
else
	echo "  skipped: claude-code-setup's choice of build: not Linux, or no node"
	skipped=1
fi
echo "clients_skip: $passed passed, $failed failed${skipped:+, $skipped skipped}"
[ "$failed" -eq 0 ]
