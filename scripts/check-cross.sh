#!/bin/sh
# make check-bigendian / check-arm64 / check-i386: tschunk on another CPU. The library, the CLI, the Criterion
# suite and the fuzz corpora's replays are built with Debian's cross compiler for s390x (big-endian) or arm64
# (char unsigned, its C library's own maths, no x86 kernels) and run under qemu-user, or with gcc -m32 for
# 32-bit x86 and run natively (under qemu-user where the kernel runs no 32-bit program); then that CLI's files
# are compared byte for byte with the native CLI's, and each CLI reads the other's. The suite runs through
# tests/portable: Debian has no libcriterion for s390x, and the other two's would need a foreign architecture
# in dpkg.
#
#   scripts/check-cross.sh s390x|arm64|i386
#
# Every format is little-endian whatever the host (README "Chunk format v1", "Segment format v3"), so both
# builds must write the same bytes. One difference is allowed and not compared: the values of quantiles under
# the cubic mapping come from the C library's cbrt, which s390x's glibc rounds differently in the last bits
# (up to 4 ulps seen on the shared datasets); their bins, counts and encoded bytes are the same.
#
# Binaries are linked statically: Debian 12's qemu-user 7.2 runs no dynamically linked s390x program (even
# a hello world aborts in the loader), so tests that preload a shim into the CLI (LD_PRELOAD) cannot run, and
# qemu-user reports a failed exec in a spawned child as the child's exit 127, not as posix_spawn's error. The
# tests that depend on those are not selected (SKIPS, below); so are the test file and the fuzzer that hold the
# bitmaps against libroaring (not built for those targets here).
#
# The shared datasets (../shared/datasets: Elf's and NAB's CSV files), when present, are compared too, unless
# CROSS_DATASETS=repo (CI: about a minute less); the repo's demo dataset always.
set -eu
cd "$(dirname "$0")/.."
# CROSS: the compiler and its target flags; LINK: static under emulation (above); QEMU: empty to run natively.
SKIPS="cli_oom/* cli/outputs_are_synced_with_their_directory cli/interrupted_runs_leave_no_temporary_file
cli/gzipd_csv_reads_as_the_csv_it_holds"
LINK=-static
case "${1:-}" in
  s390x | arm64)
    TRIPLET=$([ "$1" = s390x ] && echo s390x-linux-gnu || echo aarch64-linux-gnu)
    sh scripts/deps.sh gcc-$TRIPLET libc6-dev-$1-cross qemu-user
    CROSS=$TRIPLET-gcc
    QEMU=$(command -v qemu-${TRIPLET%%-*}) ;;
  i386) # 32-bit x86: SSE2 doubles (x87's excess precision stops the build); natively, the shims preloaded, where
    # the kernel runs 32-bit programs, else under qemu-user as above (a kernel may leave IA32 emulation out)
    sh scripts/deps.sh gcc-multilib
    CROSS="gcc -m32 -msse2 -mfpmath=sse -D_FILE_OFFSET_BITS=64"
    probe=$(mktemp -d)
    printf 'int main(void) { return 0; }\n' > "$probe/p.c"
    if $CROSS "$probe/p.c" -o "$probe/p" && "$probe/p" 2> /dev/null; then
      QEMU="" LINK="" SKIPS=""
    else
      echo "== i386: this kernel runs no 32-bit x86 program: under qemu-user, linked statically"
      sh scripts/deps.sh qemu-user
      QEMU=$(command -v qemu-i386)
    fi
    rm -rf "$probe" ;;
  *) echo "usage: $0 s390x|arm64|i386" >&2; exit 2 ;;
esac
ARCH=$1
BUILD=build/$ARCH
NATIVE=$PWD/build/release/tschunk

echo "== $ARCH: library and CLI, -Werror"
make --no-print-directory -j2 BUILD=$BUILD CC="$CROSS" WERROR=-Werror LDFLAGS="$LINK" $BUILD/libtschunk.a \
  $BUILD/tschunk
[ -x "$NATIVE" ] || make --no-print-directory -j2 all
CLI=$PWD/$BUILD/tschunk
if [ -n "$QEMU" ]; then
  CLI=$PWD/$BUILD/tschunk-qemu
  printf '#!/bin/sh\nexec %s %s "$@"\n' "$QEMU" "$PWD/$BUILD/tschunk" > "$CLI"
  chmod +x "$CLI"
fi

echo "== $ARCH: the suite (tests/portable runner, without libroaring's tests; not selected: ${SKIPS:-none})"
mkdir -p $BUILD/tests
# -Wno-format-truncation: the cross compiler inlines the dataset loader's path copies (bench/workloads.h) where
# the native one does not, and cannot see the paths' bounds there.
$CROSS -std=c11 -D_POSIX_C_SOURCE=200809L -DTSCHUNK_TESTS_NO_ROARING -O2 -ffp-contract=off $LINK \
  -Wall -Wextra -Wno-missing-field-initializers -Wno-format-truncation -Werror -Itests/portable -Iinclude -Ilib \
  $(ls tests/test_*.c | grep -v test_roaring.c) tests/portable/runner.c $BUILD/libtschunk.a -lm \
  -o $BUILD/tests/run_tests
if [ -z "$LINK" ]; then # a dynamic CLI: the shims the CLI's tests preload, beside run_tests
  for shim in oom_shim sync_shim; do $CROSS -std=c11 -O2 -fPIC -shared tests/$shim.c -ldl -o $BUILD/tests/$shim.so; done
fi
skip_args=""
set -f # the patterns are the runner's, not the shell's
for s in $SKIPS; do skip_args="$skip_args --skip $s"; done
# shellcheck disable=SC2086
TSCHUNK_REPO="$PWD" TSCHUNK_CLI="$CLI" $QEMU $BUILD/tests/run_tests --jobs 2 --timeout 1800 $skip_args \
  > $BUILD/tests/run.log 2>&1 || { grep -v '^PASS' $BUILD/tests/run.log; exit 1; }
set +f
tail -1 $BUILD/tests/run.log

echo "== $ARCH: fuzz corpora replayed"
mkdir -p $BUILD/replay
for src in fuzz/fuzz_*.c; do
  t=$(basename "$src" .c)
  [ "$t" = fuzz_roaring_check ] && continue
  $CROSS -std=c11 -O2 -ffp-contract=off $LINK -Werror -Iinclude -Ilib "$src" fuzz/standalone_main.c \
    $BUILD/libtschunk.a -lm -o $BUILD/replay/"$t"
  $QEMU $BUILD/replay/"$t" fuzz/corpus/"$t" | tail -1
done

echo "== $ARCH against $(uname -m): the same bytes written, the same answers read"
work=$BUILD/compare
rm -rf $work
mkdir -p $work
# 32-bit x86 glibc's exp runs on the x87 unit: quantile values (exp of a bin's index, under the logarithmic
# mapping too) an ulp away from x86-64's, so there they are left out; counts, min, max, sum and bytes are not.
VALUES=time_us
[ "$ARCH" = i386 ] && VALUES="time_us|value"
strip_timings() { sed -E 's/"(decode_ns_per_sample|'"$VALUES"')": [0-9.e+-]+//g'; }
files=0
compare_dataset() {
  name=$(basename "$1" | sed 's/\..*//')
  for mode in tsc2 gorilla summary cubic prom; do
    case $mode in
      tsc2) args="compress $1 --samples-per-chunk 120" ;;
      gorilla) args="compress $1 --codec gorilla" ;;
      summary) args="compress $1 --summary --mapping logarithmic --samples-per-chunk 120" ;;
      cubic) args="compress $1 --summary --mapping cubic" ;;
      prom) args="export-prom $1" ;;
    esac
    $NATIVE $args -o $work/"$name.$mode.le" > /dev/null
    $CLI $args -o $work/"$name.$mode.be" > /dev/null
    cmp $work/"$name.$mode.le" $work/"$name.$mode.be"
    for reader in "decompress - -o - --bits" "verify -" "stats - --json" "ls - --json" "quantiles - --all --json"; do
      [ "$mode" = prom ] && [ "${reader%% *}" = ls ] && continue
      # quantiles: from the logarithmic summaries only (without summaries, samples go into a cubic sketch)
      [ "$mode" != summary ] && [ "${reader%% *}" = quantiles ] && continue
      for side in le be; do
        cmd=$(echo "$reader" | sed "s|-|$work/$name.$mode.$side|")
        $NATIVE $cmd 2>&1 | strip_timings > $work/native.out
        $CLI $cmd 2>&1 | strip_timings > $work/cross.out
        if ! cmp -s $work/native.out $work/cross.out; then
          echo "differ: $cmd"
          diff $work/native.out $work/cross.out | head
          exit 1
        fi
      done
    done
    files=$((files + 1))
  done
}
compare_dataset tests/data/nab_ambient_temperature_system_failure.csv.gz
if [ "${CROSS_DATASETS:-all}" = repo ]; then
  echo "(CROSS_DATASETS=repo: the repo's dataset only)"
elif [ -d ../shared/datasets ]; then
  for f in ../shared/datasets/elf/*.csv.gz ../shared/datasets/nab/*.csv.gz; do compare_dataset "$f"; done
else
  echo "(../shared/datasets absent: the repo's dataset only)"
fi
echo "$files files written alike; each read alike by both CLIs (decompress --bits, verify, stats, ls, quantiles)"
echo "check-cross $ARCH ok"
