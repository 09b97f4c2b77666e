#!/bin/sh
# Instructions per push / per decoded sample under callgrind (stable on a noisy machine).
# usage: scripts/instr-per-op.sh BENCH WORKLOAD CHUNK
set -eu
BENCH=$1; WL=$2; CHUNK=$3
out=$(mktemp)
for phase in append iter batch; do
  valgrind --tool=callgrind --callgrind-out-file="$out" "$BENCH" --quick --reps 1 --only "$WL" --chunk "$CHUNK" \
    --phase $phase >/dev/null 2>&1
  case $phase in
    append) fn='tschunk_append_bits' ;;
    iter) fn='tschunk_iter_next_bits' ;;
    batch) fn='tschunk_decode' ;;
  esac
  # append: warm-up plus one repetition (two passes over 12,288 samples); decoding: one pass
  instr=$(callgrind_annotate --inclusive=yes "$out" 2>/dev/null | grep -E "[^a-z_]$fn( |$)" | grep -v '\[' | head -1 | awk '{gsub(",","",$1); print $1}')
  [ "$phase" = append ] || instr=$(callgrind_annotate --inclusive=yes "$out" 2>/dev/null | grep -E "[^a-z_]$fn" | head -1 | awk '{gsub(",","",$1); print $1}')
  passes=1; [ "$phase" = append ] && passes=2
  echo "$WL chunk=$CHUNK $phase: $(echo "$instr $passes" | awk "{printf \"%.1f\", \$1 / (12288 * \$2)}") instructions per sample ($fn, inclusive)"
done
rm -f "$out"
