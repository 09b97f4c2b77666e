#!/bin/sh
# make bench-instr-compare REV=<commit>: `make bench-instr`'s table for an earlier commit and for this tree, side
# by side, with the difference. Instruction counts are exact, so a change of a few tenths a sample is real, where
# wall time on this VM would hide it (0.55.10 found a per-chunk cost of 0.41.9's in one-chunk decodes this way:
# bench/MEASUREMENTS.md, "Instructions at 0.55.10 against 0.41.7's table").
#
#   scripts/instr-compare.sh REV BENCH [THRESHOLD]
#
# REV's bench is built in a git worktree under build/instr-REV (removed afterwards) and measured by this tree's
# scripts/instr-per-op.sh, so REV needs `bench --phase` (0.7.0 on). Rows whose difference passes THRESHOLD
# (instructions a sample, default 0.2) are marked with '*'. About two minutes for the whole table.
set -eu
cd "$(dirname "$0")/.."
REV=$1; BENCH=$2; THRESHOLD=${3:-0.2}
OLD=build/instr-$(git rev-parse --short "$REV")
git worktree remove --force "$OLD" 2>/dev/null || rm -rf "$OLD"
git worktree add --detach "$OLD" "$REV" >/dev/null 2>&1
trap 'git worktree remove --force "$OLD" 2>/dev/null || rm -rf "$OLD"' EXIT
make --no-print-directory -s -C "$OLD" -j2 build/release/bench/bench >/dev/null
echo "| workload | chunk | codec | phase | $REV | this tree | difference |"
echo "|---|---:|---|---|---:|---:|---:|"
for w in const-regular const-jitter counter gauge-2dp random; do
  for c in 120 1024; do
    for codec in tsc2 tschunk prom; do
      sh scripts/instr-per-op.sh "$OLD/build/release/bench/bench" $w $c $codec > "$OLD/old.txt"
      sh scripts/instr-per-op.sh "$BENCH" $w $c $codec > "$OLD/new.txt"
      # "WL CODEC chunk=C PHASE: N instructions per sample (...)": join the two runs on the phase
      paste "$OLD/old.txt" "$OLD/new.txt" | awk -v w=$w -v c=$c -v codec=$codec -v t="$THRESHOLD" -F'\t' '{
        split($1, a, " "); split($2, b, " "); phase = a[4]; sub(":", "", phase)
        d = b[5] - a[5]; mark = (d > t || d < -t) ? " *" : ""
        printf "| %s | %s | %s | %s | %.1f | %.1f | %+.1f%s |\n", w, c, codec, phase, a[5], b[5], d, mark }'
    done
  done
done
