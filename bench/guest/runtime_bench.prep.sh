#!/bin/sh
# Host half of the guest benchmark runtime_bench: the files of the guest test
# runtime_models (models, schedules for the guest's boxes).
exec sh "$(dirname "$0")/../../tests/guest/runtime_models.prep.sh" "$@"
