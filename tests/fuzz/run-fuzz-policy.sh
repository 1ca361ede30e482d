#!/bin/sh
# make check: the policy parser fuzzer, a bounded run.
exec "$(dirname "$0")/run-fuzz.sh" policy
