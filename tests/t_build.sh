#!/bin/bash
# tests/t_build.sh -- the build on a machine whose packages are not in yet.
# make reads pkg-config's flags when it parses the Makefile; on a fresh
# machine that is before `deps` installed anything. These cases put a
# pkg-config first on PATH that fails (as a missing one does) and check
# that nothing is built against missing flags, and that README's first
# command (`make demo`, parallel too) builds a complete libcairn.so once
# `deps` has run. DEPS= stands in for scripts/deps here.
set -u
cd "$(dirname "$0")/.."
tmp=$(mktemp -d /tmp/cairn-build-XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
passed=0
failed=0
ok() { passed=$((passed + 1)); }
bad() { echo "t_build: $*" >&2; failed=$((failed + 1)); }
real=$(command -v pkg-config)
mk() { env -u MAKEFLAGS -u MAKELEVEL make --no-print-directory CFLAGS=-O0 "$@"; }

# 1. pkg-config fails: make stops with a message naming the cure, and no
#    object or library is left behind
mkdir -p "$tmp/fail"
printf '#!/bin/sh\nexit 1\n' > "$tmp/fail/pkg-config"
chmod +x "$tmp/fail/pkg-config"
if PATH="$tmp/fail:$PATH" mk B="$tmp/b1" "$tmp/b1/libcairn.so" > "$tmp/log1" 2>&1; then
	bad "make built libcairn.so although pkg-config failed"
else
	ok
fi
if grep -q "pkg-config cannot find" "$tmp/log1" && grep -q "make deps" "$tmp/log1"; then
	ok
else
	bad "no clear error when pkg-config fails: $(tail -2 "$tmp/log1")"
fi
if [ -e "$tmp/b1/libcairn.so" ] || ls "$tmp"/b1/*.o >/dev/null 2>&1; then
	bad "something was built against missing flags: $(ls "$tmp/b1" | head -3)"
else
	ok
fi

# 2. the fresh machine: pkg-config fails until `deps` has installed the
#    packages (a marker here); `make -j2 demo` must still link every
#    library into libcairn.so and run the demo
mkdir -p "$tmp/fresh"
cat > "$tmp/fresh/pkg-config" <<SH
#!/bin/sh
[ -e "$tmp/installed" ] || exit 1
exec "$real" "\$@"
SH
chmod +x "$tmp/fresh/pkg-config"
if PATH="$tmp/fresh:$PATH" DEMO_DIR="$tmp/demo" \
	mk -j2 B="$tmp/b2" DEPS="touch $tmp/installed" demo > "$tmp/log2" 2>&1; then
	ok
else
	bad "make -j2 demo failed on a fresh machine: $(tail -3 "$tmp/log2")"
fi
undef=$(ldd -r "$tmp/b2/libcairn.so" 2>&1 | grep -c 'undefined symbol')
if readelf -d "$tmp/b2/libcairn.so" 2>/dev/null | grep -q 'NEEDED.*libsqlite3' && [ "$undef" -eq 0 ]; then
	ok
else
	bad "libcairn.so lacks its libraries: $undef undefined symbols"
fi
if grep -q "no record answers this" "$tmp/log2"; then ok; else bad "the demo did not recall"; fi

# 3. objects built with other flags are not taken as up to date (an
#    earlier build against missing flags, or another CFLAGS, is redone)
if mk B="$tmp/b2" "$tmp/b2/libcairn.so" > "$tmp/log3" 2>&1 && ! grep -q '^cc ' "$tmp/log3"; then
	ok
else
	bad "an unchanged build recompiled or failed: $(tail -2 "$tmp/log3")"
fi
if env -u MAKEFLAGS -u MAKELEVEL make --no-print-directory CFLAGS=-O1 B="$tmp/b2" \
	"$tmp/b2/libcairn.so" > "$tmp/log4" 2>&1 && grep -q '^cc .* -O1 .*src/store.c' "$tmp/log4"; then
	ok
else
	bad "other CFLAGS did not rebuild the objects: $(tail -2 "$tmp/log4")"
fi

echo "build: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
