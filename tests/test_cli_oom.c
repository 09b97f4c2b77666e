/*
 * The CLI out of memory: each command run again and again with its allocations refused from the N-th on
 * (tests/oom_shim.c, preloaded), for every N up to the allocations a normal run makes. Each run must end
 * with exit status 1 and a message, or do exactly what a normal run does; never a crash, a sanitizer's
 * report (leaks included, in the ASan build), or a file changed, half-written or left behind by a failure.
 */
#include <dirent.h>
#include <unistd.h>

#include "cli_util.h"
#include "test_util.h"

static char workdir[256];

static void make_workdir(void) { test_dir_make(workdir, sizeof workdir, "oom"); }
static void cleanup_workdir(void) { test_dir_remove(workdir); }

TestSuite(cli_oom, .init = make_workdir, .fini = cleanup_workdir, .timeout = 600);

#define REPORT "oom.report" /* the shim's, in the work directory; not part of a snapshot */

static const char *shim(void)
{
    static char path[4096];
    return shim_path("oom_shim.so", path, sizeof path);
}

typedef struct {
    unsigned long made, refused; /* allocations the run asked for, and of them refused */
    size_t largest;              /* bytes: the largest allocation granted */
} oom_report;

/* Run the shell line `setup` in the work directory, $T the CLI (not starved). */
static void run_setup(const char *setup)
{
    char cmd[2048], out[4096];
    snprintf(cmd, sizeof cmd, "cd '%s' && T='%s' && { %s; } 2>&1", workdir, cli(), setup);
    cr_assert_eq(run_line(out, sizeof out, cmd), 0, "setup %s: %s", setup, out);
}

/* Run `tschunk ARGS` with allocations from the (after + 1)-th refused (after < 0: none). Output (stdout and
 * stderr) in *out. */
static int run_starved(long after, const char *args, char *out, size_t out_size, oom_report *r)
{
    char cmd[8192], limit[64] = "";
    if (after >= 0) snprintf(limit, sizeof limit, "TSCHUNK_OOM_AFTER=%ld ", after);
    snprintf(cmd, sizeof cmd,
             "cd '%s' && rm -f " REPORT " && %sTSCHUNK_OOM_REPORT=" REPORT
             " ASAN_OPTIONS=\"${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0\" LD_PRELOAD='%s' '%s' %s 2>&1",
             workdir, limit, shim(), cli(), args);
    int rc = run_line(out, out_size, cmd);
    char path[512];
    snprintf(path, sizeof path, "%s/" REPORT, workdir);
    FILE *f = fopen(path, "r");
    cr_assert(f, "%s, allocations from %ld refused: no allocation report, the run did not reach exit (status %d): %s",
              args, after + 1, rc, out);
    cr_assert_eq(fscanf(f, "%lu %lu %zu", &r->made, &r->refused, &r->largest), 3);
    fclose(f);
    return rc;
}

/* Every file of the work directory, by name, size and FNV-1a hash of its bytes: "name size hash\n" sorted. */
static void snapshot(char *out, size_t cap)
{
    struct dirent **names;
    int n = scandir(workdir, &names, NULL, alphasort);
    cr_assert(n >= 0);
    size_t at = 0;
    out[0] = 0;
    for (int i = 0; i < n; i++) {
        if (names[i]->d_name[0] != '.' && strcmp(names[i]->d_name, REPORT)) {
            char path[512];
            snprintf(path, sizeof path, "%s/%s", workdir, names[i]->d_name);
            test_file file = test_read_file(path);
            uint64_t hash = UINT64_C(14695981039346656037);
            for (size_t k = 0; k < file.size; k++) hash = (hash ^ file.data[k]) * UINT64_C(1099511628211);
            at += (size_t)snprintf(out + at, cap - at, "%s %zu %016llx\n", names[i]->d_name, file.size,
                                   (unsigned long long)hash);
            cr_assert(at < cap);
            free(file.data);
        }
        free(names[i]);
    }
    free(names);
}

/* The files a command starts from: a two-series CSV of 600 samples, its segment with summaries, one series
 * alone, values for a sketch. */
static void make_inputs(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/in.csv", workdir);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fputs("series,timestamp,value\n", f);
    for (int i = 0; i < 300; i++) {
        fprintf(f, "cpu,%d,%.2f\n", 1000 + 15 * i, 20 + (i * 37 % 101) / 10.0);
        fprintf(f, "mem,%d,%d\n", 1000 + 15 * i, 4096 + i);
    }
    fclose(f);
    snprintf(path, sizeof path, "%s/one.csv", workdir);
    f = fopen(path, "w");
    cr_assert(f);
    for (int i = 0; i < 300; i++) fprintf(f, "%d,%.2f\n", 1000 + 15 * i, 20 + (i * 37 % 101) / 10.0);
    fclose(f);
    snprintf(path, sizeof path, "%s/values.txt", workdir);
    f = fopen(path, "w");
    cr_assert(f);
    for (int i = 1; i <= 50; i++) fprintf(f, "%d.5,%d\n", i, 1 + i % 3);
    fclose(f);
    run_setup("\"$T\" compress in.csv -o seg.tseg --summary --samples-per-chunk 100 >/dev/null");
}

/*
 * Run `args` once normally, then with its allocations refused from the first, the second, ... up to the
 * last the normal run made. setup (a shell line, not starved) runs before each: it puts back what the
 * command changes. same_output: the normal run's output has no timings, so a run that succeeds must print it.
 * A command may succeed at every refusal (verify of a mapped file needs no memory but stdio's buffers).
 */
static void starve(const char *setup, const char *args, int same_output)
{
    static char want_out[1 << 16], got_out[1 << 16], before[8192], want_files[8192], got_files[8192];
    oom_report normal, r;
    run_setup(setup);
    int rc = run_starved(-1, args, want_out, sizeof want_out, &normal);
    cr_assert_eq(rc, 0, "%s: %s", args, want_out);
    cr_assert(normal.made > 0 && normal.refused == 0, "%s: the shim saw no allocation", args);
    snapshot(want_files, sizeof want_files);
    for (unsigned long after = 0; after < normal.made; after++) {
        run_setup(setup);
        snapshot(before, sizeof before);
        rc = run_starved((long)after, args, got_out, sizeof got_out, &r);
        snapshot(got_files, sizeof got_files);
        cr_assert(r.refused > 0, "%s: allocation %lu of %lu not made again", args, after + 1, normal.made);
        if (rc == 0) {
            cr_assert_str_eq(got_files, want_files, "%s, allocations from %lu refused: other files", args, after + 1);
            if (same_output)
                cr_assert_str_eq(got_out, want_out, "%s, allocations from %lu refused", args, after + 1);
            continue;
        }
        cr_assert_eq(rc, 1, "%s, allocations from %lu refused: status %d: %s", args, after + 1, rc, got_out);
        cr_assert(strstr(got_out, "tschunk"), "%s, allocations from %lu refused: no message: %s", args, after + 1,
                  got_out);
        cr_assert_str_eq(got_files, before, "%s, allocations from %lu refused: files changed: %s", args, after + 1,
                         got_out);
    }
}

/* One command to starve: the shell line before each run, its arguments, and whether a run that succeeds prints what
 * the normal run printed. */
typedef struct {
    const char *setup, *args;
    int same_output;
} starved;

static void starve_each(const starved *runs, size_t n)
{
    make_inputs();
    for (size_t i = 0; i < n; i++) starve(runs[i].setup, runs[i].args, runs[i].same_output);
}

Test(cli_oom, compress_and_the_segment_readers)
{
    static const starved runs[] = {
        {"rm -f out.tseg", "compress in.csv -o out.tseg --summary --samples-per-chunk 100", 0},
        {"printf 'ts,a,b\\n1,2,3\\n2,3,4\\n' > wide.csv && rm -f w.tseg", "compress wide.csv -o w.tseg --wide", 0},
        {"true", "ls seg.tseg", 1},
        {"true", "verify seg.tseg", 1},
        {"true", "cat seg.tseg cpu --from 1500 --to 3000", 1},
        /* time going back twice: chunks over each other, merged */
        {"printf 'a,1000,1\\na,2000,2\\na,1500,3\\na,3000,4\\na,1200,5\\n' > o.csv && rm -f o.tseg && "
         "\"$T\" compress o.csv -o o.tseg >/dev/null",
         "cat o.tseg", 1},
        {"rm -f back.csv", "decompress seg.tseg -o back.csv --iso", 1},
        {"true", "quantiles seg.tseg --all --q 0.5,0.99 --exact --json", 0},
        {"true", "stats seg.tseg --json", 0},
    };
    starve_each(runs, sizeof runs / sizeof *runs);
}

/* 0.57.6: cat and decompress hold a chunk (or a group of chunks over each other) at a time, never a whole series: no
 * allocation of a 400,000-sample series near its 9.6 MB of samples (cat sorted them all at once before). */
Test(cli_oom, cat_and_decompress_hold_no_whole_series)
{
    run_setup("awk 'BEGIN { for (i = 0; i < 400000; i++) printf \"%d,%d\\n\", 1000 * i, i % 977 }' > long.csv && "
              "\"$T\" compress long.csv -o long.tseg --samples-per-chunk 4000 >/dev/null");
    const char *commands[] = {"cat long.tseg > /dev/null", "decompress long.tseg -o - > /dev/null"};
    for (size_t k = 0; k < sizeof commands / sizeof commands[0]; k++) {
        char out[4096];
        oom_report r;
        cr_assert_eq(run_starved(-1, commands[k], out, sizeof out, &r), 0, "%s: %s", commands[k], out);
        cr_assert_lt(r.largest, (size_t)256 << 10, "%s: an allocation of %zu bytes", commands[k], r.largest);
    }
}

Test(cli_oom, commands_that_rewrite_a_segment)
{
    static const starved runs[] = {
        {"cp seg.tseg d.tseg", "delete d.tseg cpu --from 2000 --to 3000", 1},
        {"cp seg.tseg d.tseg && \"$T\" delete d.tseg mem --from 1000 --to 2000 >/dev/null", "compact d.tseg", 1},
        {"cp seg.tseg a.tseg && rm -f m.tseg", "merge seg.tseg a.tseg -o m.tseg", 1},
        {"rm -f m.tseg", "merge seg.tseg -o m.tseg --samples-per-chunk 70 --codec gorilla", 1},
    };
    starve_each(runs, sizeof runs / sizeof *runs);
}

Test(cli_oom, prometheus_chunks_and_sketches)
{
    static const starved runs[] = {
        {"rm -f p.prom", "export-prom one.csv -o p.prom", 0},
        {"rm -f p.prom n.tseg && \"$T\" export-prom one.csv -o p.prom >/dev/null", "import-prom p.prom -o n.tseg", 0},
        {"rm -f v.tseg", "compress one.csv -o v.tseg --verify --codec gorilla", 0},
        {"rm -f q.prom", "export-prom one.csv -o q.prom --verify", 0},
        {"true", "verify p.prom", 1},
        {"true", "stats p.prom --json", 0},
        {"true", "sketch encode --mapping logarithmic < values.txt", 1},
        {"true", "sketch decode 02fd4a815abf52f03f00000000000000000503000244022802 --q 0.5,0.99 --json", 1},
    };
    starve_each(runs, sizeof runs / sizeof *runs);
}
