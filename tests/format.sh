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
check() { # check STYLE FILE...: one clang-format for all; one per file only to name those that differ
	style=$1
	shift
	for f in "$@"; do # a link is checked as the file it names
		shift
		[ -L "$f" ] || set -- "$@" "$f"
	done
	n=$((n + $#))
	clang-format --dry-run -Werror ${style:+--style=file:$style} "$@" >/dev/null 2>&1 && return
	for f in "$@"; do
		if ! clang-format --dry-run -Werror ${style:+--style=file:$style} "$f" >/dev/null 2>&1; then
			echo "not formatted: $f (clang-format -i ${style:+--style=file:$style }$f)"
			bad=$((bad + 1))
		fi
	done
}
# shellcheck disable=SC2046 # the file names split on white space: git lists none with it
check "" $(git ls-files 'user/*.[ch]' 'probes/*.[ch]' 'include/heteroopt/*.h' 'include/ump/*.h' 'tests/*.[ch]' 'bench/*.[ch]' |
	grep -v '^tests/kmod/')
KS=$(sh scripts/debug-kernel.sh --source 2>/dev/null) && [ -f "$KS/.clang-format" ] || KS=""
if [ -n "$KS" ]; then
	# shellcheck disable=SC2046
	check "$KS/.clang-format" $(git ls-files 'kernel/*.[ch]' 'include/uapi/*.h' 'tests/kmod/*.[ch]')
else
	echo "the kernel's .clang-format is not here (no linux-source-6.12): kernel half not checked"
fi
echo "$n files checked, $bad not formatted"
[ $bad = 0 ] || exit 1
[ -n "$KS" ] || exit 77
