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
echo "clients_skip: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
