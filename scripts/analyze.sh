#!/bin/sh
# Static analysis of the library and the CLI: clang's analyzer and gcc's -fanalyzer, file by file.
# Not a gate (neither is free of false positives on SIMD code); run it after a change and read what is new.
# Known false positives (0.29.1): the SPLIT sort's by_low (filled by a counting sort, lib/codec2/simd.c), the lanes'
# windows (filled word by word, lib/common/lanes*.h), unpack_one's shift (never 64, lib/codec2/pack.c), a header
# checked to hold 8 bytes (tools/file.c), first_samples' values (set by the reader in another file when it returns
# 1 or 2, lib/chunk/header.c), file_order's array and a series name freed with its table
# (tools/segment_cmd.c), argv entries and names the CLI's dispatcher checked (tools/). Since 0.57.2: the block
# summary's copy into dst (a NULL dst has capacity 0, refused first: lib/sketch/summary.c), import_prom_to's result
# (set whenever it returns 0) and decode_read_chunk's info (read by its callers: tools/segment_cmd.c), merge's arrays
# (not used once an allocation failed: tools/tschunk.c). Four minutes on the VM.
# usage: scripts/analyze.sh [clang|gcc]...   (both by default)
set -u
cd "$(dirname "$0")/.."
tools=${*:-clang gcc}
files=$(find lib tools -name '*.c' | sort)
for t in $tools; do
  echo "== $t"
  for f in $files; do
    case $t in
      clang) clang-14 --analyze -std=c11 -Iinclude -Ilib -Itools -D_GNU_SOURCE "$f" -o /dev/null 2>&1 ;;
      gcc) gcc -std=c11 -O1 -fanalyzer -fdiagnostics-plain-output -Iinclude -Ilib -Itools -D_GNU_SOURCE -c "$f" \
             -o /dev/null 2>&1 ;;
    esac
  done | grep -E 'warning:' | sort -u
done
