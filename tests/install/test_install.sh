#!/bin/sh
# make install into a scratch prefix, as a packager or a user without root
# would: nothing may land outside it, and a program built with nothing but
# `pkg-config --cflags --libs heteroopt` (no --static) links and runs a model
# scheduled on an installed box (tests/install/embed.c).
# usage: test_install.sh ROOT MODELS_DIR
set -eu
ROOT=$1 M=$2
[ -s "$M/squeezenet1_1.onnx" ] || { echo "skipped: squeezenet1_1 not in $M"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
P=$tmp/prefix
touch "$tmp/before"
make -s -C "$ROOT" PREFIX="$P" install >"$tmp/install.log" 2>&1 ||
	{ cat "$tmp/install.log"; exit 1; }
test -f "$P/lib/udev/rules.d/60-ump.rules" || { echo "udev rule not under PREFIX"; exit 1; }
# Where a system install writes (udev, DKMS, /usr/local): nothing new of ours.
outside=$(find /etc /usr/src /usr/local -newer "$tmp/before" \( -name '*ump*' -o -name '*heteroopt*' \) 2>/dev/null)
[ -z "$outside" ] || { echo "make install PREFIX=$P wrote outside it: $outside"; exit 1; }
test -f "$P/share/heteroopt/boxes/this-machine-cpu-emu.json" || { echo "boxes not installed"; exit 1; }
test -f "$P/include/heteroopt/version.h" || { echo "version.h not installed"; exit 1; }
export PKG_CONFIG_PATH="$P/lib/pkgconfig"
echo "pkg-config: $(pkg-config --modversion heteroopt), boxdir $(pkg-config --variable=boxdir heteroopt)"
[ "$(pkg-config --modversion heteroopt)" = "$(sed -n 's/^#define HO_VERSION_STRING "\(.*\)"/\1/p' "$ROOT/include/heteroopt/version.h")" ]
# shellcheck disable=SC2046
cc -std=c11 -D_GNU_SOURCE -Wall -Werror -o "$tmp/embed" "$ROOT/tests/install/embed.c" \
	$(pkg-config --cflags --libs heteroopt)
"$tmp/embed" "$M/squeezenet1_1.onnx" input=1x3x224x224 "$(pkg-config --variable=boxdir heteroopt)"
