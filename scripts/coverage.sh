#!/bin/sh
# make coverage: the lines of lib/ and tools/ that the Criterion suite runs (gcc --coverage, -O0 so that each line
# keeps its own counts, build/cov), file by file, least covered first, then the totals; `scripts/coverage.sh --lines
# FILE...` also lists each file's lines never run. Not a gate. The CLI's out-of-memory tests (cli_oom) are left out:
# they refuse every allocation after the n-th, gcov's own at exit included, so each run would end in a crash that is
# the instrumentation's, not the CLI's. A function compiled more than once (inlined into several callers, or built for
# several CPUs) has its copies' lines merged by gcov: a line counts as run when any copy ran it. A process that a
# signal ends writes no counts (gcov writes them at exit): the CLI's signal handler counts as never run, though
# tests/test_cli.c's signal tests run it.
#   usage: scripts/coverage.sh [--lines FILE...]   (from make coverage, which builds build/cov first)
set -eu
cd "$(dirname "$0")/.."
B=build/cov
out=$B/gcov
rm -rf "$out"
mkdir -p "$out"
TSCHUNK_REPO=$PWD TSCHUNK_CLI=$PWD/$B/tschunk $B/tests/run_tests -j2 --filter '!(cli_oom)/*' >"$out/tests.log" 2>&1 ||
  { tail -20 "$out/tests.log"; echo "coverage: the suite failed (whole log: $out/tests.log)"; exit 1; }
for f in lib/*/*.c tools/*.c; do
  case $f in
    tools/*) obj=$B/tschunk-$(basename "$f" .c).gcno ;; # the CLI's objects are named after the program
    *) obj=$B/${f%.c}.gcno ;;
  esac
  [ -f "$obj" ] || continue
  # gcov writes its .gcov files into the working directory, one per source named by its path (-p): moved to $out
  gcov -p -o "$obj" "$f" 2>/dev/null |
    awk -v want="$f" '/^File /{cur = substr($2, 2, length($2) - 2)}
                      /^Lines executed:/ && cur == want {split($2, a, ":"); print a[2], $4, want; cur = ""}'
  mv ./*.gcov "$out"/ 2>/dev/null || true
done | sed 's/%//' | sort -n | awk '
  {printf "%7.2f%% of %5d lines  %s\n", $1, $2, $3; run = $1 * $2 / 100; all[$3 ~ /^lib/] += $2; ran[$3 ~ /^lib/] += run}
  END {printf "lib/: %.2f%% of %d lines run; tools/: %.2f%% of %d\n", 100 * ran[1] / all[1], all[1],
       100 * ran[0] / all[0], all[0]}'
if [ "${1:-}" = --lines ]; then
  shift
  for f in "$@"; do
    g=$out/$(echo "$f" | sed 's|/|#|g').gcov
    echo "== $f: lines never run"
    grep -E '^ +#####:' "$g" | sort -t: -k2 -n -u | cut -c1-140 || true
  done
fi
