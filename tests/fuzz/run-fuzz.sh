#!/bin/sh
# Run a parser fuzzer for a bounded number of inputs (GB_FUZZ_RUNS, default 20000)
# or time (GB_FUZZ_SECONDS). TAP output.
#
#   run-fuzz.sh policy   the policy parser, seeded with the example policies
#   run-fuzz.sh record   the restart record parser, seeded with record-corpus/
set -u
here=$(cd "$(dirname "$0")" && pwd)
what=${1:-policy}
fuzzer=${GB_FUZZER:-tests/fuzz/fuzz-$what}
runs=${GB_FUZZ_RUNS:-20000}
# GB_FUZZ_SECONDS: run for that long instead of a number of inputs ("make fuzz").
if [ -n "${GB_FUZZ_SECONDS:-}" ]; then limit="-max_total_time=$GB_FUZZ_SECONDS"; runs="${GB_FUZZ_SECONDS}s of"; else limit="-runs=$runs"; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/corpus"
case "$what" in
policy) cp "$here"/../../policy/examples/*.conf "$work/corpus/" ;;
record) cp "$here"/record-corpus/* "$work/corpus/" ;;
*) echo "usage: $0 policy|record" >&2; exit 2 ;;
esac
if "$fuzzer" "$limit" -max_len=4096 -artifact_prefix="$work/" "$work/corpus" > "$work/log" 2>&1; then
	echo "ok 1 - $what parser survives $runs fuzzed inputs ($(grep -c . "$work/log") log lines)"
	echo "1..1"
	exit 0
fi
echo "not ok 1 - $what parser fuzzing found a problem"
sed 's/^/# /' "$work/log" | tail -n 40
for f in "$work"/crash-* "$work"/leak-* "$work"/oom-*; do
	[ -f "$f" ] && { echo "# input that fails:"; od -c "$f" | head -n 20 | sed 's/^/# /'; }
done
echo "1..1"
exit 1
