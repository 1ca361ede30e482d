#!/bin/sh
# Run the policy parser fuzzer for a bounded number of inputs (GB_FUZZ_RUNS, default
# 20000) or time (GB_FUZZ_SECONDS), seeded with the example policies. TAP output.
set -u
here=$(cd "$(dirname "$0")" && pwd)
fuzzer=${GB_FUZZER:-tests/fuzz/fuzz-policy}
runs=${GB_FUZZ_RUNS:-20000}
# GB_FUZZ_SECONDS: run for that long instead of a number of inputs ("make fuzz").
if [ -n "${GB_FUZZ_SECONDS:-}" ]; then limit="-max_total_time=$GB_FUZZ_SECONDS"; runs="${GB_FUZZ_SECONDS}s of"; else limit="-runs=$runs"; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/corpus"
cp "$here"/../../policy/examples/*.conf "$work/corpus/"
if "$fuzzer" "$limit" -max_len=4096 -artifact_prefix="$work/" "$work/corpus" > "$work/log" 2>&1; then
	echo "ok 1 - policy parser survives $runs fuzzed inputs ($(grep -c . "$work/log") log lines)"
	echo "1..1"
	exit 0
fi
echo "not ok 1 - policy parser fuzzing found a problem"
sed 's/^/# /' "$work/log" | tail -n 40
for f in "$work"/crash-* "$work"/leak-* "$work"/oom-*; do
	[ -f "$f" ] && { echo "# input that fails:"; od -c "$f" | head -n 20 | sed 's/^/# /'; }
done
echo "1..1"
exit 1
