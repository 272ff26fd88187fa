#!/bin/sh
# The README's second command: set up this machine, build, generate the test
# models, and run every test (tests/run.sh prints "N passed, N failed, N skipped").
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
start=$(date +%s)
sh scripts/deps.sh
make -s -j"$(nproc)" all tests
sh scripts/models.sh
status=0
sh tests/run.sh || status=$?
echo "check: $(($(date +%s) - start)) s in all"
exit $status
