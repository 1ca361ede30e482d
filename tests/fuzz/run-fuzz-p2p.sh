#!/bin/sh
# make check: the private connection's fuzzer, a bounded run.
exec "$(dirname "$0")/run-fuzz.sh" p2p
