#!/bin/sh
# The zoo's model names (tests/models/zoo.txt), one per line: all of them, or
# those with the check given; with -o, NAME OPSET pairs.
# usage: zoo_list.sh [-o] [CHECK]
opset=0
[ "${1:-}" = -o ] && { opset=1; shift; }
awk -v want="${1:-}" -v opset=$opset '
	/^#/ || NF < 2 { next }
	{
		hit = want == ""
		for (i = 3; i <= NF; i++)
			hit = hit || $i == want
		if (hit)
			print opset ? $1 " " $2 : $1
	}' "$(dirname "$0")/zoo.txt"
