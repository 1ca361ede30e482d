#!/bin/sh
# make check: the record parser fuzzer, a bounded run.
exec "$(dirname "$0")/run-fuzz.sh" record
