#!/bin/sh
# make msan: the suite and the fuzz corpora's replays under clang's MemorySanitizer (reads of memory never
# written). MSan needs every object instrumented, and Debian's libcriterion and libroaring are not: the suite
# runs through tests/portable (the same tests, a runner of our own) without libroaring's comparisons, as
# scripts/check-cross.sh does. Built without the x86 kernels (TSC_NO_X86_KERNELS): MSan does not follow the
# stores of their intrinsics and reports their output as unwritten; their scalar twins, which the suite holds
# them to elsewhere, are what it checks. Not selected: cli_oom/*, whose shim the sanitizer's own malloc hides.
set -eu
cd "$(dirname "$0")/.."
BUILD=build/msan
MSAN="-O1 -g -fsanitize=memory -fsanitize-memory-track-origins -fno-omit-frame-pointer -DTSC_NO_X86_KERNELS"
export MSAN_OPTIONS=halt_on_error=1

echo "== msan: library and CLI, clang -Werror"
make --no-print-directory -j2 BUILD=$BUILD CC=clang WERROR=-Werror CFLAGS="$MSAN" LDFLAGS=-fsanitize=memory \
  $BUILD/libtschunk.a $BUILD/tschunk $BUILD/tests/sync_shim.so

echo "== msan: the suite (tests/portable runner)"
# shellcheck disable=SC2086
clang -std=c11 -D_POSIX_C_SOURCE=200809L -DTSCHUNK_TESTS_NO_ROARING $MSAN -Wall -Wextra \
  -Wno-missing-field-initializers -Werror -Itests/portable -Iinclude -Ilib \
  $(ls tests/test_*.c | grep -v test_roaring.c) tests/portable/runner.c $BUILD/libtschunk.a -lm \
  -o $BUILD/tests/run_tests
TSCHUNK_REPO="$PWD" TSCHUNK_CLI="$PWD/$BUILD/tschunk" $BUILD/tests/run_tests --jobs 2 --timeout 1800 \
  --skip 'cli_oom/*' > $BUILD/tests/run.log 2>&1 || { grep -v '^PASS' $BUILD/tests/run.log; exit 1; }
tail -1 $BUILD/tests/run.log

echo "== msan: fuzz corpora replayed"
mkdir -p $BUILD/replay
for src in fuzz/fuzz_*.c; do
  t=$(basename "$src" .c)
  [ "$t" = fuzz_roaring_check ] && continue # holds blobs against libroaring, not instrumented
  # shellcheck disable=SC2086
  clang -std=c11 $MSAN -Werror -Iinclude -Ilib "$src" fuzz/standalone_main.c $BUILD/libtschunk.a -lm \
    -o $BUILD/replay/"$t"
  $BUILD/replay/"$t" fuzz/corpus/"$t" | tail -1
done
echo "msan ok"
