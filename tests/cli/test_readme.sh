#!/bin/sh
# The README's "Using it" commands, run as written: a user pastes them at the
# clone's root, so each must work on the models the set-up fetches.  The
# block runs in a scratch folder that sees the clone's build/, boxes/ and
# examples/; the model cache is this run's.
# usage: test_readme.sh HETEROOPT_ROOT MODELS_DIR
set -eu
ROOT=$1 M=$2
[ -s "$M/ch_PP-OCRv4_det_infer.onnx" ] || { echo "skipped: $M/ch_PP-OCRv4_det_infer.onnx not present (scripts/models.sh makes or fetches it)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for d in build boxes examples; do ln -s "$ROOT/$d" "$tmp/$d"; done
# The block: from the line after "## Using it"'s ```sh to its closing ```.
awk '/^## Using it/ { u = 1 } u && /^```sh/ { b = 1; next } b && /^```/ { exit } b' "$ROOT/README.md" |
	sed "s|^M=~/.cache/heteroopt/models|M='$M'|" >"$tmp/readme.sh"
n=$(grep -c '^build/heteroopt' "$tmp/readme.sh")
[ "$n" -ge 8 ] || { echo "the README's block has $n heteroopt commands, expected 8 or more"; exit 1; }
cd "$tmp"
# -x: the log shows each command as it ran; -e: the first that fails ends the test.
sh -ex readme.sh
echo "README: $n heteroopt commands ran"
# The walk-through from a model to a report, the same way.
awk '/^## Walk-through/ { u = 1 } u && /^```sh/ { b = 1; next } b && /^```/ { exit } b' \
	"$ROOT/Documentation/walkthrough.md" | sed "s|^M=~/.cache/heteroopt/models|M='$M'|" >walk.sh
w=$(grep -c '^build/heteroopt' walk.sh)
[ "$w" -ge 6 ] || { echo "the walk-through has $w heteroopt commands, expected 6 or more"; exit 1; }
sh -ex walk.sh
[ -s wt-report.html ] && grep -q 'const DATA = {' wt-report.html ||
	{ echo "the walk-through wrote no report"; exit 1; }
echo "walk-through: $w heteroopt commands ran, wt-report.html written"
