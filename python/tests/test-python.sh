#!/bin/sh
# The Python binding and the gpiozero pin factory on the bench: Python's unittest
# (python/tests/test_*.py) against the real broker, real gpio-sim lines, real uids,
# reported as TAP. Run by "make check" when configured with --enable-bindings-python.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
[ -n "${GB_BENCH:-}" ] || exec "$here/../../tests/bench/run" \
	--chip gbpy:8:0=porch,1=doorbell,2=spare,3=relay,4=alarm,5=motor,6=fan,7=siren \
	-- "$here/$(basename "$0")" "$@"

: "${GB_TEST_BROKER:?GB_TEST_BROKER must name the gpiod-broker binary}"
: "${GB_TEST_PYTHONPATH:?GB_TEST_PYTHONPATH must name the build tree's python/site}"
# The build tree's library, not one installed earlier.
LD_LIBRARY_PATH=$GB_TEST_LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
PYTHONPATH=$GB_TEST_PYTHONPATH
PYTHONDONTWRITEBYTECODE=1
export LD_LIBRARY_PATH PYTHONPATH PYTHONDONTWRITEBYTECODE
exec "${GB_TEST_PYTHON:-/usr/bin/python3}" "$here/tap.py" "$here"
