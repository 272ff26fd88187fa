#!/bin/sh
# Every C file is formatted as its half of the tree says: the module and its
# uapi (kernel/, include/uapi/, tests/kmod/) by the kernel's own .clang-format
# (from the 6.12 source scripts/debug-kernel.sh unpacks), everything else by
# the root .clang-format.  Lists the files that differ; fix with clang-format -i.
# usage: format.sh ROOT
set -u
ROOT=$1
cd "$ROOT" || exit 1
command -v clang-format >/dev/null || { echo "skipped: no clang-format"; exit 77; }
files=$(git ls-files 2>/dev/null) || { echo "format.sh: not a git checkout (git ls-files failed)"; exit 1; }
[ -n "$files" ] || { echo "format.sh: git lists no files"; exit 1; }
bad=0 n=0
check() { # check FILE [STYLE]
	[ -L "$1" ] && return # a link is checked as the file it names
	n=$((n + 1))
	if ! clang-format --dry-run -Werror ${2:+--style=file:$2} "$1" >/dev/null 2>&1; then
		echo "not formatted: $1 (clang-format -i ${2:+--style=file:$2 }$1)"
		bad=$((bad + 1))
	fi
}
for f in $(git ls-files 'user/*.[ch]' 'probes/*.[ch]' 'include/heteroopt/*.h' 'include/ump/*.h' 'tests/*.[ch]' 'bench/*.[ch]' |
	grep -v '^tests/kmod/'); do
	check "$f"
done
KS=$(sh scripts/debug-kernel.sh --source 2>/dev/null) && [ -f "$KS/.clang-format" ] || KS=""
if [ -n "$KS" ]; then
	for f in $(git ls-files 'kernel/*.[ch]' 'include/uapi/*.h' 'tests/kmod/*.[ch]'); do
		check "$f" "$KS/.clang-format"
	done
else
	echo "the kernel's .clang-format is not here (no linux-source-6.12): kernel half not checked"
fi
echo "$n files checked, $bad not formatted"
[ $bad = 0 ] || exit 1
[ -n "$KS" ] || exit 77
