#!/bin/sh
# README's "At a glance" table: RUNS alternating `bench` runs of each codec (codecs 2 and 1 at 1,024-sample
# chunks, Prometheus XOR at 120; each run a median of 5 repetitions) pinned to one CPU, then the medians
# (scripts/bench-summary.py --glance). The VM this was written on has fast and slow hours (1.5x apart), so a probe
# (codec 2's gauge-2dp batch decode) runs before and after each set, and the summary keeps the sets whose probes
# read within 5% of the fastest one. The raw runs stay in OUT (default: a new temporary directory).
# usage: scripts/glance.sh BENCH [RUNS] [CPU] [OUT]
set -eu
BENCH=$1; RUNS=${2:-5}; CPU=${3:-1}; OUT=${4:-$(mktemp -d)}
mkdir -p "$OUT"
# Sizes at 1,024 for all three codecs (exact: one run is enough)
taskset -c "$CPU" "$BENCH" --codec prom --chunk 1024 --reps 1 > "$OUT/sizes.prom1024"
probe() {
  taskset -c "$CPU" "$BENCH" --only gauge-2dp --codec tsc2 --chunk 1024 --reps 5 |
    awk -F' [|] ' '/^\| gauge-2dp/{print $8}'
}
for i in $(seq 1 "$RUNS"); do
  before=$(probe)
  taskset -c "$CPU" "$BENCH" --codec tsc2 --chunk 1024 --reps 5 > "$OUT/tsc2.$i"
  taskset -c "$CPU" "$BENCH" --codec tschunk --chunk 1024 --reps 5 > "$OUT/tschunk.$i"
  taskset -c "$CPU" "$BENCH" --codec prom --chunk 120 --reps 5 > "$OUT/prom.$i"
  echo "$before $(probe)" > "$OUT/probe.$i"
done
python3 "$(dirname "$0")/bench-summary.py" --glance "$OUT"/*
echo "runs in $OUT" >&2
