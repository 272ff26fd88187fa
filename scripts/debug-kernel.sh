#!/bin/sh
# Build (once per machine) the debug kernel ump.ko is tested in: Debian's
# linux-source-6.12 configured from allnoconfig plus scripts/qemu/debug.config
# (KASAN, kmemleak, lockdep, UBSAN, failslab, P2PDMA, udmabuf, dma-heaps).
# The build lives outside the clone, keyed by source version and config, so a
# second clone or CI run reuses it. Prints the build directory (which has
# arch/x86/boot/bzImage and can build external modules) on stdout.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${HETEROOPT_CACHE:-$HOME/.cache/heteroopt}/kernel
FRAG=$ROOT/scripts/qemu/debug.config
TARBALL=$(ls /usr/src/linux-source-6.12.tar.xz 2>/dev/null || true)
[ -n "$TARBALL" ] || { echo "debug-kernel: /usr/src/linux-source-6.12.tar.xz missing (scripts/deps.sh installs it)" >&2; exit 1; }

ver=$(dpkg-query -W -f='${Version}' linux-source-6.12)
key=$(printf '%s\n' "$ver" | cat - "$FRAG" | sha256sum | cut -c1-12)
src=$CACHE/src-$ver
out=$CACHE/build-$key
mkdir -p "$CACHE"

if [ ! -f "$src/.extracted" ]; then
	echo "debug-kernel: extracting $TARBALL" >&2
	rm -rf "$src" "$src.tmp" && mkdir -p "$src.tmp"
	tar -C "$src.tmp" --strip-components=1 -xJf "$TARBALL"
	touch "$src.tmp/.extracted" && mv "$src.tmp" "$src"
fi
# --source: only the extracted tree (checkpatch.pl lives there).
if [ "${1:-}" = "--source" ]; then echo "$src"; exit 0; fi
if [ -f "$out/.done" ]; then echo "$out"; exit 0; fi

start=$(date +%s)
mkdir -p "$out"
make -s -C "$src" O="$out" allnoconfig >&2
"$src/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" "$FRAG" >/dev/null
make -s -C "$src" O="$out" olddefconfig >&2
# merge_config only warns when a symbol's dependencies drop it; a silently
# missing KASAN or P2PDMA would make the tests prove less than they claim.
missing=0
grep '^CONFIG_' "$FRAG" | while IFS= read -r line; do
	grep -qx "$line" "$out/.config" || { echo "debug-kernel: config lost: $line" >&2; echo x; }
done > "$out/.lost"
if [ -s "$out/.lost" ]; then missing=1; fi
[ $missing -eq 0 ] || exit 1
echo "debug-kernel: building $ver in $out (this takes a while once)" >&2
# `modules` writes Module.symvers, which external modules link against.
make -s -C "$src" O="$out" -j"$(nproc)" bzImage modules modules_prepare >&2
touch "$out/.done"
echo "debug-kernel: built in $(($(date +%s) - start)) s" >&2
echo "$out"
