#!/bin/sh
# Run a fuzzer for a bounded number of inputs (GB_FUZZ_RUNS, default 20000; 3000
# for p2p, whose inputs each open a connection) or time (GB_FUZZ_SECONDS). TAP
# output.
#
#   run-fuzz.sh policy   the policy parser, seeded with the example policies and
#                        policy-seeds/ (what the examples do not show)
#   run-fuzz.sh record   the restart record parser, seeded with record-corpus/
#   run-fuzz.sh p2p      the private connection, seeded with real calls written by
#                        tests/fuzz/fuzz-p2p-seeds (GB_FUZZ_SEEDS)
set -u
here=$(cd "$(dirname "$0")" && pwd)
what=${1:-policy}
fuzzer=${GB_FUZZER:-tests/fuzz/fuzz-$what}
case "$what" in
p2p) runs=${GB_FUZZ_RUNS:-3000} ;;
*) runs=${GB_FUZZ_RUNS:-20000} ;;
esac
# GB_FUZZ_SECONDS: run for that long instead of a number of inputs ("make fuzz").
if [ -n "${GB_FUZZ_SECONDS:-}" ]; then limit="-max_total_time=$GB_FUZZ_SECONDS"; runs="${GB_FUZZ_SECONDS}s of"; else limit="-runs=$runs"; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/corpus"
opts=
case "$what" in
policy)
	cp "$here"/../../policy/examples/*.conf "$here"/policy-seeds/*.conf "$work/corpus/"
	subject="policy parser"
	;;
record) cp "$here"/record-corpus/* "$work/corpus/"; subject="record parser" ;;
p2p)
	subject="private connection"
	if ! "${GB_FUZZ_SEEDS:-tests/fuzz/fuzz-p2p-seeds}" "$work/corpus" > "$work/log" 2>&1; then
		echo "not ok 1 - $subject: cannot write the seed corpus"
		sed 's/^/# /' "$work/log"
		echo "1..1"
		exit 1
	fi
	# A hang is a finding too. The broker logs every call: to stderr, which
	# libFuzzer closes (fuzz-p2p keeps its own findings on a copy of it).
	opts="-timeout=60 -close_fd_mask=2"
	;;
*) echo "usage: $0 policy|record|p2p" >&2; exit 2 ;;
esac
# shellcheck disable=SC2086 # $opts is a list of options
if "$fuzzer" "$limit" -max_len=4096 $opts -artifact_prefix="$work/" "$work/corpus" \
	> "$work/log" 2>&1; then
	echo "ok 1 - $subject survives $runs fuzzed inputs ($(grep -c . "$work/log") log lines)"
	echo "1..1"
	exit 0
fi
echo "not ok 1 - $subject fuzzing found a problem"
sed 's/^/# /' "$work/log" | tail -n 40
for f in "$work"/crash-* "$work"/leak-* "$work"/oom-*; do
	[ -f "$f" ] && { echo "# input that fails:"; od -c "$f" | head -n 20 | sed 's/^/# /'; }
done
echo "1..1"
exit 1
