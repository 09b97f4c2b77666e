#!/bin/sh
# Instructions per push / per decoded sample under callgrind (stable on a noisy machine).
# usage: scripts/instr-per-op.sh BENCH WORKLOAD CHUNK [tschunk|prom]
set -eu
BENCH=$1; WL=$2; CHUNK=$3; CODEC=${4:-tschunk}
out=$(mktemp)
prefix=tschunk_; [ "$CODEC" = prom ] && prefix=tschunk_prom_
for phase in ${PHASES:-append many iter batch chunks}; do
  valgrind --tool=callgrind --callgrind-out-file="$out" "$BENCH" --quick --reps 1 --only "$WL" --chunk "$CHUNK" \
    --codec "$CODEC" --phase $phase >/dev/null 2>&1
  extra=
  case $phase in
    append) fn="${prefix}append_bits"; extra="${prefix}encoder_finish" ;; # codec 2 encodes groups at finish too
    many) fn="${prefix}append_many"; extra="${prefix}encoder_finish" ;;
    iter) fn="${prefix}iter_next_bits" ;;
    batch) fn="${prefix}decode" ;;
    chunks) fn="${prefix}decode_chunks" ;;
  esac
  # Inclusive cost of the API function(s); append runs twice (warm-up + 1 repetition), the others once
  # ("many"'s warm-up is a plain append: its finish, the same work, is half of finish's count).
  instr=0
  for f in $fn $extra; do
    # The function's own line is its inclusive total, the largest of its lines (inlined parts are shares).
    c=$(callgrind_annotate --inclusive=yes "$out" 2>/dev/null | grep -E "[^a-z_]$f( |$)" \
        | awk '{gsub(",","",$1); if ($1 + 0 > max) max = $1 + 0} END {print max + 0}')
    [ "$phase" = many ] && [ "$f" = "$extra" ] && c=$(( ${c:-0} / 2 ))
    instr=$((instr + ${c:-0}))
  done
  passes=1; [ "$phase" = append ] && passes=2
  echo "$WL $CODEC chunk=$CHUNK $phase: $(echo "$instr $passes" | awk '{printf "%.1f", $1 / (12288 * $2)}') instructions per sample ($fn${extra:+ + $extra})"
done
rm -f "$out"
