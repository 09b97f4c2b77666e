/* The CLI contract: spellings, input forms, exact round trip, errors, atomic output. */
#include <limits.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_util.h"
#include "test_util.h"

static char workdir[256];

static void make_workdir(void) { test_dir_make(workdir, sizeof workdir, "cli"); }
static void cleanup_workdir(void) { test_dir_remove(workdir); }

/* Run `tschunk ARGS` in the work directory: stdout and stderr in *out. */
static int run(char *out, size_t out_size, const char *args)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "cd '%s' && '%s' %s 2>&1", workdir, cli(), args);
    return run_line(out, out_size, cmd);
}

/* Run a shell script in the work directory with $T the CLI; stderr (and stdout unless redirected) in *out. */
static int run_script(char *out, size_t out_size, const char *script)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "cd '%s' && T='%s' && { %s; } 2>&1", workdir, cli(), script);
    return run_line(out, out_size, cmd);
}

static void write_file(const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", workdir, name);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fputs(text, f);
    fclose(f);
}

static void write_bytes(const char *name, const void *bytes, size_t size)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", workdir, name);
    test_write_file(path, bytes, size);
}

/* A uvarint at p + *at (inside the file: the tests read files they wrote), *at moved past it. */
static uint64_t take_test_uvarint(const uint8_t *p, size_t *at)
{
    uint64_t v = 0;
    for (unsigned shift = 0;; shift += 7) {
        v |= (uint64_t)(p[*at] & 0x7f) << shift;
        if (!(p[(*at)++] & 0x80)) return v;
    }
}

static int exists(const char *name)
{
    char path[512];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", workdir, name);
    return stat(path, &st) == 0;
}

static char *read_file(const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", workdir, name);
    FILE *f = fopen(path, "r");
    cr_assert(f, "cannot read %s", path);
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

TestSuite(cli, .init = make_workdir, .fini = cleanup_workdir);

Test(cli, round_trip_of_every_input_form)
{
    write_file("in.csv", "timestamp,value\n"
                         "2024-01-01 00:00:00,1.5\n"
                         "2024-01-01T00:00:15.250Z,NaN\n"
                         "2024-01-01 00:00:30+01:00,-Inf\n"
                         "1704067245000,0x7ff0000000000002\n"
                         "1704067245000,\n"           /* empty value: skipped, counted */
                         "1704067260000,\"\"\n"       /* empty value in quotes */
                         "1704067260000,-0\n"
                         "1704067200000,42\n");       /* earlier: starts a new chunk */
    char out[4096];
    cr_assert_eq(run(out, sizeof out, "compress in.csv -o out.tsc --samples-per-chunk 3"), 0, "%s", out);
    cr_assert(strstr(out, "2 empty values skipped"), "%s", out);
    cr_assert_eq(run(out, sizeof out, "decompress out.tsc -o back.csv --bits"), 0, "%s", out);
    cr_assert_str_eq(read_file("back.csv"), "timestamp,value\n"
                                            "1704067200000,0x3ff8000000000000\n"
                                            "1704067215250,0x7ff8000000000000\n"
                                            "1704063630000,0xfff0000000000000\n"
                                            "1704067245000,0x7ff0000000000002\n"
                                            "1704067260000,0x8000000000000000\n"
                                            "1704067200000,0x4045000000000000\n");
    cr_assert_eq(run(out, sizeof out, "decompress out.tsc -o - --iso"), 0);
    cr_assert(strstr(out, "2024-01-01T00:00:15.250Z,NaN\n"), "%s", out);
    cr_assert(strstr(out, "2024-01-01T00:01:00.000Z,-0\n"), "%s", out);
}

Test(cli, stats_json_keys)
{
    write_file("in.csv", "1\n2\n2.5\n\"\"\n3\n");
    char out[4096];
    cr_assert_eq(run(out, sizeof out, "compress in.csv -o v.tsc"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "stats v.tsc --json"), 0, "%s", out);
    const char *keys[] = {"\"samples\": 4,", "\"chunks\": 1,", "\"bytes\": ", "\"bits_per_sample\": ",
                          "\"bits_per_timestamp\": ", "\"bits_per_value\": "};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) cr_assert(strstr(out, keys[i]), "no %s in %s", keys[i], out);
    cr_assert_eq(run(out, sizeof out, "decompress v.tsc -o - --bits"), 0);
    cr_assert(strstr(out, "\n0,0x3ff0000000000000\n1,0x4000000000000000\n2,0x4004000000000000\n4,"), "%s", out);
}

/* A JSON number after "key": in text (the stats object). */
static double json_number(const char *text, const char *key)
{
    char quoted[64];
    snprintf(quoted, sizeof quoted, "\"%s\": ", key);
    const char *at = strstr(text, quoted);
    cr_assert(at, "no %s in %s", key, text);
    return strtod(at + strlen(quoted), NULL);
}

/* The plain stats a newcomer reads (the demo prints them) say what --json says, for a segment of each codec and for
 * a file of Prometheus chunks, and name the codec; verify and ls read the Prometheus file too. */
Test(cli, plain_stats_agree_with_json)
{
    char path[512];
    snprintf(path, sizeof path, "%s/in.csv", workdir);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    for (int i = 0; i < 1000; i++) fprintf(f, "%lld,%d.25\n", 1700000000000LL + i * 15000LL + i % 7, i % 37);
    fclose(f);
    char out[8192], json[4096];
    cr_assert_eq(run(out, sizeof out, "compress in.csv -o s.tsc --samples-per-chunk 300"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "compress in.csv -o g.tsc --codec gorilla"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "export-prom in.csv -o p.bin"), 0, "%s", out);
    const char *files[] = {"s.tsc", "g.tsc", "p.bin"}; /* the Prometheus file last: its JSON is read after */
    const char *codecs[] = {"\ncodec            tsc2 (codec 2:", "\ncodec            gorilla (tschunk chunk format v1",
                            "\ncodec            Prometheus XOR chunks"};
    for (int k = 0; k < 3; k++) {
        char args[64];
        snprintf(args, sizeof args, "stats %s --json", files[k]);
        cr_assert_eq(run(json, sizeof json, args), 0, "%s", json);
        snprintf(args, sizeof args, "stats %s", files[k]);
        cr_assert_eq(run(out, sizeof out, args), 0, "%s", out);
        cr_assert(strstr(out, codecs[k]), "%s: no\n%s\nin\n%s", files[k], codecs[k], out);
        char want[256];
        snprintf(want, sizeof want, "\nsamples          %.0f\nchunks           %.0f\nbytes            %.0f (",
                 json_number(json, "samples"), json_number(json, "chunks"), json_number(json, "bytes"));
        cr_assert(strstr(out, want), "%s: no\n%s\nin\n%s", files[k], want, out);
        snprintf(want, sizeof want, "\nbits/sample      %.2f  (timestamps %.2f, values %.2f,",
                 json_number(json, "bits_per_sample"), json_number(json, "bits_per_timestamp"),
                 json_number(json, "bits_per_value"));
        cr_assert(strstr(out, want), "%s: no\n%s\nin\n%s", files[k], want, out);
        snprintf(want, sizeof want, "\nratio            %.2fx", json_number(json, "ratio"));
        cr_assert(strstr(out, want), "%s: no %s in %s", files[k], want, out);
        snprintf(want, sizeof want, "\nchunks alone     tschunk native: %.0f bytes; Prometheus XOR: %.0f bytes;",
                 json_number(json, "native_chunk_bytes"), json_number(json, "prom_xor_chunk_bytes"));
        cr_assert(strstr(out, want), "%s: no %s in %s", files[k], want, out);
        /* The file's own chunks, summed here: the segment's through the library, the Prometheus records' lengths. */
        snprintf(path, sizeof path, "%s/%s", workdir, files[k]);
        test_file file = test_read_file(path);
        uint64_t own = 0;
        if (k < 2) {
            tschunk_segment *seg;
            cr_assert_eq(tschunk_segment_open(&seg, file.data, file.size, 0, NULL), 0);
            tschunk_segment_info info;
            tschunk_segment_get_info(seg, &info);
            for (uint32_t i = 0; i < info.chunks; i++) {
                tschunk_segment_chunk_info c;
                cr_assert_eq(tschunk_segment_chunk(seg, i, &c), 0);
                own += c.ref.chunk_size;
            }
            tschunk_segment_close(seg);
        } else {
            for (size_t at = 0; at < file.size;) {
                uint64_t len = take_test_uvarint(file.data, &at);
                own += len;
                at += len;
            }
        }
        free(file.data);
        cr_assert_eq(json_number(json, k < 2 ? "native_chunk_bytes" : "prom_xor_chunk_bytes"), (double)own, "%s: %s",
                     files[k], json);
    }
    cr_assert_eq(json_number(json, "samples"), 1000);
    /* A Prometheus file's native size is the segment import-prom writes (0.47.1; a chunk file's before). */
    cr_assert_eq(run(out, sizeof out, "import-prom p.bin -o pi.tseg"), 0, "%s", out);
    snprintf(path, sizeof path, "%s/pi.tseg", workdir);
    struct stat imported;
    cr_assert(stat(path, &imported) == 0);
    cr_assert_eq(json_number(json, "native_bytes"), (double)imported.st_size, "%s", json);
    cr_assert_eq(run(out, sizeof out, "verify p.bin"), 0, "%s", out);
    cr_assert(strstr(out, "p.bin: ok (Prometheus XOR chunks, 9 chunks, 1000 samples)"), "%s", out);
    cr_assert_eq(run(out, sizeof out, "ls p.bin"), 0, "%s", out);
    cr_assert(strstr(out, "\np.bin\t0\t9\t1000\t1700000000000\t1700014985005\t"), "%s", out);
}

static void put_test_uvarint(FILE *f, uint64_t v)
{
    for (; v >= 0x80; v >>= 7) fputc((int)(v & 0x7f) | 0x80, f);
    fputc((int)v, f);
}

/* A chunk file as 0.1 wrote them (TSCF: "TSCF", version 1, the unit, a summary flag, 0; records of a uvarint length
 * and a chunk, with the flag then a uvarint length and a summary; an end record of 0, the samples and the chunks),
 * made here from today's chunks of both codecs: every reading command takes it, and an end record that does not
 * match is named. The CLI skips the summaries: these are three bytes each. */
static void write_old_chunk_file_with(const char *name, const wl_series *s, uint64_t end_samples, int summaries)
{
    unsigned char *a, *b;
    size_t na = encode_range_codec(s, 0, 200, TSCHUNK_CODEC_GORILLA, &a);
    size_t nb = encode_range_codec(s, 200, s->n - 200, TSCHUNK_CODEC_TSC2, &b);
    char path[512];
    snprintf(path, sizeof path, "%s/%s", workdir, name);
    FILE *f = fopen(path, "wb");
    cr_assert(f);
    fwrite(summaries ? "TSCF\x01\x02\x01\x00" : "TSCF\x01\x02\x00\x00", 1, 8, f); /* unit 2: milliseconds */
    put_test_uvarint(f, na);
    fwrite(a, 1, na, f);
    if (summaries) fwrite("\x03\x02\x00\x01", 1, 4, f);
    put_test_uvarint(f, nb);
    fwrite(b, 1, nb, f);
    if (summaries) fwrite("\x03\x02\x00\x01", 1, 4, f);
    put_test_uvarint(f, 0);
    put_test_uvarint(f, end_samples);
    put_test_uvarint(f, 2);
    fclose(f);
    free(a);
    free(b);
}

static void write_old_chunk_file(const char *name, const wl_series *s, uint64_t end_samples)
{
    write_old_chunk_file_with(name, s, end_samples, 0);
}

Test(cli, chunk_files_of_0_1_still_read)
{
    wl_series s;
    wl_synthetic(&s, WL_GAUGE_2DP, 300, 5);
    write_old_chunk_file("old.tscf", &s, s.n);
    static char out[65536];
    cr_assert_eq(run(out, sizeof out, "decompress old.tscf -o - --bits"), 0, "%s", out);
    char *line = out;
    cr_assert(!strncmp(line, "timestamp,value\n", 16), "%s", out);
    line += 16;
    for (size_t i = 0; i < s.n; i++) {
        char want[64];
        int len = snprintf(want, sizeof want, "%lld,0x%016llx\n", (long long)s.ts[i], (unsigned long long)s.bits[i]);
        cr_assert(!strncmp(line, want, (size_t)len), "sample %zu: %.40s", i, line);
        line += len;
    }
    cr_assert_eq(*line, 0);
    cr_assert_eq(run(out, sizeof out, "verify old.tscf"), 0, "%s", out);
    cr_assert(strstr(out, "old.tscf: ok (tschunk file v1, 2 chunks, 300 samples)"), "%s", out);
    cr_assert_eq(run(out, sizeof out, "ls old.tscf"), 0, "%s", out);
    char want[128];
    snprintf(want, sizeof want, "\nold.tscf\t0\t2\t300\t%lld\t%lld\t", (long long)s.ts[0], (long long)s.ts[s.n - 1]);
    cr_assert(strstr(out, want), "%s", out);
    cr_assert_eq(run(out, sizeof out, "stats old.tscf --json"), 0, "%s", out);
    cr_assert(strstr(out, "\"samples\": 300,") && strstr(out, "\"chunks\": 2,"), "%s", out);
    cr_assert_eq(run(out, sizeof out, "quantiles old.tscf --q 0.5 --exact"), 0, "%s", out);
    line = strstr(out, "\n0.5 ");
    double v, exact, rel;
    cr_assert(line && sscanf(line + 1, "%*s %lf %lf %lf", &v, &exact, &rel) == 3, "%s", out);
    cr_assert_leq(rel, 0.01, "%s", out);
    write_old_chunk_file("bad.tscf", &s, s.n - 1);
    cr_assert_neq(run(out, sizeof out, "verify bad.tscf"), 0, "%s", out);
    cr_assert(strstr(out, "end record does not match the chunks read"), "%s", out);
    /* With the summary flag each chunk's summary is stepped over (`make coverage` showed that never run). */
    static char plain[65536];
    cr_assert_eq(run(plain, sizeof plain, "decompress old.tscf -o - --bits"), 0, "%s", plain);
    write_old_chunk_file_with("summaries.tscf", &s, s.n, 1);
    cr_assert_eq(run(out, sizeof out, "decompress summaries.tscf -o - --bits"), 0, "%s", out);
    cr_assert_str_eq(out, plain);
    cr_assert_eq(run(out, sizeof out, "verify summaries.tscf"), 0, "%s", out);
    cr_assert(strstr(out, "summaries.tscf: ok (tschunk file v1, 2 chunks, 300 samples)"), "%s", out);
    wl_free(&s);
}

/* Every option with a bad value, an unknown option or command, a missing input: exit 2, a message naming what is
 * wrong, no output file. */
Test(cli, bad_options_are_named_and_write_nothing)
{
    write_file("in.csv", "1,2\n2,3\n");
    const struct {
        const char *args, *says;
    } cases[] = {
        {"compress in.csv -o x.tseg --mapping quartic", "--mapping takes cubic or logarithmic, not 'quartic'"},
        {"compress in.csv -o x.tseg --summary --alpha 1.5", "--alpha must be in (0, 1), not '1.5'"},
        {"compress in.csv -o x.tseg --samples-per-chunk 0", "--samples-per-chunk must be 1..65535, not '0'"},
        {"compress in.csv -o x.tseg --samples-per-chunk 65536", "--samples-per-chunk must be 1..65535"},
        {"compress in.csv -o x.tseg --max-chunk-bytes 5", "--max-chunk-bytes must be 32..2^30, not '5'"},
        {"compress in.csv -o x.tseg --ts-unit h", "--ts-unit takes s, ms, us or ns, not 'h'"},
        {"compress in.csv -o x.tseg --codec zstd", "unknown codec 'zstd' (known: gorilla, tsc2)"},
        {"compress --frobnicate in.csv -o x.tseg", "unknown option '--frobnicate'"},
        {"compress in.csv more -o x.tseg --samples-per-chunk 5 extra", "unexpected argument 'extra'"},
        {"compress -o x.tseg", "missing input file"},
        {"frobnicate in.csv -o x.tseg", "unknown command 'frobnicate'"},
        /* An option the command does not take is refused, not ignored (0.46.5). */
        {"compress in.csv -o x.tseg --exact", "compress does not take --exact"},
        {"compress in.csv -o x.tseg --from 0", "compress does not take --from"},
        {"decompress in.csv -o x.tseg --from 1 --to 2", "decompress does not take --from"},
        {"stats in.csv -o x.tseg", "stats does not take -o"},
        {"quantiles in.csv --bits", "quantiles does not take --bits"},
        {"cat in.csv s --exact", "cat does not take --exact"},
        {"ls in.csv --bits", "ls does not take --bits"},
        {"verify in.csv --summary", "verify does not take --summary"},
        {"delete in.csv s --from 1 --to 2 --bits", "delete does not take --bits"},
        {"compact in.csv -o x.tseg --codec gorilla", "compact does not take --codec"},
        {"export-prom in.csv -o x.tseg --summary", "export-prom does not take --summary"},
        {"import-prom in.csv -o x.tseg --wide", "import-prom does not take --wide"},
        {"merge --wide in.csv -o x.tseg", "merge does not take --wide"},
        {"merge --codec zstd in.csv -o x.tseg", "unknown codec 'zstd'"},
        {"merge -o x.tseg", "merge needs SEGMENT... and -o OUT"},
        {"merge --frobnicate in.csv -o x.tseg", "unknown option '--frobnicate'"},
        /* An option that means something only beside another (0.49.8: ignored without a word). */
        {"compress in.csv -o x.tseg --mapping logarithmic", "--mapping goes with --summary"},
        {"compress in.csv -o x.tseg --alpha 0.02", "--alpha goes with --summary"},
        {"compress in.csv -o x.tseg --summary-block 4", "--summary-block goes with --summary"},
        {"merge -o x.tseg --codec gorilla", "--codec goes with --samples-per-chunk"},
        /* An option that takes a value, given last without one (0.49.1: merge read past argv and crashed). */
        {"compress in.csv -o", "-o needs a value"},
        {"compress in.csv -o x.tseg --codec", "--codec needs a value"},
        {"quantiles in.csv --q", "--q needs a value"},
        {"cat in.csv s --from", "--from needs a value"},
        {"merge -o", "-o needs a value"},
        {"merge -o x.tseg --summary-block", "--summary-block needs a value"},
        {"merge -o x.tseg --samples-per-chunk", "--samples-per-chunk needs a value"},
        {"merge -o x.tseg --codec", "--codec needs a value"},
        {"sketch decode 02 --q", "a value is missing after --q"},
        {"sketch encode --alpha", "a value is missing after --alpha"},
    };
    char out[8192];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cr_assert_eq(run(out, sizeof out, cases[i].args), 2, "%s: %s", cases[i].args, out);
        cr_assert(strstr(out, cases[i].says), "%s: no \"%s\" in %s", cases[i].args, cases[i].says, out);
        cr_assert(!exists("x.tseg"), "%s", cases[i].args);
    }
    cr_assert_eq(run(out, sizeof out, ""), 2);
    cr_assert(strstr(out, "usage:\n  tschunk compress IN.csv -o OUT"), "%s", out);
}

/* The refusal of an option a command does not take says "tschunk help lists each command's options": it does, on
 * the command's own lines (export-prom's --max-chunk-bytes, --ts-unit and --verify, quantiles' --mapping and --alpha
 * were taken but not listed before 0.57.2); the summary options on the line that names `compress --summary`. */
Test(cli, help_lists_each_commands_options)
{
    static const struct {
        const char *lines, *options;
    } takes[] = {
        {"tschunk compress ", "-o --samples-per-chunk --max-chunk-bytes --ts-unit --codec --verify --wide"},
        {"(compress --summary", "--mapping --alpha --summary-block"},
        {"tschunk decompress ", "-o --iso --bits"},
        {"tschunk stats ", "--json"},
        {"tschunk ls ", "--iso --json"},
        {"tschunk cat ", "--from --to --bits --iso"},
        {"tschunk delete ", "--from --to"},
        {"tschunk compact ", "-o"},
        {"tschunk export-prom ", "-o --samples-per-chunk --max-chunk-bytes --ts-unit --verify"},
        {"tschunk import-prom ", "-o --codec"},
        {"tschunk quantiles ", "--all --q --from --to --exact --json --mapping --alpha"},
        {"tschunk merge ", "-o --summary-block --samples-per-chunk --codec"},
        {"tschunk sketch encode ", "--mapping --alpha --store --exact-stats --omit-mapping"},
        {"tschunk sketch decode ", "--q --json"},
    };
    char out[8192], block[2048], option[64];
    cr_assert_eq(run(out, sizeof out, "help"), 0, "%s", out);
    for (size_t i = 0; i < sizeof takes / sizeof takes[0]; i++) {
        const char *from = strstr(out, takes[i].lines);
        cr_assert(from, "help has no \"%s\": %s", takes[i].lines, out);
        /* the command's lines: its own and those indented deeper than a command's two spaces */
        const char *end = strchr(from, '\n');
        while (end && !strncmp(end + 1, "   ", 3)) end = strchr(end + 1, '\n');
        size_t len = end ? (size_t)(end - from) : strlen(from);
        cr_assert_lt(len, sizeof block);
        memcpy(block, from, len);
        block[len] = 0;
        for (const char *o = takes[i].options; *o;) {
            size_t n = strcspn(o, " ");
            snprintf(option, sizeof option, "%.*s ", (int)n, o);
            int listed = strstr(block, option) || (option[n] = ']', strstr(block, option));
            cr_assert(listed, "help's \"%s\" lines do not list %.*s:\n%s", takes[i].lines, (int)n, o, block);
            o += n + (o[n] == ' ');
        }
    }
}

/* A table whose shape changes, and --wide tables with a nameless column, a short row or a bad timestamp: the line
 * and what is wrong with it, a non-zero exit, nothing written. */
Test(cli, table_shape_errors_name_their_line)
{
    const struct {
        const char *text, *options, *says;
    } cases[] = {
        {"1,2\n3,4\n5,6,7\n", "", "line 3: 3 columns, the file started with 2"},
        {"timestamp,a,\n1,2,3\n", "--wide", "line 1: column 3 has no name"},
        {"timestamp,a,b\n1,2,3\n4,5\n", "--wide", "line 3: 2 columns, the header has 3"},
        {"timestamp,a,b\nxx,2,3\n", "--wide", "line 2: bad timestamp 'xx'"},
    };
    char out[4096], args[128];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        write_file("t.csv", cases[i].text);
        snprintf(args, sizeof args, "compress t.csv -o t.tseg %s", cases[i].options);
        cr_assert_neq(run(out, sizeof out, args), 0, "%s", cases[i].text);
        cr_assert(strstr(out, cases[i].says), "no \"%s\" in %s", cases[i].says, out);
        cr_assert(!exists("t.tseg"), "%s", cases[i].text);
    }
}

Test(cli, malformed_line_names_its_number_and_writes_nothing)
{
    write_file("bad.csv", "timestamp,value\n1,1.0\n2,2.0\n3,abc\n4,4.0\n");
    char out[4096];
    cr_assert_neq(run(out, sizeof out, "compress bad.csv -o bad.tsc"), 0);
    cr_assert(strstr(out, "line 4"), "%s", out);
    cr_assert(!exists("bad.tsc"), "a half-written output exists");
    write_file("bad2.csv", "1,1.0\n2024-13-01 00:00:00,2.0\n");
    cr_assert_neq(run(out, sizeof out, "compress bad2.csv -o bad2.tsc"), 0);
    cr_assert(strstr(out, "line 2"), "%s", out);
    write_file("bad3.csv", "1,0x7ff00000000000\n");
    cr_assert_neq(run(out, sizeof out, "compress bad3.csv -o bad3.tsc"), 0, "15 hex digits must be refused");
    cr_assert_neq(run(out, sizeof out, "compress nothere.csv -o x.tsc"), 0);
    cr_assert_neq(run(out, sizeof out, "compress bad.csv -o x.tsc --ts-unit hours"), 0);
}

Test(cli, damaged_file_is_an_error)
{
    write_file("in.csv", "1,1\n2,2\n3,3\n");
    char out[4096];
    cr_assert_eq(run(out, sizeof out, "compress in.csv -o ok.tsc"), 0);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "cd '%s' && head -c 20 ok.tsc > cut.tsc", workdir);
    cr_assert_eq(system(cmd), 0);
    cr_assert_neq(run(out, sizeof out, "decompress cut.tsc -o back.csv"), 0);
    cr_assert(!exists("back.csv"));
    cr_assert_neq(run(out, sizeof out, "stats in.csv"), 0, "a CSV is not a tschunk file");
}

Test(cli, verify_ls_cat_and_quantiles_read_segments)
{
    write_file("in.csv", "1,1\n2,2\n3,3\n");
    char out[4096], path[512], cmd[700];
    cr_assert_eq(run(out, sizeof out, "compress in.csv -o ok.tsc"), 0);
    cr_assert_eq(run(out, sizeof out, "verify ok.tsc"), 0, "%s", out);
    cr_assert(strstr(out, "ok (segment v3, 1 series, 1 chunk, 3 samples)"), "%s", out);
    snprintf(cmd, sizeof cmd, "cd '%s' && head -c 20 ok.tsc > cut.tsc", workdir);
    cr_assert_eq(system(cmd), 0);
    cr_assert_neq(run(out, sizeof out, "verify cut.tsc"), 0);
    /* A segment of two series written by the library. */
    snprintf(path, sizeof path, "%s/two.tseg", workdir);
    tschunk_segment_options opts;
    memset(&opts, 0, sizeof opts);
    tschunk_segment_writer *w;
    cr_assert_eq(tschunk_segment_writer_create(&w, path, &opts), 0);
    int64_t ts[3] = {10, 20, 30};
    double v[3] = {1, 2, 3};
    unsigned char chunk[TSCHUNK_BOUND(3)];
    size_t n = tschunk_encode(chunk, sizeof chunk, ts, v, 3, NULL);
    cr_assert_eq(tschunk_segment_writer_add_series(w, 7, "cpu", 3), 0);
    cr_assert_eq(tschunk_segment_writer_add_chunk(w, 7, chunk, n, NULL, 0), 0);
    cr_assert_eq(tschunk_segment_writer_add_chunk(w, 9, chunk, n, NULL, 0), 0);
    size_t size = tschunk_segment_writer_finish(w);
    cr_assert(!tschunk_is_error(size));
    cr_assert_eq(run(out, sizeof out, "verify two.tseg"), 0, "%s", out);
    cr_assert(strstr(out, "ok (segment v3, 2 series, 2 chunks, 6 samples)"), "%s", out);
    cr_assert_eq(run(out, sizeof out, "ls two.tseg"), 0, "%s", out);
    char want[200];
    snprintf(want, sizeof want, "cpu\t7\t1\t3\t10\t30\t%zu\n\t9\t1\t3\t10\t30\t%zu\n", n, n);
    cr_assert(strstr(out, want), "%s", out);
    cr_assert_eq(run(out, sizeof out, "cat two.tseg cpu"), 0, "%s", out);
    cr_assert_str_eq(out, "timestamp,value\n10,1\n20,2\n30,3\n");
    cr_assert_eq(run(out, sizeof out, "cat two.tseg 9 --from 15 --to 20 --bits"), 0, "%s", out);
    cr_assert_str_eq(out, "timestamp,value\n20,0x4000000000000000\n");
    cr_assert_neq(run(out, sizeof out, "cat two.tseg nope"), 0);
    cr_assert(strstr(out, "no series 'nope'"), "%s", out);
    cr_assert_neq(run(out, sizeof out, "stats two.tseg extra"), 0);
    /* Quantiles of one series, and of all of them (no summaries here: chunks are decoded). */
    cr_assert_eq(run(out, sizeof out, "quantiles two.tseg cpu --q 0.5"), 0, "%s", out);
    const char *median = strstr(out, "\n0.5 ");
    cr_assert(median, "%s", out);
    double got = strtod(median + 5, NULL);
    cr_assert(got > 1.98 && got < 2.02, "median %.17g: %s", got, out);
    cr_assert_eq(run(out, sizeof out, "quantiles two.tseg --all --from 20 --to 30"), 0, "%s", out);
    cr_assert(strstr(out, "samples     4 in range"), "%s", out);
    cr_assert_neq(run(out, sizeof out, "quantiles two.tseg"), 0);
    cr_assert(strstr(out, "takes SERIES or --all"), "%s", out);
    cr_assert_neq(run(out, sizeof out, "quantiles two.tseg cpu --all"), 0);
    cr_assert_neq(run(out, sizeof out, "quantiles ok.tsc cpu"), 0);
    /* One flipped byte inside the first chunk record. */
    snprintf(cmd, sizeof cmd, "cd '%s' && cp two.tseg bad.tseg && printf '\\377' | dd of=bad.tseg bs=1 seek=60 conv=notrunc 2>/dev/null",
             workdir);
    cr_assert_eq(system(cmd), 0);
    cr_assert_neq(run(out, sizeof out, "verify bad.tseg"), 0);
    cr_assert(strstr(out, "broken segment"), "%s", out);
    /* cat reads the series' chunks in one run (lazily): the broken one is named, no sample printed. */
    cr_assert_neq(run(out, sizeof out, "cat bad.tseg cpu"), 0);
    cr_assert(strstr(out, "bad.tseg: chunk 0 is damaged: "), "%s", out);
    cr_assert(!strstr(out, "timestamp,value"), "%s", out);
}

Test(cli, ts_unit_converts_date_times)
{
    write_file("in.csv", "2024-01-01 00:00:01.5,1\n");
    char out[4096];
    const char *units[] = {"ms", "us", "ns"};
    const char *want[] = {"1704067201500,", "1704067201500000,", "1704067201500000000,"};
    for (int i = 0; i < 3; i++) {
        char args[200];
        snprintf(args, sizeof args, "compress in.csv -o u.tsc --ts-unit %s", units[i]);
        cr_assert_eq(run(out, sizeof out, args), 0, "%s", out);
        cr_assert_eq(run(out, sizeof out, "decompress u.tsc -o -"), 0);
        cr_assert(strstr(out, want[i]), "unit %s: %s", units[i], out);
    }
    /* A digit the unit cannot hold is refused, not dropped (0.50.10: 1704067201, the sample moved by half a second);
     * zeros past the unit are no loss; a bound of cat or quantiles likewise (cut short, it would take a sample). */
    cr_assert_eq(run(out, sizeof out, "compress in.csv -o u.tsc --ts-unit s"), 1, "%s", out);
    cr_assert(strstr(out, "in.csv: line 1: timestamp '2024-01-01 00:00:01.5' has digits finer than the timestamp unit, "
                          "s (give a finer --ts-unit, or fewer digits)"), "%s", out);
    write_file("in.csv", "2024-01-01 00:00:01.500000000,1\n2024-01-01T00:00:02.1234567891Z,2\n");
    cr_assert_eq(run(out, sizeof out, "compress in.csv -o u.tsc --ts-unit ns"), 1, "%s", out);
    cr_assert(strstr(out, "line 2: timestamp '2024-01-01T00:00:02.1234567891Z' has digits finer than a nanosecond"),
              "%s", out);
    write_file("in.csv", "2024-01-01 00:00:01.500000000,1\n");
    cr_assert_eq(run(out, sizeof out, "compress in.csv -o u.tsc"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "cat u.tsc in --from '2024-01-01 00:00:01.5001'"), 1, "%s", out);
    cr_assert(strstr(out, "--from '2024-01-01 00:00:01.5001' has digits finer than the file's timestamp unit, ms"),
              "%s", out);
    cr_assert_eq(run(out, sizeof out, "cat u.tsc in --from '2024-01-01 00:00:01.5000'"), 0, "%s", out);
    cr_assert_str_eq(out, "timestamp,value\n1704067201500,1\n");
}

Test(cli, prometheus_export_import_and_direct_reading)
{
    write_file("in.csv", "timestamp,value\n1700000000000,1.5\n1700000015000,1.5\n1700000030007,3.25\n"
                         "1700000020000,7\n1700000035000,0x7ff0000000000002\n");
    char out[8192];
    cr_assert_eq(run(out, sizeof out, "export-prom in.csv -o p.bin"), 0, "%s", out);
    /* Records: uvarint length, then the chunk exactly as Prometheus' Bytes() returns it. The
     * first chunk is README's three-sample example from the Prometheus vectors. */
    char cmd[600];
    snprintf(cmd, sizeof cmd, "cd '%s' && od -An -tx1 -v p.bin | tr -d ' \\n'", workdir);
    FILE *p = popen(cmd, "r");
    char hex[512] = {0};
    cr_assert(fgets(hex, sizeof hex, p));
    pclose(p);
    cr_assert(!strncmp(hex, "18000380a0abfef9623ff800000000000098754003e13bff90", 50), "%s", hex);
    cr_assert_eq(run(out, sizeof out, "decompress p.bin -o - --bits"), 0, "%s", out);
    cr_assert_str_eq(out, "timestamp,value\n1700000000000,0x3ff8000000000000\n1700000015000,0x3ff8000000000000\n"
                          "1700000030007,0x400a000000000000\n1700000020000,0x401c000000000000\n"
                          "1700000035000,0x7ff0000000000002\n");
    cr_assert_eq(run(out, sizeof out, "import-prom p.bin -o n.tsc"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "compress in.csv -o c.tsc --samples-per-chunk 120"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "decompress n.tsc -o n.csv --bits"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "decompress c.tsc -o c.csv --bits"), 0, "%s", out);
    snprintf(cmd, sizeof cmd, "cd '%s' && cmp -s n.csv c.csv", workdir);
    cr_assert_eq(system(cmd), 0, "import-prom and compress differ");
    cr_assert_eq(run(out, sizeof out, "ls n.tsc"), 0, "%s", out);
    cr_assert(strstr(out, "p.bin\t0\t2\t5\t1700000000000\t1700000035000\t"), "one series named after the file, "
              "one native chunk per Prometheus chunk: %s", out);
    cr_assert_eq(run(out, sizeof out, "stats p.bin --json"), 0, "%s", out);
    cr_assert(strstr(out, "\"codec\": \"prometheus-xor\"") && strstr(out, "\"samples\": 5,"), "%s", out);
    cr_assert_eq(run(out, sizeof out, "stats n.tsc --json"), 0, "%s", out);
    cr_assert(strstr(out, "\"prom_xor_bytes\": "), "%s", out);
    write_file("junk.bin", "\x05hello");
    cr_assert_neq(run(out, sizeof out, "decompress junk.bin -o j.csv"), 0);
    cr_assert(!exists("j.csv"));
    cr_assert_neq(run(out, sizeof out, "export-prom nothere.csv -o x.bin"), 0);
    cr_assert(!exists("x.bin"));
    write_file("multi.csv", "a,1,2\nb,1,3\n");
    cr_assert_neq(run(out, sizeof out, "export-prom multi.csv -o x.bin"), 0, "series would be merged: %s", out);
    cr_assert(strstr(out, "line 1: one series only"), "%s", out);
    cr_assert(!exists("x.bin"));
}

/* stats times a chunk file's decode 16 chunks a call (lanes); the samples it decodes that way are counted. */
Test(cli, stats_decode_many_prometheus_chunks_at_once)
{
    char *csv = malloc(1 << 16), out[4096];
    cr_assert(csv);
    size_t len = (size_t)snprintf(csv, 64, "timestamp,value\n");
    for (int i = 0; i < 1200; i++) /* scrape jitter, a 2-decimal gauge */
        len += (size_t)snprintf(csv + len, 64, "%d,%d.%02d\n", 15000 * i + (i * 7919) % 13, 20 + (i * 31) % 17,
                                (i * 37) % 100);
    write_file("g.csv", csv);
    free(csv);
    cr_assert_eq(run(out, sizeof out, "export-prom g.csv -o g.prom --samples-per-chunk 30"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "stats g.prom --json"), 0, "%s", out);
    cr_assert(strstr(out, "\"samples\": 1200,") && strstr(out, "\"chunks\": 40,"), "%s", out);
    cr_assert_eq(run(out, sizeof out, "import-prom g.prom -o g.tsc"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "stats g.tsc --json"), 0, "%s", out);
    cr_assert(strstr(out, "\"samples\": 1200,"), "%s", out);
}

Test(cli, sketch_encode_and_decode)
{
    write_file("v.txt", "0\n2\n28\n-3\n");
    char out[8192];
    cr_assert_eq(run(out, sizeof out, "sketch encode < v.txt"), 0, "%s", out);
    /* sketches-java's bytes for these values (spec example A). */
    cr_assert_str_eq(out, "02fd4a815abf52f03f000000000000000004020502440288020207016c02\n");
    cr_assert_eq(run(out, sizeof out, "sketch encode --exact-stats --omit-mapping < v.txt"), 0, "%s", out);
    cr_assert_str_eq(out, "a084408800000000000008c08c0000000000003c40840000000000003b4004020502440288020207016c02\n");
    write_file("w.txt", "0,0.1\n2,1.2\n0x403c000000000000,8.66\n-3,2.33\n");
    cr_assert_eq(run(out, sizeof out, "sketch encode < w.txt"), 0, "%s", out);
    cr_assert_str_eq(out, "02fd4a815abf52f03f0000000000000000048099cce6b399cce680050244" "8299cce6b399cce680"
                          "880286b58fae8a9edc948007016c83aa9edc94bdb829\n");
    cr_assert_eq(run(out, sizeof out, "sketch decode 02fd4a815abf52f03f000000000000000004020502440288020207016c02"
                                      " --json --q 0,0.5"), 0, "%s", out);
    cr_assert(strstr(out, "\"count\": 4,") && strstr(out, "\"zero_count\": 1,"), "%s", out);
    cr_assert(strstr(out, "\"positive_bins\": [[34, 1], [166, 1]], \"negative_bins\": [[54, 1]]"), "%s", out);
    cr_assert(strstr(out, "\"quantiles\": {\"0\": -2.9742334234767016, \"0.5\": 0}"), "%s", out);
    /* The same sketch as text: statistics, each store's bins, the quantiles. */
    cr_assert_eq(run(out, sizeof out, "sketch decode 02fd4a815abf52f03f000000000000000004020502440288020207016c02"
                                      " --q 0,0.5"), 0, "%s", out);
    cr_assert(strstr(out, "\ncount        4 (no exact statistics in the stream: from bins)\n"), "%s", out);
    cr_assert(strstr(out, "\nmin          -2.9742334234767016\nmax          27.940046110299559\n"), "%s", out);
    cr_assert(strstr(out, "\nzero count   1\npositive bins (2):\n  34: 1\n  166: 1\n"
                          "negative bins (1, by |value|):\n  54: 1\nquantiles\n  0      -2.9742334234767016\n"
                          "  0.5    0\n"), "%s", out);
    cr_assert_eq(run(out, sizeof out, "sketch decode 02fd4a815abf52f03f0000000000000000 --q 0.5"), 0, "%s", out);
    cr_assert(strstr(out, "\ncount        0\n") && strstr(out, "\n  0.5    none (empty sketch)\n"), "%s", out);
    /* White space around the hex is no part of it, as sketch encode trims its lines (0.50.9: refused). */
    cr_assert_eq(run(out, sizeof out, "sketch decode ' 02FD4A815ABF52F03F0000000000000000\n' --q 0.5"), 0, "%s", out);
    cr_assert(strstr(out, "\ncount        0\n"), "%s", out);
    cr_assert_eq(run(out, sizeof out, "sketch decode ' 0 2fd'"), 1, "%s", out);
    cr_assert(strstr(out, "not an even string of hex digits"), "%s", out);
    /* Its JSON: null where there is no answer, min and max too (0.50.3: 0). */
    cr_assert_eq(run(out, sizeof out, "sketch decode 02fd4a815abf52f03f0000000000000000 --q 0.5 --json"), 0, "%s", out);
    cr_assert(strstr(out, "\"count\": 0, \"sum\": 0, \"min\": null, \"max\": null,") &&
                  strstr(out, "\"quantiles\": {\"0.5\": null}}"), "%s", out);
    cr_assert_eq(run(out, sizeof out, "sketch encode --mapping cubic --store sparse < v.txt"), 0);
    cr_assert(!strncmp(out, "0ec2f1e7e9ed51f03f", 18), "cubic 0.01 gamma as sketches-java: %s", out);
    /* Errors name the offset. */
    cr_assert_neq(run(out, sizeof out, "sketch decode 02fd4a815abf52f03f00000000000000000502"), 0);
    cr_assert(strstr(out, "at byte 19"), "%s", out);
    cr_assert_neq(run(out, sizeof out, "sketch decode 0502"), 0);
    write_file("bad.txt", "1\nabc\n");
    cr_assert_neq(run(out, sizeof out, "sketch encode < bad.txt"), 0);
    cr_assert(strstr(out, "line 2"), "%s", out);
    /* White space around a value or a weight is ignored, as in CSV input (0.49.4: a trailing space was malformed). */
    write_file("ws.txt", " 0 \n\t2,1 \n28 , 1\r\n-3\n");
    cr_assert_eq(run(out, sizeof out, "sketch encode < ws.txt"), 0, "%s", out);
    cr_assert_str_eq(out, "02fd4a815abf52f03f000000000000000004020502440288020207016c02\n");
    write_file("ws_bad.txt", "1, \n");
    cr_assert_neq(run(out, sizeof out, "sketch encode < ws_bad.txt"), 0);
    cr_assert(strstr(out, "malformed value on line 1"), "%s", out);
    write_file("nan.txt", "1\nNaN\n");
    cr_assert_neq(run(out, sizeof out, "sketch encode < nan.txt"), 0, "NaN is refused, not binned");
}

Test(cli, summaries_answer_range_quantiles)
{
    FILE *f;
    char path[512];
    snprintf(path, sizeof path, "%s/in.csv", workdir);
    f = fopen(path, "w");
    for (int i = 0; i < 5000; i++) fprintf(f, "%d,%d\n", i * 10, (i * 7919) % 1000 + 1);
    fclose(f);
    char out[8192];
    cr_assert_eq(run(out, sizeof out, "compress in.csv -o s.tsc --summary --samples-per-chunk 100"), 0, "%s", out);
    cr_assert(strstr(out, "summaries"), "%s", out);
    cr_assert_eq(run(out, sizeof out, "quantiles s.tsc --q 0.5,0.99 --exact"), 0, "%s", out);
    cr_assert(strstr(out, "50 from summaries, 0 decoded"), "%s", out);
    cr_assert(strstr(out, "samples     5000 in range"), "%s", out);
    /* Every answer within the sketch's 1% relative accuracy of the exact quantile. */
    char *line = strstr(out, "\n0.5 ");
    cr_assert(line, "%s", out);
    double v, e, rel;
    cr_assert_eq(sscanf(line + 1, "%*s %lf %lf %lf", &v, &e, &rel), 3, "%s", line);
    cr_assert_leq(rel, 0.01);
    /* 1005 cuts chunk 1 (1000..1990); 30995 lies past chunk 30 (..30990): one chunk decoded. */
    cr_assert_eq(run(out, sizeof out, "quantiles s.tsc --from 1005 --to 30995"), 0, "%s", out);
    cr_assert(strstr(out, "29 from summaries, 1 decoded (99 samples)"), "%s", out);
    cr_assert(strstr(out, "samples     2999 in range"), "%s", out);
    cr_assert(!strstr(out, " \n"), "a line ends in a space (before 0.46.2 each quantile's did): %s", out);
    /* Stored block summaries (one per 64 chunks by default) answer as the chunks' own summaries do. */
    char with[8192], without[8192];
    cr_assert_eq(run(out, sizeof out, "compress in.csv -o nb.tsc --summary --samples-per-chunk 100 --summary-block 1"), 0,
                 "%s", out);
    cr_assert_eq(run(with, sizeof with, "quantiles s.tsc --q 0.1,0.5,0.99 --exact"), 0, "%s", with);
    cr_assert_eq(run(without, sizeof without, "quantiles nb.tsc --q 0.1,0.5,0.99 --exact"), 0, "%s", without);
    cr_assert(strstr(with, "\nq ") && strstr(without, "\nq "), "%s", with);
    cr_assert_str_eq(strstr(with, "\nq "), strstr(without, "\nq "));
    struct stat a, b;
    char pa[600], pb[600];
    snprintf(pa, sizeof pa, "%s/s.tsc", workdir);
    snprintf(pb, sizeof pb, "%s/nb.tsc", workdir);
    cr_assert(stat(pa, &a) == 0 && stat(pb, &b) == 0 && a.st_size > b.st_size); /* the blocks are stored */
    cr_assert_neq(run(out, sizeof out, "compress in.csv -o x.tsc --summary --summary-block 0"), 0);
    cr_assert(strstr(out, "--summary-block must be"), "%s", out);
    /* Summaries change nothing for the other commands. */
    cr_assert_eq(run(out, sizeof out, "decompress s.tsc -o - --bits"), 0);
    cr_assert(strstr(out, "\n49990,0x"), "%s", out + strlen(out) - 40);
}

Test(cli, quantiles_without_summaries_and_streams_without_mapping)
{
    write_file("in.csv", "1,5\n2,1\n3,4\n4,2\n5,3\n");
    char out[8192];
    cr_assert_eq(run(out, sizeof out, "compress in.csv -o plain.tsc"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "quantiles plain.tsc --q 0,0.5,1 --exact"), 0, "%s", out);
    cr_assert(strstr(out, "0 from summaries, 1 decoded (5 samples)"), "%s", out);
    cr_assert(strstr(out, "samples     5 in range"), "%s", out);
    /* An encoding without its mapping block needs the mapping named. */
    write_file("v.txt", "1\n2\n3\n");
    cr_assert_eq(run(out, sizeof out, "sketch encode --omit-mapping < v.txt"), 0, "%s", out);
    char hex[256], cmd[400];
    snprintf(hex, sizeof hex, "%.250s", out);
    hex[strcspn(hex, "\n")] = 0;
    snprintf(cmd, sizeof cmd, "sketch decode %s --json", hex);
    cr_assert_neq(run(out, sizeof out, cmd), 0, "no mapping given: refused");
    cr_assert(strstr(out, "--mapping"), "%s", out);
    snprintf(cmd, sizeof cmd, "sketch decode %s --json --mapping logarithmic --alpha 0.01", hex);
    cr_assert_eq(run(out, sizeof out, cmd), 0, "%s", out);
    cr_assert(strstr(out, "\"count\": 3,"), "%s", out);
    cr_assert_neq(run(out, sizeof out, "quantiles p.bin"), 0, "a missing file is an error");
}

Test(cli, compress_writes_segments_of_many_series)
{
    /* series,timestamp,value rows, interleaved; one series goes back in time. */
    write_file("multi.csv", "series,timestamp,value\n"
                            "cpu{host=\"a\"},1000,1.5\n"
                            "mem,1000,100\n"
                            "cpu{host=\"a\"},2000,2.5\n"
                            "mem,2000,\n"
                            "mem,3000,0x7ff0000000000002\n"
                            "cpu{host=\"a\"},1500,-0\n");
    char out[4096];
    cr_assert_eq(run(out, sizeof out, "compress multi.csv -o m.tseg --verify"), 0, "%s", out);
    cr_assert(strstr(out, "5 samples (1 empty value skipped), 2 series, 3 chunks"), "%s", out);
    cr_assert(strstr(out, "verify: all 2 series decode bit-for-bit identical"), "%s", out);
    cr_assert_eq(run(out, sizeof out, "ls m.tseg"), 0, "%s", out);
    cr_assert(strstr(out, "cpu{host=\"a\"}\t0\t2\t3\t1000\t2000\t"), "%s", out);
    cr_assert(strstr(out, "mem\t1\t1\t2\t1000\t3000\t"), "%s", out);
    /* decompress: input order within each series; cat: time order. */
    cr_assert_eq(run(out, sizeof out, "decompress m.tseg -o - --bits"), 0, "%s", out);
    cr_assert_str_eq(out, "series,timestamp,value\n"
                          "cpu{host=\"a\"},1000,0x3ff8000000000000\n"
                          "cpu{host=\"a\"},2000,0x4004000000000000\n"
                          "cpu{host=\"a\"},1500,0x8000000000000000\n"
                          "mem,1000,0x4059000000000000\n"
                          "mem,3000,0x7ff0000000000002\n");
    cr_assert_eq(run(out, sizeof out, "cat m.tseg cpu{host=\\\"a\\\"}"), 0, "%s", out);
    cr_assert_str_eq(out, "timestamp,value\n1000,1.5\n1500,-0\n2000,2.5\n");
    cr_assert_eq(run(out, sizeof out, "stats m.tseg --json"), 0, "%s", out);
    cr_assert(strstr(out, "\"samples\": 5,") && strstr(out, "\"chunks\": 3,") && strstr(out, "\"bits_per_value\": "), "%s", out);
    /* Two columns: one series named after the file. */
    write_file("temp.csv", "1,20\n2,21\n");
    cr_assert_eq(run(out, sizeof out, "compress temp.csv -o t.tseg"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "ls t.tseg"), 0, "%s", out);
    cr_assert(strstr(out, "\ntemp\t0\t1\t2\t1\t2\t"), "%s", out);
    cr_assert_eq(run(out, sizeof out, "quantiles t.tseg --q 1"), 0, "one series: no SERIES needed: %s", out);
    cr_assert_neq(run(out, sizeof out, "quantiles m.tseg"), 0);
    cr_assert(strstr(out, "holds 2 series"), "%s", out);
    /* Bad rows name their line and leave nothing behind. */
    write_file("bad.csv", "series,timestamp,value\nx,1,2\n,2,3\n");
    cr_assert_neq(run(out, sizeof out, "compress bad.csv -o bad.tseg"), 0);
    cr_assert(strstr(out, "line 3: empty series name"), "%s", out);
    cr_assert(!exists("bad.tseg"));
    write_file("bad2.csv", "x,1,2\nx,2,3,4\n");
    cr_assert_neq(run(out, sizeof out, "compress bad2.csv -o bad2.tseg"), 0);
    cr_assert(strstr(out, "line 2: more than 3 columns"), "%s", out);
}

Test(cli, wide_tables_become_one_series_per_column)
{
    write_file("ett.csv", "date,HUFL,HULL,OT\n"
                          "2016-07-01 00:00:00,5.827,2.009,30.531\n"
                          "2016-07-01 01:00:00,5.693,,27.787\n"
                          "2016-07-01 02:00:00,5.157,1.741,27.787\n");
    char out[4096];
    cr_assert_eq(run(out, sizeof out, "compress ett.csv -o e.tseg --wide --ts-unit s --verify"), 0, "%s", out);
    cr_assert(strstr(out, "8 samples (1 empty value skipped), 3 series"), "%s", out);
    cr_assert_eq(run(out, sizeof out, "ls e.tseg"), 0, "%s", out);
    cr_assert(strstr(out, "HUFL\t0\t1\t3\t1467331200\t1467338400\t"), "%s", out);
    cr_assert(strstr(out, "HULL\t1\t1\t2\t"), "%s", out);
    cr_assert(strstr(out, "OT\t2\t1\t3\t"), "%s", out);
    cr_assert_eq(run(out, sizeof out, "cat e.tseg OT --from 1467334800 --to 1467338400 --iso"), 0, "%s", out);
    cr_assert_str_eq(out, "timestamp,value\n2016-07-01T01:00:00Z,27.787\n2016-07-01T02:00:00Z,27.787\n");
    write_file("ett_bad.csv", "date,A,B\n2016-07-01 00:00:00,1,x\n");
    cr_assert_neq(run(out, sizeof out, "compress ett_bad.csv -o eb.tseg --wide"), 0);
    cr_assert(strstr(out, "line 2: bad value 'x'"), "%s", out);
    cr_assert(!exists("eb.tseg"));
    write_file("ett_dup.csv", "date,A,A\n2016-07-01 00:00:00,1,2\n");
    cr_assert_neq(run(out, sizeof out, "compress ett_dup.csv -o ed.tseg --wide"), 0);
    cr_assert(strstr(out, "appears twice"), "%s", out);
}

/* Series a (0, 1, ..., 99) and b (1000, ...) at timestamps 0, 10, ..., 990, interleaved, as series,timestamp,value. */
static void write_two_series(const char *name)
{
    char csv[8192];
    size_t len = (size_t)snprintf(csv, sizeof csv, "series,timestamp,value\n");
    for (int i = 0; i < 100; i++) {
        len += (size_t)snprintf(csv + len, sizeof csv - len, "a,%d,%d\n", i * 10, i);
        len += (size_t)snprintf(csv + len, sizeof csv - len, "b,%d,%d\n", i * 10, 1000 + i);
    }
    write_file(name, csv);
}

Test(cli, delete_hides_samples_everywhere)
{
    write_two_series("d.csv");
    char out[16384];
    cr_assert_eq(run(out, sizeof out, "compress d.csv -o d.tseg --samples-per-chunk 30 --summary"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "quantiles d.tseg a --q 0.5"), 0, "%s", out);
    cr_assert(strstr(out, "samples     100 in range"), "%s", out);
    cr_assert_eq(run(out, sizeof out, "delete d.tseg a --from 250 --to 645"), 0, "%s", out);
    cr_assert(strstr(out, "deleted 40 samples of 'a' in [250, 645]"), "%s", out); /* ts 250 .. 640 */
    cr_assert_eq(run(out, sizeof out, "verify d.tseg"), 0, "%s", out);
    cr_assert(strstr(out, "160 samples, 40 deleted"), "%s", out);
    cr_assert_eq(run(out, sizeof out, "cat d.tseg a --from 230 --to 660"), 0, "%s", out);
    cr_assert_str_eq(out, "timestamp,value\n230,23\n240,24\n650,65\n660,66\n");
    cr_assert_eq(run(out, sizeof out, "ls d.tseg"), 0, "%s", out);
    cr_assert(strstr(out, "a\t0\t4\t60\t0\t990\t"), "%s", out);
    cr_assert(strstr(out, "b\t1\t4\t100\t0\t990\t"), "%s", out);
    cr_assert_eq(run(out, sizeof out, "quantiles d.tseg a --q 0.5 --exact"), 0, "%s", out);
    cr_assert(strstr(out, "samples     60 in range"), "%s", out);
    cr_assert(strstr(out, "chunks      1 from summaries, 3 decoded"), "%s", out);
    cr_assert_eq(run(out, sizeof out, "quantiles d.tseg a --from 300 --to 600"), 0, "%s", out);
    cr_assert(strstr(out, "samples     0 in range") && strstr(out, "no values in the range"), "%s", out);
    cr_assert_eq(run(out, sizeof out, "decompress d.tseg -o - "), 0, "%s", out);
    cr_assert(strstr(out, "a,240,24\na,650,65\n") && !strstr(out, "a,250,"), "%s", out);
    cr_assert(strstr(out, "b,250,1025\n"), "%s", out);
    cr_assert_eq(run(out, sizeof out, "stats d.tseg --json"), 0, "%s", out);
    cr_assert(strstr(out, "\"samples\": 160,"), "%s", out);
    /* Again: nothing new. Refusals leave the file as it was. */
    cr_assert_eq(run(out, sizeof out, "delete d.tseg a --from 250 --to 645"), 0, "%s", out);
    cr_assert(strstr(out, "deleted 0 samples"), "%s", out);
    cr_assert_neq(run(out, sizeof out, "delete d.tseg a --from 250"), 0);
    cr_assert(strstr(out, "delete needs FILE SERIES --from T --to T"), "%s", out);
    cr_assert_neq(run(out, sizeof out, "delete d.tseg zz --from 1 --to 2"), 0);
    cr_assert_neq(run(out, sizeof out, "delete d.tseg a --from 5 --to 2"), 0);
    cr_assert_eq(run(out, sizeof out, "verify d.tseg"), 0, "%s", out);
    cr_assert(strstr(out, "160 samples, 40 deleted"), "%s", out);
}

/* ls lists the range of the samples a reader returns (0.57.1: deletions at a series' ends narrowed its count but
 * not its range, so ls named a deleted sample's timestamp); a series whose samples are all deleted has none. */
Test(cli, ls_lists_the_live_samples_range)
{
    write_two_series("lr.csv");
    char out[16384];
    cr_assert_eq(run(out, sizeof out, "compress lr.csv -o lr.tseg --samples-per-chunk 30"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "delete lr.tseg a --from 0 --to 305"), 0, "%s", out); /* a whole chunk, and 1 */
    cr_assert_eq(run(out, sizeof out, "delete lr.tseg a --from 985 --to 990"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "delete lr.tseg b --from 0 --to 990"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "ls lr.tseg"), 0, "%s", out);
    cr_assert(strstr(out, "\na\t0\t4\t68\t310\t980\t"), "%s", out);
    cr_assert(strstr(out, "\nb\t1\t4\t0\t-\t-\t"), "%s", out);
    cr_assert_eq(run(out, sizeof out, "ls lr.tseg --json"), 0, "%s", out);
    cr_assert(strstr(out, "\"samples\": 68, \"first_ts\": 310, \"last_ts\": 980,"), "%s", out);
    cr_assert(strstr(out, "\"samples\": 0, \"first_ts\": null, \"last_ts\": null,"), "%s", out);
    cr_assert_eq(run(out, sizeof out, "cat lr.tseg a"), 0, "%s", out);
    cr_assert(strstr(out, "timestamp,value\n310,31\n") == out && strstr(out, "\n980,98\n") && !strstr(out, "990,"),
              "%s", out);
}

/* compact after delete: the same samples, no deletions left, every chunk answering from its summary again. */
Test(cli, compact_makes_deletes_final)
{
    write_two_series("k.csv");
    char out[16384], before[16384];
    cr_assert_eq(run(out, sizeof out, "compress k.csv -o k.tseg --samples-per-chunk 30 --summary"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "delete k.tseg a --from 250 --to 645"), 0, "%s", out);
    cr_assert_eq(run(before, sizeof before, "decompress k.tseg -o - --bits"), 0, "%s", before);
    cr_assert_eq(run(out, sizeof out, "compact k.tseg -o k2.tseg"), 0, "%s", out);
    cr_assert(strstr(out, "k.tseg -> k2.tseg: 5 chunks copied, 2 encoded again without their deleted samples, "
                          "1 dropped (emptied); 40 deleted samples gone;"), "%s", out);
    cr_assert_eq(run(out, sizeof out, "verify k2.tseg"), 0, "%s", out);
    cr_assert(strstr(out, "7 chunks, 160 samples") && !strstr(out, "deleted"), "%s", out);
    cr_assert_eq(run(out, sizeof out, "decompress k2.tseg -o - --bits"), 0, "%s", out);
    cr_assert_str_eq(out, before);
    cr_assert_eq(run(out, sizeof out, "quantiles k2.tseg a --q 0.5"), 0, "%s", out);
    cr_assert(strstr(out, "samples     60 in range") && strstr(out, "chunks      3 from summaries, 0 decoded"),
              "%s", out);
    /* In place, and again with nothing to do; refusals leave the files as they were. */
    cr_assert_eq(run(out, sizeof out, "compact k.tseg"), 0, "%s", out);
    cr_assert(strstr(out, "k.tseg -> k.tseg: 5 chunks copied"), "%s", out);
    cr_assert_eq(run(out, sizeof out, "compact k.tseg"), 0, "%s", out);
    cr_assert(strstr(out, "7 chunks copied, 0 encoded again without their deleted samples, 0 dropped"), "%s", out);
    cr_assert_neq(run(out, sizeof out, "compact k.tseg -o -"), 0);
    cr_assert(strstr(out, "compact writes a file, not stdout"), "%s", out);
    cr_assert_neq(run(out, sizeof out, "compact k.csv"), 0);
    cr_assert(strstr(out, "k.csv: a text file (CSV?), not a segment or a chunk file"), "%s", out);
    cr_assert_neq(run(out, sizeof out, "compact k.tseg -o no/such/dir.tseg"), 0);
    cr_assert(strstr(out, "cannot create no/such/dir.tseg: No such file or directory"), "%s", out);
    cr_assert_eq(run(out, sizeof out, "decompress k.tseg -o - --bits"), 0, "%s", out);
    cr_assert_str_eq(out, before);
    /* A series deleted whole and compacted keeps its name without chunks: no time range to list (0.50.1: ls printed
     * INT64_MAX and INT64_MIN for it). */
    cr_assert_eq(run(out, sizeof out, "delete k.tseg a --from 0 --to 9999999"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "compact k.tseg"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "ls k.tseg"), 0, "%s", out);
    cr_assert(strstr(out, "\na\t0\t0\t0\t-\t-\t0\n"), "%s", out);
}

/* Values print in the shortest text that reads back to the same bits: %g's shortest, or the plain form where that is
 * no longer (100, not 1e+02; 120000, not 1.2e+05, which the search decides, past the short-decimal path). */
Test(cli, values_print_in_their_shortest_text)
{
    write_file("short.csv", "1,100\n2,150\n3,1e20\n4,1e15\n5,0.0001\n6,1e-7\n7,-150\n8,2.5\n9,12345678.9\n"
                            "10,0.1\n11,123456789012345678\n12,1e16\n13,-0\n14,120000\n15,100000\n16,-2500000\n");
    char out[4096];
    cr_assert_eq(run(out, sizeof out, "compress short.csv -o short.tseg"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "decompress short.tseg -o -"), 0, "%s", out);
    cr_assert_str_eq(out, "timestamp,value\n1,100\n2,150\n3,1e+20\n4,1e+15\n5,0.0001\n6,1e-07\n7,-150\n8,2.5\n"
                          "9,12345678.9\n10,0.1\n11,1.2345678901234568e+17\n12,1e+16\n13,-0\n14,120000\n"
                          "15,1e+05\n16,-2500000\n");
}

/* merge: series matched by name across files the CLI numbered on its own, deletes made final; refusals. */
Test(cli, merge_matches_series_by_name)
{
    write_two_series("m1.csv");
    char csv[8192];
    size_t len = (size_t)snprintf(csv, sizeof csv, "series,timestamp,value\n");
    for (int i = 100; i < 200; i++) { /* c first: id 0 here, where a is 0 in m1 */
        len += (size_t)snprintf(csv + len, sizeof csv - len, "c,%d,%d\n", i * 10, 5000 + i);
        len += (size_t)snprintf(csv + len, sizeof csv - len, "a,%d,%d\n", i * 10, i);
    }
    write_file("m2.csv", csv);
    char out[16384];
    cr_assert_eq(run(out, sizeof out, "compress m1.csv -o m1.tseg --samples-per-chunk 30 --summary"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "compress m2.csv -o m2.tseg --samples-per-chunk 30 --summary"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "delete m1.tseg a --from 250 --to 645"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "merge m1.tseg m2.tseg -o mm.tseg --summary-block 2"), 0, "%s", out);
    cr_assert(strstr(out, "2 segments -> mm.tseg: 13 chunks copied, 2 encoded again without their deleted samples, "
                          "1 dropped (emptied); 15 chunks written; 40 deleted samples gone;"), "%s", out);
    cr_assert_eq(run(out, sizeof out, "ls mm.tseg"), 0, "%s", out);
    cr_assert(strstr(out, "a\t0\t7\t160\t0\t1990\t") && strstr(out, "b\t1\t4\t100\t0\t990\t") &&
              strstr(out, "c\t2\t4\t100\t1000\t1990\t"), "%s", out);
    cr_assert_eq(run(out, sizeof out, "verify mm.tseg"), 0, "%s", out);
    cr_assert(strstr(out, "3 series, 15 chunks, 360 samples, 7 block summaries"), "%s", out);
    cr_assert_eq(run(out, sizeof out, "cat mm.tseg a --from 230 --to 1010"), 0, "%s", out);
    cr_assert_str_eq(out, "timestamp,value\n230,23\n240,24\n650,65\n660,66\n670,67\n680,68\n690,69\n700,70\n"
                          "710,71\n720,72\n730,73\n740,74\n750,75\n760,76\n770,77\n780,78\n790,79\n800,80\n"
                          "810,81\n820,82\n830,83\n840,84\n850,85\n860,86\n870,87\n880,88\n890,89\n900,90\n"
                          "910,91\n920,92\n930,93\n940,94\n950,95\n960,96\n970,97\n980,98\n990,99\n1000,100\n"
                          "1010,101\n");
    cr_assert_eq(run(out, sizeof out, "quantiles mm.tseg a --q 0.5"), 0, "%s", out);
    cr_assert(strstr(out, "chunks      7 from summaries, 0 decoded"), "%s", out);
    /* Cut again into chunks of 64: a's 160 live samples in 64, 64, 32; the same samples. */
    char before[16384];
    cr_assert_eq(run(before, sizeof before, "decompress mm.tseg -o - --bits"), 0, "%s", before);
    cr_assert_eq(run(out, sizeof out, "merge m1.tseg m2.tseg -o mc.tseg --samples-per-chunk 64 --codec gorilla"), 0,
                 "%s", out);
    cr_assert(strstr(out, "0 chunks copied, 15 encoded again (cut again), 1 dropped (emptied); 7 chunks written;"),
              "%s", out);
    cr_assert_eq(run(out, sizeof out, "ls mc.tseg"), 0, "%s", out);
    cr_assert(strstr(out, "a\t0\t3\t160\t") && strstr(out, "b\t1\t2\t100\t"), "%s", out);
    cr_assert_eq(run(out, sizeof out, "stats mc.tseg --json"), 0, "%s", out);
    cr_assert(strstr(out, "\"codec\": \"gorilla\""), "%s", out);
    cr_assert_eq(run(out, sizeof out, "decompress mc.tseg -o - --bits"), 0, "%s", out);
    cr_assert_str_eq(out, before);
    cr_assert_neq(run(out, sizeof out, "merge m1.tseg -o bad.tseg --samples-per-chunk 0"), 0);
    cr_assert_neq(run(out, sizeof out, "merge m1.tseg -o bad.tseg --samples-per-chunk 64 --codec zstd"), 0);
    /* Refused: no summaries in one, a chunk file, no -o; no file left behind. */
    cr_assert_eq(run(out, sizeof out, "compress m2.csv -o plain.tseg --samples-per-chunk 30"), 0, "%s", out);
    cr_assert_neq(run(out, sizeof out, "merge m1.tseg plain.tseg -o bad.tseg"), 0);
    cr_assert(strstr(out, "merge takes segments whose summaries are alike: m1.tseg has cubic sketches of relative "
                          "accuracy 0.01 (gamma 1.02"), "%s", out);
    cr_assert(strstr(out, ", plain.tseg has none (bad.tseg is unchanged)"), "%s", out);
    cr_assert(!exists("bad.tseg"));
    /* Which segment is unlike, and how (0.50.2: "not mergeable (sketch mappings, or segment units, ...)" for all). */
    cr_assert_eq(run(out, sizeof out, "compress m2.csv -o coarse.tseg --summary --alpha 0.02"), 0, "%s", out);
    cr_assert_neq(run(out, sizeof out, "merge m1.tseg m2.tseg coarse.tseg -o bad.tseg"), 0);
    cr_assert(strstr(out, ", coarse.tseg has cubic sketches of relative accuracy 0.02 (gamma"), "%s", out);
    cr_assert_eq(run(out, sizeof out, "compress m2.csv -o seconds.tseg --ts-unit s"), 0, "%s", out);
    cr_assert_neq(run(out, sizeof out, "merge plain.tseg seconds.tseg -o bad.tseg"), 0);
    cr_assert(strstr(out, "merge takes segments of one timestamp unit: plain.tseg counts ms, seconds.tseg s"), "%s",
              out);
    cr_assert(!exists("bad.tseg"));
    cr_assert_neq(run(out, sizeof out, "merge m1.tseg m1.csv -o bad.tseg"), 0);
    cr_assert(strstr(out, "m1.csv: a text file (CSV?)"), "%s", out);
    write_file("p1.csv", "1,2\n2,3\n");
    cr_assert_eq(run(out, sizeof out, "export-prom p1.csv -o p1.prom"), 0, "%s", out);
    cr_assert_neq(run(out, sizeof out, "merge m1.tseg p1.prom -o bad.tseg"), 0);
    cr_assert(strstr(out, "merge works on segments"), "%s", out);
    cr_assert_neq(run(out, sizeof out, "merge m1.tseg m2.tseg"), 0);
    cr_assert(strstr(out, "merge needs SEGMENT... and -o OUT"), "%s", out);
    cr_assert_neq(run(out, sizeof out, "merge m1.tseg -o bad.tseg --summary-block 0"), 0);
    cr_assert(!exists("bad.tseg"));
}

/* A series argument is a name, else a decimal id: "-1" and an id past 2^64 - 1 are not the id 2^64 - 1 (strtoull
 * read them so); a --from or --to past int64 is refused, not clamped. */
Test(cli, series_and_time_arguments_are_checked)
{
    write_file("ids.csv", "series,timestamp,value\n18446744073709551615,1,2\nx,1,3\n");
    char out[4096];
    cr_assert_eq(run(out, sizeof out, "compress ids.csv -o ids.tseg"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "cat ids.tseg 1"), 0, "%s", out);
    cr_assert_str_eq(out, "timestamp,value\n1,3\n");
    cr_assert_eq(run(out, sizeof out, "cat ids.tseg 18446744073709551615"), 0, "%s", out);
    cr_assert_str_eq(out, "timestamp,value\n1,2\n");
    cr_assert_neq(run(out, sizeof out, "cat ids.tseg -- -1"), 0, "%s", out);
    cr_assert(strstr(out, "no series '-1'"), "%s", out);
    cr_assert_eq(run(out, sizeof out, "cat ids.tseg -1"), 2, "%s", out);
    cr_assert(strstr(out, "unknown option '-1'"), "%s", out);
    cr_assert_neq(run(out, sizeof out, "cat ids.tseg 99999999999999999999"), 0, "%s", out);
    cr_assert(strstr(out, "no series '99999999999999999999'"), "%s", out);
    cr_assert_neq(run(out, sizeof out, "cat ids.tseg x --from 9223372036854775808 --to 9"), 0, "%s", out);
    cr_assert(strstr(out, "--from takes an int64 timestamp"), "%s", out);
    cr_assert_eq(run(out, sizeof out, "cat ids.tseg x --from -9223372036854775808 --to 9223372036854775807"), 0, "%s",
                 out);
    cr_assert_str_eq(out, "timestamp,value\n1,3\n");
}

/* stats --json names the file as a JSON string: quotes and backslashes in a path are escaped. */
Test(cli, stats_json_escapes_the_file_name)
{
    write_file("j.csv", "1,2\n2,3\n");
    char out[4096];
    cr_assert_eq(run(out, sizeof out, "compress j.csv -o 'we\"ird\\x.tseg'"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "stats 'we\"ird\\x.tseg' --json"), 0, "%s", out);
    const char *want = "{\"file\": \"we\\\"ird\\\\x.tseg\", \"codec\": \"tsc2\", \"samples\": 2,";
    cr_assert(!strncmp(out, want, strlen(want)), "%s", out);
}

/* A --q list is decimals in [0, 1]: anything else is refused up front (it was read as 0, or printed raw as a JSON
 * key, or answered "bad parameter" line by line). */
Test(cli, quantile_lists_are_checked)
{
    write_file("q.csv", "timestamp,value\n1,1\n2,2\n3,3\n4,4\n");
    char out[4096];
    cr_assert_eq(run(out, sizeof out, "compress q.csv -o q.tseg --summary"), 0, "%s", out);
    const char *bad[] = {"abc", "1.5", "-0.5", "nan", "inf", "0x0.8", "0.5,", ",0.5", "0.5,,0.9", "'0.5\"'"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char args[128];
        snprintf(args, sizeof args, "quantiles q.tseg --q %s", bad[i]);
        cr_assert_neq(run(out, sizeof out, args), 0, "%s: %s", args, out);
        cr_assert(strstr(out, "--q takes quantiles in [0, 1] separated by commas"), "%s: %s", args, out);
        snprintf(args, sizeof args, "sketch decode %s --json --q %s",
                 "02fd4a815abf52f03f000000000000000004020502440288020207016c02", bad[i]);
        cr_assert_neq(run(out, sizeof out, args), 0, "%s: %s", args, out);
        cr_assert(strstr(out, "--q takes quantiles in [0, 1] separated by commas"), "%s: %s", args, out);
    }
    cr_assert_eq(run(out, sizeof out, "quantiles q.tseg --q 0,1e-3,1 --exact"), 0, "%s", out);
    cr_assert(strstr(out, "\n0        ") && strstr(out, "\n1e-3     ") && strstr(out, "\n1        "), "%s", out);
}

/* --iso writes years before 0000 and after 9999 in ISO 8601's expanded form, signed, which compress reads back to
 * the same integers (`make coverage` showed that form never written). */
Test(cli, iso_years_outside_0_to_9999_read_back)
{
    static const char integers[] = "timestamp,value\n-62198755200000,1\n-62167219200000,1.5\n0,2\n"
                                   "253402300799999,2.5\n253402300800000,3\n253433923200123,4\n";
    write_file("years.csv", integers);
    char out[4096];
    cr_assert_eq(run(out, sizeof out, "compress years.csv -o years.tsc --ts-unit ms"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "decompress years.tsc -o years_iso.csv --iso"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "cat years.tsc --iso"), 0, "%s", out);
    cr_assert_str_eq(out, "timestamp,value\n-0001-01-01T00:00:00.000Z,1\n0000-01-01T00:00:00.000Z,1.5\n"
                          "1970-01-01T00:00:00.000Z,2\n9999-12-31T23:59:59.999Z,2.5\n"
                          "+10000-01-01T00:00:00.000Z,3\n+10001-01-01T00:00:00.123Z,4\n");
    cr_assert_eq(run(out, sizeof out, "compress years_iso.csv -o back.tsc --ts-unit ms"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "cat back.tsc"), 0, "%s", out);
    cr_assert_str_eq(out, integers);
}

/* Date-times convert to int64 in the --ts-unit: the first and last instants int64 holds in ns read exactly (and print
 * back in ISO form); one ns beyond, or a year past 2262 in ns, is a bad timestamp with its line, never a wrapped one
 * (2300 once came back as 1715). */
Test(cli, date_times_past_the_units_int64_range_are_refused)
{
    write_file("edge.csv", "timestamp,value\n1677-09-21 00:12:43.145224192Z,1\n2262-04-11T23:47:16.854775807Z,2\n");
    char out[4096];
    cr_assert_eq(run(out, sizeof out, "compress edge.csv -o edge.tseg --ts-unit ns"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "cat edge.tseg edge"), 0, "%s", out);
    cr_assert_str_eq(out, "timestamp,value\n-9223372036854775808,1\n9223372036854775807,2\n");
    cr_assert_eq(run(out, sizeof out, "cat edge.tseg edge --iso"), 0, "%s", out);
    cr_assert_str_eq(out, "timestamp,value\n1677-09-21T00:12:43.145224192Z,1\n2262-04-11T23:47:16.854775807Z,2\n");
    write_file("late.csv", "timestamp,value\n2262-04-11T23:47:16.854775808Z,1\n");
    cr_assert_neq(run(out, sizeof out, "compress late.csv -o late.tseg --ts-unit ns"), 0);
    cr_assert(strstr(out, "line 2: bad timestamp '2262-04-11T23:47:16.854775808Z'"), "%s", out);
    write_file("early.csv", "1677-09-21 00:12:43.145224191Z,1\n");
    cr_assert_neq(run(out, sizeof out, "compress early.csv -o early.tseg --ts-unit ns"), 0);
    cr_assert(strstr(out, "line 1: bad timestamp"), "%s", out);
    write_file("far.csv", "2300-01-01 00:00:00,1\n2300-01-01 00:00:01,2\n");
    cr_assert_neq(run(out, sizeof out, "compress far.csv -o far.tseg --ts-unit ns"), 0);
    cr_assert(strstr(out, "line 1: bad timestamp '2300-01-01 00:00:00'"), "%s", out);
    cr_assert(!exists("far.tseg") && !exists("late.tseg") && !exists("early.tseg"));
    cr_assert_eq(run(out, sizeof out, "compress far.csv -o far_us.tseg --ts-unit us"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "cat far_us.tseg far"), 0, "%s", out);
    cr_assert_str_eq(out, "timestamp,value\n10413792000000000,1\n10413792001000000,2\n");
}

/* A series name is kept up to 4,096 bytes (the segment format's limit): one longer is refused with its start, and no
 * file is written (`make coverage` showed that refusal never met). */
Test(cli, a_series_name_over_4096_bytes_is_refused)
{
    static char csv[2 * 4097 + 64];
    for (size_t len = 4096; len <= 4097; len++) {
        size_t at = (size_t)snprintf(csv, sizeof csv, "series,timestamp,value\n");
        memset(csv + at, len == 4096 ? 'k' : 'r', len);
        snprintf(csv + at + len, sizeof csv - at - len, ",1,2\n");
        write_file("long_name.csv", csv);
        char out[8192];
        int rc = run(out, sizeof out, len == 4096 ? "compress long_name.csv -o kept.tseg"
                                                  : "compress long_name.csv -o refused.tseg");
        if (len == 4096) {
            cr_assert_eq(rc, 0, "%s", out);
            cr_assert_eq(run(out, sizeof out, "ls kept.tseg"), 0, "%s", out);
            cr_assert(strstr(out, "kkkk\t0\t1\t1\t1\t1\t"), "%s", out);
        } else {
            cr_assert_neq(rc, 0);
            cr_assert(strstr(out, "series name longer than 4096 bytes: 'rrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrr...'"),
                      "%s", out);
            cr_assert(!exists("refused.tseg"));
        }
    }
}

/* A Prometheus file whose second chunk is damaged inside (its record intact): every command that reads it names that
 * chunk the same way, "chunk 1 is damaged" (0.57.3; decompress and import-prom said "damaged chunk 1", stats gave
 * no number), and leaves no output file. */
Test(cli, a_damaged_chunk_of_a_prometheus_file_is_named_alike)
{
    char csv[65536];
    size_t len = 0;
    for (int i = 0; i < 1000; i++)
        len += (size_t)snprintf(csv + len, sizeof csv - len, "%lld,%d.25\n", 1700000000000LL + i * 15000LL, i % 37);
    write_file("dp.csv", csv);
    char out[4096], path[512];
    cr_assert_eq(run(out, sizeof out, "export-prom dp.csv -o dp.bin"), 0, "%s", out);
    snprintf(path, sizeof path, "%s/dp.bin", workdir);
    test_file f = test_read_file(path);
    size_t at = 0, second = 0, second_len = 0;
    for (int record = 0; record < 2; record++) { /* records: a uvarint length and the chunk */
        uint64_t record_len = take_test_uvarint(f.data, &at);
        second = at;
        second_len = (size_t)record_len;
        at += (size_t)record_len;
    }
    f.data[second + second_len / 2] ^= 0xff;
    write_bytes("dp_bad.bin", f.data, f.size);
    free(f.data);
    static const char *cmds[] = {"decompress dp_bad.bin -o dp_bad.csv", "stats dp_bad.bin", "stats dp_bad.bin --json",
                                 "ls dp_bad.bin", "verify dp_bad.bin", "import-prom dp_bad.bin -o dp_bad.tseg"};
    for (size_t k = 0; k < sizeof cmds / sizeof cmds[0]; k++) {
        cr_assert_eq(run(out, sizeof out, cmds[k]), 1, "%s: %s", cmds[k], out);
        cr_assert(strstr(out, "dp_bad.bin: chunk 1 is damaged: "), "%s: %s", cmds[k], out);
    }
    cr_assert(!exists("dp_bad.csv") && !exists("dp_bad.tseg"));
}

/* Overlapping chunks of one series with equal timestamps inside and across them: `cat` merges them in time order and,
 * among equal timestamps, in the order the file holds them (`make coverage` showed that tie never met). */
Test(cli, cat_keeps_file_order_among_equal_timestamps)
{
    char csv[4096] = "series,timestamp,value\n", want[4096] = "timestamp,value\n500,0\n";
    size_t at = strlen(csv), wat = strlen(want);
    for (int v = 1; v <= 40; v++) { /* time goes back to 500 after the 20th: a second chunk */
        if (v == 21) at += (size_t)snprintf(csv + at, sizeof csv - at, "a,500,0\n");
        at += (size_t)snprintf(csv + at, sizeof csv - at, "a,1000,%d\n", v);
        wat += (size_t)snprintf(want + wat, sizeof want - wat, "1000,%d\n", v);
    }
    write_file("ties.csv", csv);
    char out[4096];
    cr_assert_eq(run(out, sizeof out, "compress ties.csv -o ties.tseg"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "ls ties.tseg"), 0, "%s", out);
    cr_assert(strstr(out, "\na\t0\t2\t41\t500\t1000\t"), "two chunks: %s", out);
    cr_assert_eq(run(out, sizeof out, "cat ties.tseg a"), 0, "%s", out);
    cr_assert_str_eq(out, want);
}

/* Overlapping chunks of one series (time went back) whose samples are all deleted: `cat` merges nothing
 * (under `make asan` this once sorted a NULL array, which UBSan refuses). */
Test(cli, cat_of_overlapping_chunks_all_deleted)
{
    write_file("o.csv", "series,timestamp,value\na,1000,1\na,2000,2\na,3000,3\na,1500,4\na,2500,5\nb,1000,7\n");
    char out[4096];
    cr_assert_eq(run(out, sizeof out, "compress o.csv -o o.tseg"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "ls o.tseg"), 0, "%s", out);
    cr_assert(strstr(out, "a\t0\t2\t5\t1000\t3000\t"), "two overlapping chunks: %s", out);
    cr_assert_eq(run(out, sizeof out, "cat o.tseg a"), 0, "%s", out);
    cr_assert_str_eq(out, "timestamp,value\n1000,1\n1500,4\n2000,2\n2500,5\n3000,3\n");
    cr_assert_eq(run(out, sizeof out, "delete o.tseg a --from 1000 --to 3000"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "cat o.tseg a"), 0, "%s", out);
    cr_assert_str_eq(out, "timestamp,value\n");
    cr_assert_eq(run(out, sizeof out, "cat o.tseg a --from 1000 --to 3000"), 0, "%s", out);
    cr_assert_str_eq(out, "timestamp,value\n");
    cr_assert_eq(run(out, sizeof out, "cat o.tseg b"), 0, "%s", out);
    cr_assert_str_eq(out, "timestamp,value\n1000,7\n");
}

/* A line of `decompress` (file order) as `cat` must print it: its time, its place in the file, its text. */
typedef struct {
    long long ts;
    size_t seq;
    const char *text; /* "ts,value", inside the decompressed output */
    size_t len;
} cat_line;

static int by_ts_then_file_order(const void *a, const void *b)
{
    const cat_line *x = a, *y = b;
    if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

/* What `cat FILE a --from from --to to` prints, from decompress's `series,timestamp,value` lines: a's samples in
 * [from, to], sorted by time, equal times in file order (the order compress was given them). */
static void expected_cat(const char *decompressed, long long from, long long to, char *want, size_t cap)
{
    static cat_line lines[8192];
    size_t n = 0, at = (size_t)snprintf(want, cap, "timestamp,value\n");
    for (const char *p = strchr(decompressed, '\n') + 1; *p; p = strchr(p, '\n') + 1) {
        if (!strncmp(p, "a,", 2)) {
            cr_assert_lt(n, sizeof lines / sizeof lines[0]);
            lines[n] = (cat_line){strtoll(p + 2, NULL, 10), n, p + 2, (size_t)(strchr(p, '\n') - p - 1)};
            n += lines[n].ts >= from && lines[n].ts <= to;
        }
    }
    qsort(lines, n, sizeof lines[0], by_ts_then_file_order);
    for (size_t i = 0; i < n; i++) {
        cr_assert_lt(at + lines[i].len, cap);
        memcpy(want + at, lines[i].text, lines[i].len);
        at += lines[i].len;
    }
    want[at] = 0;
}

/* 0.57.6: cat streams a series group by group of overlapping chunks (before, it sorted all its samples at once:
 * 366 MB for 10 M samples). Against a stable sort of decompress's lines, on a series whose time goes back now and
 * then (chunks overlapping one, several or none of the others), with equal times inside and across chunks, whole
 * and in ranges, before and after a delete. */
Test(cli, cat_is_a_stable_time_sort_of_the_series)
{
    static char csv[1 << 17], decompressed[1 << 17], got[1 << 17], want[1 << 17];
    size_t at = (size_t)snprintf(csv, sizeof csv, "series,timestamp,value\n");
    uint64_t rng = 12345;
    long long ts = 100000;
    for (int i = 0; i < 4000; i++) {
        rng = rng * 6364136223846793005u + 1442695040888963407u;
        unsigned r = (unsigned)(rng >> 33);
        if (r % 97 == 0) ts -= (long long)(r >> 8) % 900; /* back: a new chunk over earlier ones */
        else if (r % 89 == 0) ts += 5000; /* a gap */
        else ts += (r >> 8) % 4; /* 0: a tie */
        at += (size_t)snprintf(csv + at, sizeof csv - at, "a,%lld,%d\n", ts, i);
        if (i % 40 == 0) at += (size_t)snprintf(csv + at, sizeof csv - at, "b,%lld,%d\n", ts, -i);
        cr_assert_lt(at, sizeof csv);
    }
    write_file("stable.csv", csv);
    cr_assert_eq(run(got, sizeof got, "compress stable.csv -o stable.tseg --samples-per-chunk 37"), 0, "%s", got);
    long long ranges[][2] = {{LLONG_MIN, LLONG_MAX}, {100500, 103000}, {ts - 3000, ts - 2000}, {0, 100000}};
    for (int pass = 0; pass < 2; pass++) {
        cr_assert_eq(run(decompressed, sizeof decompressed, "decompress stable.tseg -o -"), 0, "%s", decompressed);
        for (size_t k = 0; k < sizeof ranges / sizeof ranges[0]; k++) {
            char args[128];
            snprintf(args, sizeof args, "cat stable.tseg a --from %lld --to %lld", ranges[k][0], ranges[k][1]);
            expected_cat(decompressed, ranges[k][0], ranges[k][1], want, sizeof want);
            cr_assert_eq(run(got, sizeof got, args), 0, "%s: %s", args, got);
            cr_assert_str_eq(got, want, "%s (pass %d)", args, pass);
        }
        char del[128];
        snprintf(del, sizeof del, "delete stable.tseg a --from %lld --to %lld", ranges[1][0] + 700, ranges[1][1] - 900);
        cr_assert_eq(run(got, sizeof got, del), 0, "%s", got);
    }
}

/* Codec 2 is the default (--codec tsc2), Gorilla selectable: the same exact round trip, stats name the codec and split the bits. */
Test(cli, codec_tsc2_round_trips_and_reports_its_bits)
{
    char csv[200000], *p = csv;
    p += sprintf(p, "series,timestamp,value\n");
    for (int i = 0; i < 3000; i++)
        p += sprintf(p, "%s,%d,%s\n", i % 3 ? "cpu" : "mem", 1700000000 + i * 15 + (i % 7 == 0),
                     i % 97 == 0 ? "NaN" : i % 89 == 0 ? "-0" : i % 5 ? "12.25" : "0.1");
    write_file("in.csv", csv);
    char out[8192];
    cr_assert_eq(run(out, sizeof out, "compress in.csv -o g.tsc --codec gorilla --samples-per-chunk 500"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "compress in.csv -o t.tsc --samples-per-chunk 500"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "verify t.tsc"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "decompress g.tsc -o g.csv --bits"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "decompress t.tsc -o t.csv --bits"), 0, "%s", out);
    cr_assert_str_eq(read_file("t.csv"), read_file("g.csv"));
    cr_assert_eq(run(out, sizeof out, "stats t.tsc --json"), 0, "%s", out);
    cr_assert(strstr(out, "\"codec\": \"tsc2\""), "%s", out);
    cr_assert(strstr(out, "\"samples\": 3000,"), "%s", out);
    double bpt = -1, bpv = -1;
    const char *t = strstr(out, "\"bits_per_timestamp\": "), *v = strstr(out, "\"bits_per_value\": ");
    cr_assert(t && v);
    sscanf(t + strlen("\"bits_per_timestamp\": "), "%lf", &bpt);
    sscanf(v + strlen("\"bits_per_value\": "), "%lf", &bpv);
    cr_assert(bpt > 0 && bpt < 8 && bpv > 0 && bpv < 16, "ts %f value %f: %s", bpt, bpv, out);
    cr_assert_eq(run(out, sizeof out, "stats g.tsc --json"), 0, "%s", out);
    cr_assert(strstr(out, "\"codec\": \"gorilla\""), "%s", out);
    cr_assert_neq(run(out, sizeof out, "compress in.csv -o x.tsc --codec zstd"), 0);
    cr_assert(strstr(out, "known: gorilla, tsc2"), "%s", out);
}

/* Decimals round to the nearest double as strtod does (README "The CLI"): past the double range to +-Inf, below the
 * smallest subnormal to +-0, the smallest subnormal itself exactly; -0 keeps its sign. */
Test(cli, decimals_round_to_the_nearest_double)
{
    write_file("round.csv", "timestamp,value\n1,1e400\n2,-1e400\n3,1e-400\n4,-1e-400\n5,4.9e-324\n6,-0\n");
    char out[4096];
    cr_assert_eq(run(out, sizeof out, "compress round.csv -o round.tseg"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "cat round.tseg round --bits"), 0, "%s", out);
    cr_assert_str_eq(out, "timestamp,value\n1,0x7ff0000000000000\n2,0xfff0000000000000\n3,0x0000000000000000\n"
                          "4,0x8000000000000000\n5,0x0000000000000001\n6,0x8000000000000000\n");
}

/* A date is checked against its month (2023-02-29 once read as 2023-03-01), an offset against 23:59; second 60 only
 * where a leap second can be (23:59:60 UTC, whatever the offset), read as the next second; RFC 3339's lower-case
 * t and z. */
Test(cli, date_times_are_checked_against_the_calendar)
{
    const char *bad[] = {"2023-02-29 00:00:00", "1900-02-29 00:00:00", "2024-04-31 00:00:00", "2024-02-30T00:00:00Z",
                         "2024-06-30 12:30:60", "2024-01-01T00:00:00+24:00", "2024-01-01T00:00:00+05:60",
                         "2016-12-31T23:59:60+01:00", "2023-02-29", "2024-01-01T", "2024-01-01Z",
                         "2024-1-01"};
    char out[4096], csv[128];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(csv, sizeof csv, "timestamp,value\n%s,1\n", bad[i]);
        write_file("cal.csv", csv);
        cr_assert_neq(run(out, sizeof out, "compress cal.csv -o cal.tseg"), 0, "%s: %s", bad[i], out);
        cr_assert(strstr(out, "line 2: bad timestamp"), "%s: %s", bad[i], out);
    }
    write_file("cal.csv", "timestamp,value\n2000-02-29 00:00:00,1\n2016-12-31T23:59:60Z,2\n"
                          "2017-06-30T20:29:60-03:30,3\n2024-01-01t00:00:00z,4\n");
    cr_assert_eq(run(out, sizeof out, "compress cal.csv -o cal.tseg"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "cat cal.tseg cal --iso"), 0, "%s", out);
    cr_assert_str_eq(out, "timestamp,value\n2000-02-29T00:00:00.000Z,1\n2017-01-01T00:00:00.000Z,2\n"
                          "2017-07-01T00:00:00.000Z,3\n2024-01-01T00:00:00.000Z,4\n");
    /* A date alone (a daily series) is its midnight UTC (0.46.4), in a headerless file too; one sample and one chunk
     * are counted in the singular. */
    write_file("one.csv", "2020-01-02,300.35\n");
    cr_assert_eq(run(out, sizeof out, "compress one.csv -o one.tseg"), 0, "%s", out);
    cr_assert(strstr(out, "one.csv -> one.tseg: 1 sample (0 empty values skipped), 1 series, 1 chunk, "), "%s", out);
    cr_assert_eq(run(out, sizeof out, "verify one.tseg"), 0, "%s", out);
    cr_assert(strstr(out, "one.tseg: ok (segment v3, 1 series, 1 chunk, 1 sample)"), "%s", out);
    write_file("daily.csv", "2020-01-02,300.35\n2020-01-03,297.43\n2020-02-29,299.8\n");
    cr_assert_eq(run(out, sizeof out, "compress daily.csv -o daily.tseg --ts-unit s"), 0, "%s", out);
    cr_assert(strstr(out, ": 3 samples"), "%s", out);
    cr_assert_eq(run(out, sizeof out, "decompress daily.tseg -o -"), 0, "%s", out);
    cr_assert_str_eq(out, "timestamp,value\n1577923200,300.35\n1578009600,297.43\n1582934400,299.8\n");
    cr_assert_eq(run(out, sizeof out, "cat daily.tseg daily --from 2020-01-03 --to 2020-02-29"), 0, "%s", out);
    cr_assert_str_eq(out, "timestamp,value\n1578009600,297.43\n1582934400,299.8\n");
}

/* Series names are CSV fields as RFC 4180 quotes them: a Prometheus-style name with commas and quotes, spaces kept
 * inside quotes; decompress quotes what needs it, so its output compresses to the same series. A quote left open on
 * its line, or text after a closing quote, is a malformed line. */
Test(cli, quoted_series_names_round_trip)
{
    write_file("quoted.csv", "series,timestamp,value\n\"cpu{host=\"\"a\"\",core=1}\",1,2\n\" spaced \",1,5\n"
                             "plain,1,\"7.5\"\n\"cpu{host=\"\"a\"\",core=1}\",2,3\n");
    char out[4096];
    cr_assert_eq(run(out, sizeof out, "compress quoted.csv -o quoted.tseg"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "cat quoted.tseg 'cpu{host=\"a\",core=1}'"), 0, "%s", out);
    cr_assert_str_eq(out, "timestamp,value\n1,2\n2,3\n");
    cr_assert_eq(run(out, sizeof out, "decompress quoted.tseg -o quoted_back.csv"), 0, "%s", out);
    cr_assert_str_eq(read_file("quoted_back.csv"), "series,timestamp,value\n\"cpu{host=\"\"a\"\",core=1}\",1,2\n"
                                                   "\"cpu{host=\"\"a\"\",core=1}\",2,3\n\" spaced \",1,5\nplain,1,7.5\n");
    cr_assert_eq(run(out, sizeof out, "compress quoted_back.csv -o quoted_back.tseg"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "ls quoted_back.tseg"), 0, "%s", out);
    cr_assert(strstr(out, "\ncpu{host=\"a\",core=1}\t0\t1\t2\t") && strstr(out, "\n spaced \t1\t"), "%s", out);
    write_file("quoted_wide.csv", "ts,\"load{cpu=\"\"0\"\",mode=idle}\",plain\n1,\"0.5\",1\n2,,2\n");
    cr_assert_eq(run(out, sizeof out, "compress quoted_wide.csv -o quoted_wide.tseg --wide"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "decompress quoted_wide.tseg -o -"), 0, "%s", out);
    cr_assert_str_eq(out, "series,timestamp,value\n\"load{cpu=\"\"0\"\",mode=idle}\",1,0.5\nplain,1,1\nplain,2,2\n");
    const char *bad[] = {"\"open,1,2\n", "\"a\"b,1,2\n"};
    for (size_t i = 0; i < 2; i++) {
        write_file("badq.csv", bad[i]);
        cr_assert_neq(run(out, sizeof out, "compress badq.csv -o badq.tseg"), 0, "%s", bad[i]);
        cr_assert(strstr(out, "line 1: a quoted field is not closed"), "%s", out);
    }
}

/* A series or a file named like an option is reached after "--" (before 0.50.0 a series named --all or -o could not
 * be named at all, and an unknown option after the input was taken for a series name: "no series '--bogus'"). */
Test(cli, operands_named_like_options_follow_a_double_dash)
{
    write_file("dashes.csv", "series,timestamp,value\n--all,1,2\n-o,1,5\n--all,2,3\n");
    char out[4096];
    cr_assert_eq(run(out, sizeof out, "compress dashes.csv -o ./--odd.tseg"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "cat -- --odd.tseg --all"), 0, "%s", out);
    cr_assert_str_eq(out, "timestamp,value\n1,2\n2,3\n");
    cr_assert_eq(run(out, sizeof out, "cat --from 2 -- --odd.tseg --all"), 0, "%s", out);
    cr_assert_str_eq(out, "timestamp,value\n2,3\n");
    cr_assert_eq(run(out, sizeof out, "quantiles --q 0.5 --json -- --odd.tseg -o"), 0, "%s", out);
    cr_assert(strstr(out, "\"samples\": 1"), "%s", out);
    cr_assert_eq(run(out, sizeof out, "merge -o merged.tseg -- --odd.tseg"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "cat merged.tseg -- -o"), 0, "%s", out);
    cr_assert_str_eq(out, "timestamp,value\n1,5\n");
    const char *refused[][2] = {{"cat merged.tseg --all", "cat does not take --all"},
                                {"cat merged.tseg --bogus", "unknown option '--bogus' (a file or series named so goes"},
                                {"merge -o m2.tseg --odd.tseg", "unknown option '--odd.tseg'"},
                                {"cat -- merged.tseg -o --all", "unexpected argument '--all'"}};
    for (size_t i = 0; i < 4; i++) {
        cr_assert_eq(run(out, sizeof out, refused[i][0]), 2, "%s: %s", refused[i][0], out);
        cr_assert(strstr(out, refused[i][1]), "%s: %s", refused[i][0], out);
    }
}

/* A --wide table of 1,024 series series_0000.. with one row at time 1 (series_N holds N.25), in `name`, its last
 * line without a line break. */
static void write_wide_1k(const char *name)
{
    size_t columns = 1024, cap = 64 * 1024;
    char *table = malloc(cap);
    cr_assert(table);
    size_t n = (size_t)snprintf(table, cap, "ts");
    for (size_t c = 0; c < columns; c++) n += (size_t)snprintf(table + n, cap - n, ",series_%04zu", c);
    n += (size_t)snprintf(table + n, cap - n, "\n1");
    for (size_t c = 0; c < columns; c++) n += (size_t)snprintf(table + n, cap - n, ",%zu.25", c);
    write_bytes(name, table, n);
    free(table);
}

/* Lines of any length to 1 MiB (a --wide table of 1,024 series is 40 KB a line; 8 KB once stopped it), a last line
 * without a line break; a NUL byte inside a line is refused (fgets once cut the line there and dropped the rest
 * unseen), and so is a line past 1 MiB, read without holding more than that. */
Test(cli, lines_are_read_whole)
{
    write_wide_1k("wide1k.csv");
    char out[4096];
    cr_assert_eq(run(out, sizeof out, "compress wide1k.csv -o wide1k.tseg --wide"), 0, "%s", out);
    cr_assert(strstr(out, "1024 samples (0 empty values skipped), 1024 series"), "%s", out);
    cr_assert_eq(run(out, sizeof out, "cat wide1k.tseg series_1023"), 0, "%s", out);
    cr_assert_str_eq(out, "timestamp,value\n1,1023.25\n");

    static const char with_nul[] = "timestamp,value\n1,2\n2,3\0,9\n3,4\n";
    write_bytes("nul.csv", with_nul, sizeof with_nul - 1);
    cr_assert_neq(run(out, sizeof out, "compress nul.csv -o nul.tseg"), 0, "%s", out);
    cr_assert(strstr(out, "nul.csv: line 3: holds a NUL byte"), "%s", out);

    size_t long_size = (1u << 20) + 100;
    char *long_line = malloc(long_size);
    memcpy(long_line, "timestamp,value\n1,", 18);
    memset(long_line + 18, '1', long_size - 18);
    write_bytes("long.csv", long_line, long_size);
    cr_assert_neq(run(out, sizeof out, "compress long.csv -o long.tseg"), 0, "%s", out);
    cr_assert(strstr(out, "long.csv: line 2: longer than 1 MiB"), "%s", out);
    free(long_line);
}

/* cat and one series' quantiles open a segment lazily: they read the series-table and index blocks they need, so
 * damage elsewhere does not stop them, while ls and verify, which read everything, report it; a name search that
 * reaches the damage says the segment is broken rather than that the series is absent. */
Test(cli, cat_reads_only_the_blocks_it_needs)
{
    write_wide_1k("lazy.csv");
    char out[4096];
    cr_assert_eq(run(out, sizeof out, "compress lazy.csv -o lazy.tseg --wide"), 0, "%s", out);
    char path[512];
    snprintf(path, sizeof path, "%s/lazy.tseg", workdir);
    FILE *f = fopen(path, "rb");
    cr_assert(f);
    size_t cap = 64 * 1024;
    char *table = malloc(cap);
    cr_assert(table);
    size_t size = fread(table, 1, cap, f);
    fclose(f);
    cr_assert(size > 0 && size < cap);
    size_t at = 0; /* series_1000's name, in the series table's 16th block of 64 */
    while (at + 11 <= size && memcmp(table + at, "series_1000", 11) != 0) at++;
    cr_assert(at + 11 <= size, "no name in the file");
    /* A flipped byte in what follows the names (the index and the footer) never gives a wrong or empty answer
     * with a zero exit: cat checks the index blocks it reads (one of them, lazily read, once went unchecked). */
    size_t tail = at + 11; /* past series_1023's name, the last */
    while (tail < size && memcmp(table + tail - 11, "series_1023", 11) != 0) tail++;
    cr_assert(tail < size, "no last name");
    for (size_t p = tail; p < size; p += 11) {
        table[p] ^= 0x10;
        write_bytes("lazy_flip.tseg", table, size);
        table[p] ^= 0x10;
        if (run(out, sizeof out, "cat lazy_flip.tseg series_1023") == 0)
            cr_assert_str_eq(out, "timestamp,value\n1,1023.25\n", "byte %zu flipped", p);
    }
    table[at + 7] ^= 1;
    write_bytes("lazy_bad.tseg", table, size);
    free(table);
    cr_assert_eq(run(out, sizeof out, "cat lazy_bad.tseg series_0005"), 0, "%s", out);
    cr_assert_str_eq(out, "timestamp,value\n1,5.25\n");
    cr_assert_eq(run(out, sizeof out, "quantiles lazy_bad.tseg series_0005 --q 0.5"), 0, "%s", out);
    cr_assert(strstr(out, "samples     1 in range"), "%s", out);
    cr_assert_neq(run(out, sizeof out, "ls lazy_bad.tseg"), 0, "%s", out);
    cr_assert_neq(run(out, sizeof out, "verify lazy_bad.tseg"), 0, "%s", out);
    cr_assert_neq(run(out, sizeof out, "cat lazy_bad.tseg series_1023"), 0, "%s", out);
    cr_assert(strstr(out, "broken segment") && !strstr(out, "no series"), "%s", out);
    cr_assert_neq(run(out, sizeof out, "quantiles lazy_bad.tseg 1023"), 0, "%s", out);
    cr_assert(strstr(out, "broken segment"), "%s", out);
}

/* `-o -` is stdout for decompress's text; the binary writers refuse it instead of creating a file named "-". */
Test(cli, binary_outputs_are_not_written_to_stdout)
{
    write_file("one.csv", "timestamp,value\n1,2\n");
    char out[4096];
    const char *cmds[] = {"compress one.csv -o -", "export-prom one.csv -o -", "import-prom one.csv -o -"};
    for (size_t i = 0; i < 3; i++) {
        cr_assert_neq(run(out, sizeof out, cmds[i]), 0, "%s: %s", cmds[i], out);
        cr_assert(strstr(out, "needs -o OUT, a file (not stdout)"), "%s: %s", cmds[i], out);
        cr_assert(!exists("-"), "%s", cmds[i]);
    }
    cr_assert_eq(run(out, sizeof out, "compress one.csv -o one.tseg"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "decompress one.tseg -o -"), 0, "%s", out);
    cr_assert_str_eq(out, "timestamp,value\n1,2\n");
}

/* ls is a tab-separated table: a name holding a tab (possible inside CSV quotes) shows it as \x09, one row a series. */
Test(cli, ls_escapes_control_bytes_in_names)
{
    write_file("tab.csv", "series,timestamp,value\n\"a\tb\",1,2\nplain,1,3\n");
    char out[4096];
    cr_assert_eq(run(out, sizeof out, "compress tab.csv -o tab.tseg"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "ls tab.tseg"), 0, "%s", out);
    cr_assert_str_eq(out, "series\tid\tchunks\tsamples\tfirst_ts\tlast_ts\tbytes\na\\x09b\t0\t1\t1\t1\t1\t8\n"
                          "plain\t1\t1\t1\t1\t1\t8\n");
}

/* A file the system refuses says why (errno's text, or what is wrong with it): a directory as the output, a directory
 * that does not exist (before the input is read). */
Test(cli, file_errors_say_why)
{
    write_file("why.csv", "timestamp,value\n1,2\n");
    char out[4096];
    cr_assert_eq(system("mkdir -p /tmp/tschunk_cli_why_dir"), 0);
    cr_assert_neq(run(out, sizeof out, "compress why.csv -o /tmp/tschunk_cli_why_dir"), 0, "%s", out);
    cr_assert(strstr(out, "/tmp/tschunk_cli_why_dir is not a regular file"), "%s", out);
    cr_assert_neq(run(out, sizeof out, "compress why.csv -o no_such_dir/x.tseg"), 0, "%s", out);
    cr_assert(strstr(out, "cannot create no_such_dir/x.tseg: No such file or directory"), "%s", out);
    /* Said before the input is read (0.57.3; after it before, which can take minutes): a malformed input is not
     * reached. */
    write_file("why_bad.csv", "timestamp,value\nnot a line\n");
    cr_assert_eq(run(out, sizeof out, "compress why_bad.csv -o no_such_dir/x.tseg"), 1, "%s", out);
    cr_assert(strstr(out, "cannot create no_such_dir/x.tseg: No such file or directory") && !strstr(out, "line 2"),
              "%s", out);
    cr_assert_eq(run(out, sizeof out, "compress why.csv -o why.tseg"), 0, "%s", out);
    cr_assert_neq(run(out, sizeof out, "decompress why.tseg -o no_such_dir/x.csv"), 0, "%s", out);
    cr_assert(strstr(out, ": No such file or directory"), "%s", out);
    cr_assert_eq(system("rmdir /tmp/tschunk_cli_why_dir"), 0);
}

/* sketch encode reads whole lines: a 600-digit value is one value (512-byte reads once made it two, 1 and 0); a
 * last line without a break counts; a NUL byte is refused with its line. */
Test(cli, sketch_encode_reads_whole_lines)
{
    char *text = malloc(700);
    memcpy(text, "1.", 2);
    memset(text + 2, '0', 600);
    memcpy(text + 602, "\n2\n3", 5);
    write_file("long_values.txt", text);
    free(text);
    char out[4096], hex[4160];
    cr_assert_eq(run(out, sizeof out, "sketch encode < long_values.txt"), 0, "%s", out);
    out[strcspn(out, "\n")] = 0;
    snprintf(hex, sizeof hex, "sketch decode %s --json", out);
    cr_assert_eq(run(out, sizeof out, hex), 0, "%s", out);
    cr_assert(strstr(out, "\"count\": 3,"), "%s", out);
    write_bytes("nul_values.txt", "1\n2\0\n", 5);
    cr_assert_neq(run(out, sizeof out, "sketch encode < nul_values.txt"), 0, "%s", out);
    cr_assert(strstr(out, "line 2: holds a NUL byte"), "%s", out);
}

/* Output the system refuses is a failure, never a success with the output lost: every command that prints to
 * stdout exits 1 naming the write error when stdout is a full device (they exited 0 before 0.45.5, but for
 * decompress and cat). Each succeeds into /dev/null first, so that the failure is the write's alone. */
Test(cli, stdout_write_errors_exit_1)
{
    cr_assert_eq(access("/dev/full", W_OK), 0, "the test needs /dev/full");
    write_file("w.csv", "timestamp,value\n1,2\n2,3.5\n3,-1\n");
    write_file("w_values.txt", "1\n2\n");
    char out[4096], line[256];
    cr_assert_eq(run(out, sizeof out, "compress w.csv -o w.tseg --summary"), 0, "%s", out);
    const char *cmds[] = {"ls w.tseg", "stats w.tseg", "stats w.tseg --json", "cat w.tseg w", "decompress w.tseg -o -",
                          "quantiles w.tseg w", "sketch encode < w_values.txt", "sketch decode 02fd4a815abf52f03f000000000000000005010002 --json", "version",
                          "help"};
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        snprintf(line, sizeof line, "$T %s > /dev/null", cmds[i]);
        cr_assert_eq(run_script(out, sizeof out, line), 0, "%s: %s", cmds[i], out);
        snprintf(line, sizeof line, "$T %s > /dev/full", cmds[i]);
        cr_assert_eq(run_script(out, sizeof out, line), 1, "%s: %s", cmds[i], out);
        cr_assert(strstr(out, "write error") && strstr(out, "No space left on device"), "%s: %s", cmds[i], out);
    }
}

/* Names of the work directory's files holding `part` (a writer's temporary files hold ".tmp."). */
static int files_named_with(const char *part)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "ls -a '%s' | grep -c -F -e '%s'", workdir, part);
    char out[64];
    return atoi(run_line(out, sizeof out, cmd) <= 1 ? out : "-1");
}

/* A full disk (a file size limit, SIGXFSZ ignored so that writes fail with EFBIG) in the middle of writing: every
 * writer exits non-zero saying why, leaves neither the output nor a temporary file, and a file rewritten in place
 * (delete, compact) keeps its old bytes. */
Test(cli, a_full_disk_leaves_no_half_written_file)
{
    char path[512];
    snprintf(path, sizeof path, "%s/big.csv", workdir);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fprintf(f, "timestamp,value\n");
    uint64_t x = 88172645463325252ull;
    for (int i = 0; i < 20000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        fprintf(f, "%d,%.17g\n", 1000 + 15 * i, (double)(x >> 11) * 0x1p-53);
    }
    fclose(f);
    char out[4096], line[512];
    cr_assert_eq(run(out, sizeof out, "compress big.csv -o big.tseg --summary"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "export-prom big.csv -o big.prom"), 0, "%s", out);
    snprintf(path, sizeof path, "%s/big.tseg", workdir);
    test_file before = test_read_file(path);
    const char *cmds[] = {"compress big.csv -o o1", "compress big.csv -o o2 --summary --codec gorilla",
                          "export-prom big.csv -o o3", "import-prom big.prom -o o4", "decompress big.tseg -o o5",
                          "compact big.tseg -o o6", "merge big.tseg -o o7", "delete big.tseg big --from 0 --to 2000",
                          "compact big.tseg"};
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        snprintf(line, sizeof line, "trap '' XFSZ; ulimit -f 16; $T %s", cmds[i]);
        cr_assert_neq(run_script(out, sizeof out, line), 0, "%s: %s", cmds[i], out);
        cr_assert(strstr(out, "File too large"), "%s: %s", cmds[i], out);
        cr_assert_eq(files_named_with(".tmp."), 0, "%s left a temporary file", cmds[i]);
        char name[4] = {'o', (char)('1' + i), 0};
        cr_assert(i >= 7 || !exists(name), "%s left its output", cmds[i]);
    }
    test_file after = test_read_file(path);
    cr_assert(after.size == before.size && !memcmp(after.data, before.data, before.size), "big.tseg changed");
    free(before.data);
    free(after.data);
    cr_assert_eq(run(out, sizeof out, "verify big.tseg"), 0, "%s", out);
}

/* export-prom --verify reads the file back and compares every sample; version and help print to stdout; a wrong
 * sketch command line is named. */
Test(cli, export_verify_version_help_and_sketch_usage)
{
    write_file("ev.csv", "timestamp,value\n1000,1.5\n2000,-0\n3000,nan\n");
    char out[4096], want[64];
    cr_assert_eq(run(out, sizeof out, "export-prom ev.csv -o ev.prom --verify"), 0, "%s", out);
    cr_assert(strstr(out, "verify: all 3 samples decode bit-for-bit identical"), "%s", out);
    /* No samples: a Prometheus chunk file of none is an empty file, which no reader takes, so none is written (0.50.1:
     * one was, unless --verify, which then failed reading it back). */
    write_file("none.csv", "timestamp,value\n1000,\n");
    cr_assert_eq(run(out, sizeof out, "export-prom none.csv -o none.prom"), 1, "%s", out);
    cr_assert(strstr(out, "none.csv: no samples") && !exists("none.prom"), "%s", out);
    cr_assert_eq(run_script(out, sizeof out, "$T version 2>/dev/null"), 0, "%s", out);
    snprintf(want, sizeof want, "tschunk %d.%d.%d\n", TSCHUNK_VERSION_MAJOR, TSCHUNK_VERSION_MINOR,
             TSCHUNK_VERSION_PATCH);
    cr_assert_str_eq(out, want);
    cr_assert_eq(run_script(out, sizeof out, "$T help 2>/dev/null"), 0, "%s", out);
    cr_assert(!strncmp(out, "usage:\n", 7) && strstr(out, "tschunk sketch decode HEX"), "%s", out);
    cr_assert_eq(run_script(out, sizeof out, "$T 2>&1 >/dev/null"), 2, "%s", out);
    cr_assert(strstr(out, "usage:"), "%s", out);
    cr_assert_eq(run(out, sizeof out, "sketch recode 02"), 2, "%s", out);
    cr_assert(strstr(out, "unknown sketch command recode"), "%s", out);
    cr_assert_eq(run(out, sizeof out, "sketch decode 02 03"), 2, "%s", out);
    cr_assert(strstr(out, "unexpected argument 03"), "%s", out);
}

/* compress and export-prom print the encode time of a warm pass (the best of up to 5) beside the first pass's, which
 * wrote the file: the best is never above the first, and a pass count outside 1..5 is a fault. */
Test(cli, encode_speed_is_the_best_of_warm_passes)
{
    char path[512];
    snprintf(path, sizeof path, "%s/speed.csv", workdir);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    for (int i = 0; i < 5000; i++) fprintf(f, "%d,%d.%02d\n", 1000 + 15 * i, 20 + i % 7, i % 100);
    fclose(f);
    const char *cmds[] = {"compress speed.csv -o speed.tseg", "compress speed.csv -o speed2.tseg --summary",
                          "export-prom speed.csv -o speed.prom"};
    for (size_t i = 0; i < 3; i++) {
        char out[4096];
        cr_assert_eq(run(out, sizeof out, cmds[i]), 0, "%s: %s", cmds[i], out);
        const char *at = strstr(out, "encode ");
        double best = -1, first = -1;
        int passes = 0;
        cr_assert(at && sscanf(at, "encode %lf ns/sample (best of %d passes; the first, writing the file, %lf)", &best,
                               &passes, &first) == 3, "%s: %s", cmds[i], out);
        cr_assert(passes >= 1 && passes <= 5 && best > 0 && best <= first, "%s: %s", cmds[i], out);
    }
}

/* An output path that names the input (itself, another spelling, a link) is refused before anything is written:
 * compress, decompress, export-prom and import-prom read their input whole and then wrote over it (0.45.7). */
Test(cli, an_output_that_is_the_input_is_refused)
{
    write_file("same.csv", "timestamp,value\n1,2.5\n2,3.5\n");
    char out[4096];
    cr_assert_eq(run(out, sizeof out, "compress same.csv -o same.tseg"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "export-prom same.csv -o same.prom"), 0, "%s", out);
    cr_assert_eq(run_script(out, sizeof out, "ln -s same.csv same_link.csv"), 0, "%s", out);
    const char *cmds[] = {"compress same.csv -o same.csv", "compress same.csv -o ./same.csv",
                          "compress same.csv -o same_link.csv", "decompress same.tseg -o same.tseg",
                          "export-prom same.csv -o same.csv", "import-prom same.prom -o same.prom"};
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        cr_assert_eq(run(out, sizeof out, cmds[i]), 1, "%s: %s", cmds[i], out);
        cr_assert(strstr(out, "is the input file: write the output elsewhere"), "%s: %s", cmds[i], out);
    }
    cr_assert_str_eq(read_file("same.csv"), "timestamp,value\n1,2.5\n2,3.5\n");
    cr_assert_eq(run(out, sizeof out, "verify same.tseg"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "verify same.prom"), 0, "%s", out);
    cr_assert_eq(files_named_with(".tmp."), 0, "a temporary file left");
}

/* -o names a file: a FIFO or a directory is refused, untouched (the temporary file renamed over it replaced a FIFO,
 * and as root /dev/null, with a file, before 0.48.0); through a symbolic link the file it names is written, in place
 * too (delete, compact), and the link stays a link; a link to nothing is refused and creates nothing. */
Test(cli, outputs_through_links_and_not_over_devices)
{
    write_file("in.csv", "timestamp,value\n1,2.5\n2,3.5\n3,4.5\n");
    char out[4096];
    cr_assert_eq(run_script(out, sizeof out, "mkfifo pipe && mkdir dir && ln -s nowhere.tseg dangling"), 0, "%s", out);
    const char *refused[] = {"compress in.csv -o pipe", "export-prom in.csv -o pipe", "compress in.csv -o dir",
                             "compress in.csv -o dangling"};
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
        cr_assert_eq(run(out, sizeof out, refused[i]), 1, "%s: %s", refused[i], out);
        cr_assert(strstr(out, "is not a regular file") || strstr(out, "is a symbolic link to nothing"), "%s: %s",
                  refused[i], out);
    }
    cr_assert_eq(
        run_script(out, sizeof out, "test -p pipe && test -d dir && test -L dangling && test ! -e nowhere.tseg"), 0,
        "%s", out);
    cr_assert_eq(run(out, sizeof out, "compress in.csv -o real.tseg"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "compress in.csv -o decoy.tseg --codec gorilla"), 0, "%s", out);
    cr_assert_eq(run_script(out, sizeof out, "ln -s decoy.tseg link.tseg"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "compress in.csv -o link.tseg"), 0, "%s", out);
    cr_assert_eq(run_script(out, sizeof out, "test -L link.tseg && cmp real.tseg decoy.tseg"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "delete link.tseg in --from 2 --to 2"), 0, "%s", out);
    cr_assert_eq(run_script(out, sizeof out, "test -L link.tseg && \"$T\" cat decoy.tseg in"), 0, "%s", out);
    cr_assert_str_eq(out, "timestamp,value\n1,2.5\n3,4.5\n");
    cr_assert_eq(run(out, sizeof out, "compact link.tseg"), 0, "%s", out);
    cr_assert_eq(run_script(out, sizeof out, "test -L link.tseg && \"$T\" verify decoy.tseg"), 0, "%s", out);
    cr_assert(strstr(out, "2 samples"), "%s", out);
    cr_assert_eq(files_named_with(".tmp."), 0, "a temporary file left");
}

/* Swapped bounds are refused by every command that takes them (cat printed a bare header and quantiles "no values"
 * before 0.48.4; delete refused them already); equal bounds select one instant. */
Test(cli, swapped_bounds_are_refused)
{
    write_file("in.csv", "timestamp,value\n1,2.5\n2,3.5\n");
    char out[4096];
    cr_assert_eq(run(out, sizeof out, "compress in.csv -o in.tseg --ts-unit s"), 0, "%s", out);
    const char *cmds[] = {"cat in.tseg in --from 2 --to 1", "quantiles in.tseg in --from 2 --to 1",
                          "quantiles in.tseg --all --from 1970-01-02 --to 1970-01-01",
                          "delete in.tseg in --from 2 --to 1"};
    for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
        cr_assert_eq(run(out, sizeof out, cmds[i]), 1, "%s: %s", cmds[i], out);
        cr_assert(strstr(out, "is after --to"), "%s: %s", cmds[i], out);
    }
    cr_assert_eq(run(out, sizeof out, "cat in.tseg in --from 2 --to 2"), 0, "%s", out);
    cr_assert_str_eq(out, "timestamp,value\n2,3.5\n");
}

/* Inputs: a file is mapped; a stream (a pipe) is read whole; a directory and a stream of none of tschunk's
 * formats (/dev/zero, which before 0.48.1 was read until the memory ran out) are refused with their reason. */
Test(cli, inputs_that_are_not_files)
{
    write_file("in.csv", "timestamp,value\n1,2.5\n2,3.5\n");
    char out[4096], mapped[4096];
    cr_assert_eq(run(out, sizeof out, "compress in.csv -o in.tseg"), 0, "%s", out);
    cr_assert_eq(run(mapped, sizeof mapped, "cat in.tseg in"), 0, "%s", mapped);
    cr_assert_eq(run_script(out, sizeof out, "cat in.tseg | \"$T\" cat /dev/stdin in"), 0, "%s", out);
    cr_assert_str_eq(out, mapped);
    cr_assert_eq(run_script(out, sizeof out, "mkdir -p adir"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "ls adir"), 1, "%s", out);
    cr_assert(strstr(out, "adir is a directory"), "%s", out);
    cr_assert_eq(run(out, sizeof out, "ls /dev/zero"), 1, "%s", out);
    cr_assert(strstr(out, "/dev/zero: not a segment, a chunk file or a Prometheus file"), "%s", out);
}

/* A UTF-8 byte order mark before the first line is skipped: before 0.45.7 it made a headerless file's first sample
 * look like a header (dropped without a word) and became part of a first series name. */
Test(cli, a_byte_order_mark_is_not_data)
{
    write_bytes("bom_plain.csv", "\xef\xbb\xbf" "1,2\n2,3\n", 11);
    write_bytes("bom_header.csv", "\xef\xbb\xbf" "timestamp,value\n1,2\n", 23);
    write_bytes("bom_series.csv", "\xef\xbb\xbf" "cpu,1,2\ncpu,2,3\n", 19);
    write_bytes("bom_wide.csv", "\xef\xbb\xbf" "timestamp,a\n1,2\n", 19);
    char out[4096];
    cr_assert_eq(run(out, sizeof out, "compress bom_plain.csv -o bom_plain.tseg"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "decompress bom_plain.tseg -o -"), 0, "%s", out);
    cr_assert_str_eq(out, "timestamp,value\n1,2\n2,3\n");
    cr_assert_eq(run(out, sizeof out, "compress bom_header.csv -o bom_header.tseg"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "decompress bom_header.tseg -o -"), 0, "%s", out);
    cr_assert_str_eq(out, "timestamp,value\n1,2\n");
    cr_assert_eq(run(out, sizeof out, "compress bom_series.csv -o bom_series.tseg"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "cat bom_series.tseg cpu"), 0, "%s", out);
    cr_assert_str_eq(out, "timestamp,value\n1,2\n2,3\n");
    cr_assert_eq(run(out, sizeof out, "compress bom_wide.csv -o bom_wide.tseg --wide"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "cat bom_wide.tseg a"), 0, "%s", out);
    cr_assert_str_eq(out, "timestamp,value\n1,2\n");
}

/* A segment the library writes (not the CLI): one chunk of samples (5, a) and (6, b) for each id, the first id
 * named "named" when there are two, no summaries. */
static void write_library_segment(const char *name, tschunk_ts_unit unit, const uint64_t *ids, size_t n, double a,
                                  double b)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", workdir, name);
    tschunk_segment_options so = {.ts_unit = unit};
    tschunk_segment_writer *w;
    cr_assert_eq(tschunk_segment_writer_create(&w, path, &so), 0);
    int64_t ts[2] = {5, 6};
    double v[2] = {a, b};
    uint8_t chunk[TSCHUNK_BOUND(2)];
    size_t size = tschunk_encode(chunk, sizeof chunk, ts, v, 2, NULL);
    for (size_t i = 0; i < n; i++) cr_assert_eq(tschunk_segment_writer_add_chunk(w, ids[i], chunk, size, NULL, 0), 0);
    if (n == 2) cr_assert_eq(tschunk_segment_writer_add_series(w, ids[0], "named", 5), 0);
    cr_assert(!tschunk_is_error(tschunk_segment_writer_finish(w)));
}

/* --from and --to as date-times, converted to the file's unit: the same samples as the integer bounds, in a
 * millisecond segment and a second one; a segment whose timestamps have no unit asks for integers; a bound that is
 * neither is refused on the command line. */
Test(cli, time_bounds_take_date_times)
{
    write_file("dt.csv", "timestamp,value\n2013-12-01 00:00:00,1\n2013-12-01 01:00:00,2\n2013-12-01 02:00:00,3\n"
                         "2013-12-01 03:00:00,4\n");
    char out[4096], want[4096];
    cr_assert_eq(run(out, sizeof out, "compress dt.csv -o dt_ms.tseg --summary"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "compress dt.csv -o dt_s.tseg --ts-unit s"), 0, "%s", out);
    cr_assert_eq(run(want, sizeof want, "cat dt_ms.tseg dt --from 1385859600000 --to 1385863200000"), 0, "%s", want);
    cr_assert_str_eq(want, "timestamp,value\n1385859600000,2\n1385863200000,3\n");
    cr_assert_eq(run(out, sizeof out, "cat dt_ms.tseg dt --from '2013-12-01 01:00:00' --to 2013-12-01T03:00:00+01:00"),
                 0, "%s", out);
    cr_assert_str_eq(out, want);
    cr_assert_eq(run(out, sizeof out, "cat dt_s.tseg dt --from 2013-12-01T01:00:00Z --to '2013-12-01 02:00:00'"), 0,
                 "%s", out);
    cr_assert_str_eq(out, "timestamp,value\n1385859600,2\n1385863200,3\n");
    cr_assert_eq(run(out, sizeof out, "quantiles dt_ms.tseg --q 0.5 --from '2013-12-01 01:00:00' --to "
                                      "'2013-12-01 02:00:00'"), 0, "%s", out);
    cr_assert(strstr(out, "range       1385859600000 .. 1385863200000 (inclusive, the file's timestamp unit: "
                          "2013-12-01T01:00:00.000Z .. 2013-12-01T02:00:00.000Z)\n") &&
              strstr(out, "samples     2 in range"), "%s", out);
    cr_assert_eq(run(out, sizeof out, "quantiles dt_ms.tseg --from 2013-12-01T02:00:00Z --to 2262-01-01T00:00:00Z"), 0,
                 "%s", out);
    cr_assert(strstr(out, "samples     2 in range"), "%s", out);
    cr_assert_eq(run(out, sizeof out, "quantiles dt_s.tseg --from 2013-12-01"), 0, "%s", out);
    cr_assert(strstr(out, "range       1385856000 .. 9223372036854775807 (inclusive, the file's timestamp unit: "
                          "2013-12-01T00:00:00Z .. the last)\n") && strstr(out, "samples     4 in range"), "%s", out);
    cr_assert_eq(run(out, sizeof out, "delete dt_ms.tseg dt --from '2013-12-01 00:00:00' --to 2013-12-01T00:30:00Z"),
                 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "cat dt_ms.tseg dt --from 0 --to 1385856000000"), 0, "%s", out);
    cr_assert_str_eq(out, "timestamp,value\n"); /* the first sample is deleted */
    cr_assert_eq(run(out, sizeof out, "compress dt.csv -o dt_ns.tseg --ts-unit ns"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "cat dt_ns.tseg dt --from 0 --to 2300-01-01T00:00:00Z"), 1, "%s", out);
    cr_assert(strstr(out, "--to '2300-01-01T00:00:00Z' is outside the range of the file's timestamp unit"), "%s", out);
    cr_assert_eq(run(out, sizeof out, "cat dt_ms.tseg dt --from 2013-12 --to 1"), 2, "%s", out);
    cr_assert(strstr(out, "--from takes an int64 timestamp in the file's unit or a date-time"), "%s", out);
    /* A library segment written without a unit. */
    const uint64_t one[1] = {1};
    write_library_segment("nounit.tseg", TSCHUNK_UNIT_UNSPECIFIED, one, 1, 1, 2);
    char path[512];
    snprintf(path, sizeof path, "%s/nounit.tseg", workdir);
    cr_assert_eq(run(out, sizeof out, "cat nounit.tseg 1 --from 5 --to 5"), 0, "%s", out);
    cr_assert_str_eq(out, "timestamp,value\n5,1\n");
    cr_assert_eq(run(out, sizeof out, "quantiles nounit.tseg --from 5"), 0, "%s", out);
    cr_assert(strstr(out, "range       5 .. 9223372036854775807 (inclusive, the file's timestamp unit)\n"), "%s", out);
    cr_assert_eq(run(out, sizeof out, "cat nounit.tseg 1 --from 2013-12-01T00:00:00Z --to 9"), 1, "%s", out);
    cr_assert(strstr(out, "its timestamps have no unit: give --from/--to as integers"), "%s", out);
    /* --iso reads them as milliseconds, and says so (0.49.9: without a word). */
    cr_assert_eq(run_script(out, sizeof out, "$T cat nounit.tseg 1 --iso >/dev/null"), 0, "%s", out);
    cr_assert_str_eq(out, "tschunk: note: nounit.tseg: its timestamps have no unit; --iso reads them as "
                          "milliseconds\n");
    cr_assert_eq(run_script(out, sizeof out, "$T cat nounit.tseg 1 --iso 2>/dev/null"), 0, "%s", out);
    cr_assert_str_eq(out, "timestamp,value\n1970-01-01T00:00:00.005Z,1\n1970-01-01T00:00:00.006Z,2\n");
    cr_assert_eq(run_script(out, sizeof out, "$T cat dt_ms.tseg dt --iso >/dev/null"), 0, "%s", out);
    cr_assert_str_eq(out, "", "a file with a unit: no note");
    test_file whole = test_read_file(path);
    write_bytes("cut.tseg", whole.data, whole.size - 1);
    free(whole.data);
    cr_assert_eq(run(out, sizeof out, "cat cut.tseg 1 --from 2013-12-01T00:00:00Z --to 9"), 1, "%s", out);
    cr_assert(strstr(out, "cut.tseg: broken segment"), "%s", out);
}

/* A CSV handed to a command that reads tschunk's files is named as text (it was read as Prometheus records:
 * "Prometheus chunk 0 at byte 0: input is truncated"); a Prometheus file still reads, and is refused where only
 * segments go. */
Test(cli, text_given_for_a_chunk_file_is_named)
{
    write_file("t.csv", "timestamp,value\n1,2\n2,3\n");
    char out[4096];
    const char *cmds[] = {"stats t.csv", "ls t.csv", "verify t.csv", "decompress t.csv -o -", "quantiles t.csv",
                          "import-prom t.csv -o t.tseg", "compact t.csv -o t2.tseg", "cat t.csv t"};
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        cr_assert_eq(run(out, sizeof out, cmds[i]), 1, "%s: %s", cmds[i], out);
        cr_assert(strstr(out, "t.csv: a text file (CSV?), not a segment or a chunk file: tschunk compress reads CSV"),
                  "%s: %s", cmds[i], out);
    }
    cr_assert_eq(run(out, sizeof out, "export-prom t.csv -o t.prom"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "verify t.prom"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "compact t.prom -o t3.tseg"), 1, "%s", out);
    cr_assert(strstr(out, "compact works on segments"), "%s", out);
}

/* Integers that look like Unix seconds, microseconds or nanoseconds (since 0.57.3; seconds since 0.46.1), labelled
 * milliseconds by default, get a note (the label decides --iso and date-time bounds); given --ts-unit, or
 * milliseconds, or small integers, nothing is said. */
Test(cli, other_units_labelled_milliseconds_get_a_note)
{
    write_file("secs.csv", "1385856000,1\n1385856060,2\n");
    write_file("micros.csv", "1385856000000000,1\n1385856060000000,2\n");
    write_file("nanos.csv", "1385856000000000000,1\n1385856060000000000,2\n");
    write_file("millis.csv", "1385856000000,1\n1385856060000,2\n");
    write_file("small.csv", "1,1\n2,2\n");
    static const struct { const char *file, *note, *span; } noted[] = {
        {"secs", "look like Unix seconds, but are labelled milliseconds; --ts-unit s labels them seconds",
         "(1385856000 to 1385856060)"},
        {"micros", "look like Unix microseconds, but are labelled milliseconds; --ts-unit us labels them microseconds",
         "(1385856000000000 to 1385856060000000)"},
        {"nanos", "look like Unix nanoseconds, but are labelled milliseconds; --ts-unit ns labels them nanoseconds",
         "(1385856000000000000 to 1385856060000000000)"},
    };
    char out[4096], cmd[128];
    for (size_t k = 0; k < sizeof noted / sizeof noted[0]; k++) {
        snprintf(cmd, sizeof cmd, "compress %s.csv -o %s.tseg", noted[k].file, noted[k].file);
        cr_assert_eq(run(out, sizeof out, cmd), 0, "%s", out);
        cr_assert(strstr(out, noted[k].note) && strstr(out, noted[k].span), "%s: %s", cmd, out);
        cr_assert(!strstr(strstr(out, "note:") + 1, "note:"), "one note: %s", out);
    }
    const char *quiet[] = {"compress secs.csv -o secs_s.tseg --ts-unit s",
                           "compress secs.csv -o secs_ms.tseg --ts-unit ms", "compress millis.csv -o millis.tseg",
                           "compress small.csv -o small.tseg", "compress micros.csv -o micros_us.tseg --ts-unit us",
                           "compress nanos.csv -o nanos_ns.tseg --ts-unit ns"};
    for (size_t i = 0; i < sizeof quiet / sizeof quiet[0]; i++) {
        cr_assert_eq(run(out, sizeof out, quiet[i]), 0, "%s: %s", quiet[i], out);
        cr_assert(!strstr(out, "note:"), "%s: %s", quiet[i], out);
    }
    cr_assert_eq(run(out, sizeof out, "cat secs_s.tseg secs --iso"), 0, "%s", out);
    cr_assert_str_eq(out, "timestamp,value\n2013-12-01T00:00:00Z,1\n2013-12-01T00:01:00Z,2\n");
    cr_assert_eq(run(out, sizeof out, "cat nanos_ns.tseg nanos --iso"), 0, "%s", out);
    cr_assert_str_eq(out, "timestamp,value\n2013-12-01T00:00:00.000000000Z,1\n2013-12-01T00:01:00.000000000Z,2\n");
}

/* Integers of 19 digits (nanoseconds since 1973 are) read exactly, out to int64's ends; one past either end is a bad
 * timestamp with its line, never a wrapped or clamped one (`make coverage` showed 19-digit integers never read). */
Test(cli, integers_of_19_digits_read_exactly_to_int64s_ends)
{
    static const char ends[] = "timestamp,value\n-9223372036854775808,0\n1700000000000000000,1\n"
                               "1700000000015000007,2\n9223372036854775807,3\n";
    write_file("ends.csv", ends);
    char out[4096];
    cr_assert_eq(run(out, sizeof out, "compress ends.csv -o ends.tseg --ts-unit ns"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "cat ends.tseg"), 0, "%s", out);
    cr_assert_str_eq(out, ends);
    static const char *past[] = {"9223372036854775808", "-9223372036854775809", "10000000000000000000"};
    for (size_t k = 0; k < sizeof past / sizeof past[0]; k++) {
        char csv[128], want[96];
        snprintf(csv, sizeof csv, "1700000000000000000,1\n%s,2\n", past[k]);
        write_file("past.csv", csv);
        cr_assert_neq(run(out, sizeof out, "compress past.csv -o past.tseg --ts-unit ns"), 0, "%s", past[k]);
        snprintf(want, sizeof want, "line 2: bad timestamp '%s'", past[k]);
        cr_assert(strstr(out, want), "%s", out);
        cr_assert(!exists("past.tseg"));
    }
}

/* `verify NAME` of these bytes exits 1 with `says` in its message. */
static void verify_names(const char *name, const unsigned char *bytes, size_t size, const char *says)
{
    char out[4096], cmd[128];
    write_bytes(name, bytes, size);
    snprintf(cmd, sizeof cmd, "verify %s", name);
    cr_assert_eq(run(out, sizeof out, cmd), 1, "%s: %s", name, out);
    cr_assert(strstr(out, says), "%s: %s", name, out);
}

/* 0.1 chunk file bytes: the 8-byte header (flags: 1 = records carry summaries), then n chunk bytes behind a
 * two-byte uvarint length when chunk is not NULL. @return the size so far. */
static size_t old_file_start(unsigned char *file, unsigned flags, const unsigned char *chunk, size_t n)
{
    memcpy(file, "TSCF\x01\x02\x00\x00", 8);
    file[6] = (unsigned char)flags;
    if (!chunk) return 8;
    file[8] = (unsigned char)(0x80 | (n & 0x7f));
    file[9] = (unsigned char)(n >> 7);
    memcpy(file + 10, chunk, n);
    return 10 + n;
}

/* A damaged 0.1 chunk file, an empty file and bytes that are neither format: verify exits 1 naming the fault (these
 * reader paths had no test; fuzz_cli_input runs them on arbitrary bytes). */
Test(cli, damaged_chunk_files_are_named)
{
    wl_series s;
    wl_synthetic(&s, WL_GAUGE_2DP, 50, 9);
    unsigned char *chunk, file[4096];
    size_t n = encode_range_codec(&s, 0, 50, TSCHUNK_CODEC_GORILLA, &chunk);
    cr_assert(n >= 128 && n < 2048, "a two-byte length: %zu", n);
    size_t at = old_file_start(file, 0, chunk, n);
    file[4] = 2;
    verify_names("v2.tscf", file, at, "unsupported file version or reserved bytes set");
    at = old_file_start(file, 0, chunk, n);
    verify_names("no_end.tscf", file, at, "truncated at byte");
    at = old_file_start(file, 0, chunk, n);
    file[8] = 0xe8, file[9] = 0x07; /* a length of 1000 */
    verify_names("past.tscf", file, at, "chunk at byte 10 runs past the end of the file");
    at = old_file_start(file, 0, NULL, 0);
    memcpy(file + at, "\x05xxxxx\x00\x01\x01", 9);
    verify_names("garbled.tscf", file, at + 9, "chunk 0 at byte 9: ");
    at = old_file_start(file, 1, chunk, n);
    file[at++] = 0xe8, file[at++] = 0x07;
    verify_names("summary_past.tscf", file, at, "summary of chunk 0 runs past the end of the file");
    verify_names("empty.bin", file, 0, "empty file");
    verify_names("zeros.bin", (const unsigned char *)"\x00\x01\x02\x03", 4,
                 "not a tschunk file, nor Prometheus chunks: bad record length");
    free(chunk);
    wl_free(&s);
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The exact column of `quantiles --exact` for q in text, against want (sorted, n values) at rank floor(q (n - 1)). */
static void check_exact_column(const char *text, const double *want, size_t n, const char *what)
{
    const double qs[] = {0.001, 0.5, 0.99, 1};
    const char *names[] = {"0.001", "0.5", "0.99", "1"};
    for (size_t i = 0; i < 4; i++) {
        char key[16];
        snprintf(key, sizeof key, "\n%s ", names[i]);
        const char *line = strstr(text, key);
        double v, exact, rel;
        cr_assert(line && sscanf(line + 1, "%*s %lf %lf %lf", &v, &exact, &rel) == 3, "%s: %s", what, text);
        double expect = want[(size_t)floor(qs[i] * (double)(n - 1))];
        cr_assert_eq(exact, expect, "%s: q %s: %.17g, not %.17g", what, names[i], exact, expect);
    }
}

/* Chunk start..start+n of s with codec 1 and its summary blob (malloc'd, *summary_size bytes). */
static size_t encode_with_summary(const wl_series *s, size_t start, size_t n, unsigned char **chunk,
                                  unsigned char **summary, size_t *summary_size)
{
    tschunk_sketch *sketch;
    tschunk_sketch_options so = {TSCHUNK_MAPPING_CUBIC, 0.01, 2048, 0, {0, 0, 0}, 0};
    cr_assert_eq(tschunk_sketch_create(&sketch, &so), 0);
    *chunk = malloc(TSCHUNK_BOUND(n));
    tschunk_encoder enc;
    tschunk_encoder_options opts = {TSCHUNK_CODEC_GORILLA, 0, 0, 0};
    cr_assert(*chunk && tschunk_encoder_init(&enc, *chunk, TSCHUNK_BOUND(n), &opts) == 0);
    cr_assert_eq(tschunk_encoder_set_summary(&enc, sketch), 0);
    for (size_t i = start; i < start + n; i++) cr_assert_eq(tschunk_append_bits(&enc, s->ts[i], s->bits[i]), 0);
    size_t size = tschunk_encoder_finish(&enc);
    *summary = malloc(tschunk_encoder_summary_bound(&enc));
    cr_assert(*summary);
    *summary_size = tschunk_encoder_write_summary(&enc, *summary, tschunk_encoder_summary_bound(&enc));
    cr_assert(!tschunk_is_error(size) && !tschunk_is_error(*summary_size));
    tschunk_sketch_free(sketch);
    return size;
}

/* `quantiles --exact` on a 0.1 chunk file whose summaries answer the range: a chunk whose samples do not decode is
 * named, as on a segment (0.57.4), where until 0.57.5 the exact values left its samples out without a word. */
Test(cli, exact_quantiles_of_a_0_1_chunk_file_name_a_damaged_chunk)
{
    wl_series s;
    wl_synthetic(&s, WL_GAUGE_2DP, 400, 11);
    unsigned char *chunk[2], *summary[2];
    size_t size[2], summary_size[2];
    for (int i = 0; i < 2; i++) size[i] = encode_with_summary(&s, 200 * (size_t)i, 200, &chunk[i], &summary[i],
                                                                   &summary_size[i]);
    for (int damaged = 0; damaged < 2; damaged++) {
        if (damaged) damage_chunk_body(chunk[1], size[1]);
        char path[512];
        snprintf(path, sizeof path, "%s/sum.tscf", workdir);
        FILE *f = fopen(path, "wb");
        cr_assert(f);
        fwrite("TSCF\x01\x02\x01\x00", 1, 8, f); /* version 1, milliseconds, every record with its summary */
        for (int i = 0; i < 2; i++) {
            put_test_uvarint(f, size[i]);
            fwrite(chunk[i], 1, size[i], f);
            put_test_uvarint(f, summary_size[i]);
            fwrite(summary[i], 1, summary_size[i], f);
        }
        put_test_uvarint(f, 0);
        put_test_uvarint(f, s.n);
        put_test_uvarint(f, 2);
        cr_assert_eq(fclose(f), 0);
        static char out[16384];
        int rc = run(out, sizeof out, "quantiles sum.tscf --q 0.5");
        cr_assert_eq(rc, 0, "the summaries answer without decoding: %s", out);
        cr_assert(strstr(out, "2 from summaries"), "%s", out);
        rc = run(out, sizeof out, "quantiles sum.tscf --q 0.5 --exact");
        if (!damaged) {
            cr_assert_eq(rc, 0, "%s", out);
            continue;
        }
        cr_assert_neq(rc, 0, "%s", out);
        cr_assert(strstr(out, "sum.tscf: chunk 1 is damaged: "), "%s", out);
        /* a range that the summaries say chunk 1 lies outside is answered without it */
        char args[128];
        snprintf(args, sizeof args, "quantiles sum.tscf --q 0.5 --exact --to %lld", (long long)s.ts[199]);
        cr_assert_eq(run(out, sizeof out, args), 0, "%s", out);
    }
    for (int i = 0; i < 2; i++) free(chunk[i]), free(summary[i]);
    wl_free(&s);
}

/* --exact gathers the values past its first 65,536 (its buffer grows): from a segment, in a time range, and from an
 * old chunk file; each rank is the sorted values' own. */
Test(cli, exact_quantiles_take_more_than_65536_values)
{
    enum { N = 100000 };
    static double values[N], in_range[N];
    char path[512];
    snprintf(path, sizeof path, "%s/many.csv", workdir);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    size_t k = 0;
    for (size_t i = 0; i < N; i++) {
        values[i] = (double)((i * 7919) % N + 1) / 4; /* a permutation of 1..N, quartered: exact in text */
        fprintf(f, "%zu,%.17g\n", 1000 + 10 * i, values[i]);
        if (i >= 10000 && i < 90000) in_range[k++] = values[i];
    }
    fclose(f);
    static char out[16384];
    cr_assert_eq(run(out, sizeof out, "compress many.csv -o many.tseg"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "quantiles many.tseg --q 0.001,0.5,0.99,1 --exact"), 0, "%s", out);
    qsort(values, N, sizeof values[0], compare_doubles);
    check_exact_column(out, values, N, "segment");
    cr_assert_eq(run(out, sizeof out, "quantiles many.tseg --q 0.001,0.5,0.99,1 --exact --from 101000 --to 900990"),
                 0, "%s", out);
    qsort(in_range, k, sizeof in_range[0], compare_doubles);
    check_exact_column(out, in_range, k, "segment, --from 101000 --to 900990");

    wl_series s;
    wl_synthetic(&s, WL_GAUGE_2DP, 200 + TSCHUNK_MAX_SAMPLES, 7);
    write_old_chunk_file("many.tscf", &s, s.n);
    double *sorted = malloc(s.n * sizeof *sorted);
    cr_assert(sorted);
    for (size_t i = 0; i < s.n; i++) memcpy(&sorted[i], &s.bits[i], 8);
    qsort(sorted, s.n, sizeof *sorted, compare_doubles);
    cr_assert_eq(run(out, sizeof out, "quantiles many.tscf --q 0.001,0.5,0.99,1 --exact"), 0, "%s", out);
    check_exact_column(out, sorted, s.n, "chunk file");
    free(sorted);
    wl_free(&s);
}

/* Long reads show progress on a terminal (issue 2: over about 2 s). `script` (util-linux, in every Debian) gives the
 * CLI a terminal; a FIFO fed with a pause of 2.5 s after 60,000 lines makes the read long: the 65,536th sample,
 * read after the pause, is reported on stderr, then a newline. A fast read of as many lines on a terminal, and a slow
 * one without a terminal, print no progress (before 0.46.2 a fast read of 65,536 lines or more on a terminal printed
 * an empty line). */
Test(cli, long_reads_show_progress_on_a_terminal)
{
    const char *feed = "{ seq 1000 61000 | sed 's/$/,1/'; sleep 2.5; seq 61001 72000 | sed 's/$/,1/'; }";
    const char *cmds[] = {"compress", "export-prom"}, *outs[] = {"tseg", "prom"};
    for (size_t i = 0; i < 2; i++) {
        char script[2048], out[8192];
        snprintf(script, sizeof script,
                 "rm -f slow.csv && mkfifo slow.csv && (%s > slow.csv &) && "
                 "script -qec \"$T %s slow.csv -o slow.%s\" /dev/null",
                 feed, cmds[i], outs[i]);
        cr_assert_eq(run_script(out, sizeof out, script), 0, "%s: %s", cmds[i], out);
        const char *want = "\rreading slow.csv: 65536 samples\r\nslow.csv -> ";
        cr_assert(!strncmp(out, want, strlen(want)), "%s: %s", cmds[i], out);
        cr_assert(strstr(out, ": 71001 samples"), "%s: %s", cmds[i], out);
    }
    cr_assert_eq(run_script(NULL, 0, "seq 1000 71000 | sed 's/$/,1/' > fast.csv"), 0);
    for (size_t i = 0; i < 2; i++) {
        char script[1024], out[8192];
        snprintf(script, sizeof script, "script -qec \"$T %s fast.csv -o fast.%s\" /dev/null", cmds[i], outs[i]);
        cr_assert_eq(run_script(out, sizeof out, script), 0, "%s: %s", cmds[i], out);
        cr_assert(!strncmp(out, "fast.csv -> ", 12), "%s: %s", cmds[i], out);
        if (i) continue; /* both commands share the terminal test; one slow read without a terminal is enough */
        snprintf(script, sizeof script, "rm -f slow.csv && mkfifo slow.csv && (%s > slow.csv &) && "
                 "$T %s slow.csv -o slow2.%s", feed, cmds[i], outs[i]);
        cr_assert_eq(run_script(out, sizeof out, script), 0, "%s: %s", cmds[i], out);
        cr_assert(!strncmp(out, "slow.csv -> ", 12), "%s: %s", cmds[i], out);
    }
}

/* stats counts what the encoders spend, figured here by hand. A Prometheus chunk's timestamps: t0 1000 as a zigzag
 * varint (2 bytes), the first delta 1,000,000 as a uvarint (3 bytes), then one delta of delta at each edge of the
 * four buckets (`0`; `10` + 14 bits to 8,192; `110` + 17 to 65,536; `1110` + 20 to 524,288; `1111` + 64 past):
 * 16 + 24 + 1 + 2 * 16 + 3 * 20 + 3 * 24 + 2 * 68 = 341 bits over 13 samples. A constant codec 2 chunk keeps its value
 * in the header as its bits reversed, 7 a byte, when that is shorter than 8 bytes: 1.0 in 2 bytes, 0.0 in 1, 44
 * significant bits in 7, 42 in 6; the smallest subnormal (64) in the plain 8. */
Test(cli, stats_count_bucket_edges_and_header_values)
{
    const int64_t dods[] = {0, 8192, -8191, 8193, 65536, -65535, 65537, 524288, -524287, 524289, -524289};
    char path[512];
    snprintf(path, sizeof path, "%s/edges.csv", workdir);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    int64_t ts = 1000, delta = 1000000;
    fprintf(f, "%lld,1\n%lld,1\n", (long long)ts, (long long)(ts + delta));
    ts += delta;
    for (size_t i = 0; i < sizeof dods / sizeof dods[0]; i++) {
        delta += dods[i];
        ts += delta;
        fprintf(f, "%lld,1\n", (long long)ts);
    }
    fclose(f);
    char out[4096];
    cr_assert_eq(run(out, sizeof out, "export-prom edges.csv -o edges.prom"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "stats edges.prom --json"), 0, "%s", out);
    cr_assert_eq(json_number(out, "samples"), 13, "%s", out);
    cr_assert_float_eq(json_number(out, "bits_per_timestamp"), 341.0 / 13, 1e-4, "%s", out);

    const char *values[] = {"1", "0", "0x3ff0000000100000", "0x3ff0000000400000", "0x0000000000000001"};
    const double header_bytes[] = {2, 1, 7, 6, 8};
    for (size_t v = 0; v < 5; v++) {
        f = fopen(path, "w");
        cr_assert(f);
        for (int i = 0; i < 10; i++) fprintf(f, "%d,%s\n", 1000 * (i + 1), values[v]);
        fclose(f);
        cr_assert_eq(run(out, sizeof out, "compress edges.csv -o const.tseg"), 0, "%s", out);
        cr_assert_eq(run(out, sizeof out, "stats const.tseg --json"), 0, "%s", out);
        cr_assert_float_eq(json_number(out, "bits_per_value"), header_bytes[v] * 8 / 10, 1e-4, "%s: %s", values[v], out);
    }
}

/* quantiles --json (0.46.5) says what the text says: the counts, and each quantile's value and exact answer to the
 * last digit; a range without values has null answers. */
/* A file without samples (an empty table; a series deleted whole) has no figure a sample: null in JSON, every key
 * kept, left out of the text (0.50.1: 1600 bits a sample for an empty segment's 200 bytes, and codec "gorilla"). */
Test(cli, stats_without_samples_give_no_figures_a_sample)
{
    write_file("none.csv", "timestamp,value\n");
    write_file("gone.csv", "timestamp,value\n1,2\n2,3\n");
    char out[4096];
    cr_assert_eq(run(out, sizeof out, "compress none.csv -o none.tseg"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "compress gone.csv -o gone.tseg"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "delete gone.tseg gone --from 1 --to 2"), 0, "%s", out);
    const char *files[] = {"none.tseg", "gone.tseg"}, *codecs[] = {"\"codec\": \"none\"", "\"codec\": \"tsc2\""};
    for (int i = 0; i < 2; i++) {
        char args[64];
        snprintf(args, sizeof args, "stats %s --json", files[i]);
        cr_assert_eq(run(out, sizeof out, args), 0, "%s", out);
        cr_assert(strstr(out, codecs[i]) && strstr(out, "\"samples\": 0,"), "%s", out);
        cr_assert(strstr(out, "\"bits_per_sample\": null,") && strstr(out, "\"bits_per_value\": null,") &&
                      strstr(out, "\"decode_ns_per_sample\": null,") && strstr(out, "\"summary_bytes\": 0}"), "%s", out);
        snprintf(args, sizeof args, "stats %s", files[i]);
        cr_assert_eq(run(out, sizeof out, args), 0, "%s", out);
        cr_assert(strstr(out, "(no samples, so no figures a sample)") && !strstr(out, "bits/sample"), "%s", out);
    }
}

/* A value or weight sketch encode cannot take names its cause (0.50.7: "value or weight cannot be tracked (NaN,
 * infinite or out of range)" for each), with its line; nothing is printed on stdout. */
Test(cli, sketch_encode_refusals_say_which)
{
    const char *cases[][2] = {{"1\n2,-1\n", "line 2: weight -1: a weight is finite and > 0"},
                              {"1,0\n", "line 1: weight 0: a weight is finite and > 0"},
                              {"1,inf\n", "line 1: weight inf: a weight is finite and > 0"},
                              {"NaN\n", "line 1: value nan: NaN and infinities have no bin"},
                              {"1.79e308\n", "line 1: value 1.79e+308 is beyond the sketch's range (|value| <= "},
                              {"1,1e308\n2,1e308\n", "line 2: the total weight would pass 1.79769e+308"}};
    char out[4096];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        write_file("refused.txt", cases[i][0]);
        cr_assert_eq(run(out, sizeof out, "sketch encode < refused.txt"), 1, "%s", out);
        cr_assert(strstr(out, cases[i][1]) && !strstr(out, "02fd"), "%s: %s", cases[i][0], out);
    }
}

Test(cli, quantiles_json_says_what_the_text_says)
{
    char path[512];
    snprintf(path, sizeof path, "%s/qj.csv", workdir);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    for (int i = 0; i < 3000; i++) fprintf(f, "%d,%d.5\n", i * 10, (i * 7919) % 977);
    fclose(f);
    static char text[8192], json[8192];
    cr_assert_eq(run(text, sizeof text, "compress qj.csv -o qj.tseg --summary --samples-per-chunk 100"), 0, "%s", text);
    const char *args = "quantiles qj.tseg --q 0.25,0.5,1 --from 1005 --to 25000 --exact";
    cr_assert_eq(run(text, sizeof text, args), 0, "%s", text);
    char jargs[256];
    snprintf(jargs, sizeof jargs, "%s --json", args);
    cr_assert_eq(run(json, sizeof json, jargs), 0, "%s", json);
    cr_assert(json[0] == '{' && !strcmp(json + strlen(json) - 3, "]}\n"), "%s", json);
    cr_assert(strstr(json, "\"from\": 1005, \"to\": 25000,"), "%s", json);
    char want[256];
    snprintf(want, sizeof want, "samples     %.0f in range", json_number(json, "samples"));
    cr_assert(strstr(text, want), "no %s in %s", want, text);
    snprintf(want, sizeof want, "chunks      %.0f from summaries, %.0f decoded (%.0f samples), %.0f outside",
             json_number(json, "chunks_from_summaries"), json_number(json, "chunks_decoded"),
             json_number(json, "samples_decoded"), json_number(json, "chunks_outside"));
    cr_assert(strstr(text, want), "no %s in %s", want, text);
    /* 30 chunks of 100: 1 and 25 cut by the ends, 2 to 24 inside, 0 and 26 to 29 outside (0.51.6: the chunks the
     * range lookup never visits count as outside too; it said 0). */
    cr_assert(json_number(json, "chunks_from_summaries") == 23 && json_number(json, "chunks_decoded") == 2 &&
              json_number(json, "chunks_outside") == 5, "%s", json);
    static char named[8192];
    cr_assert_eq(run(named, sizeof named, "quantiles qj.tseg qj --from 1005 --to 25000 --json"), 0, "%s", named);
    cr_assert(json_number(named, "chunks_from_summaries") == 23 && json_number(named, "chunks_decoded") == 2 &&
              json_number(named, "chunks_outside") == 5, "the series named: %s", named);
    const char *qs[] = {"0.25", "0.5", "1"};
    for (size_t i = 0; i < 3; i++) {
        char key[32];
        snprintf(key, sizeof key, "{\"q\": %s, \"value\": ", qs[i]);
        const char *at = strstr(json, key);
        cr_assert(at, "no %s in %s", key, json);
        double v = json_number(at, "value"), e = json_number(at, "exact");
        snprintf(want, sizeof want, "\n%-8s %-24.17g %-24.17g ", qs[i], v, e);
        cr_assert(strstr(text, want), "no %s in %s", want, text);
    }
    cr_assert_eq(run(json, sizeof json, "quantiles qj.tseg --from 1 --to 9 --json"), 0, "%s", json);
    cr_assert(strstr(json, "\"samples\": 0,") && strstr(json, "\"min\": null, \"max\": null, \"sum\": null") &&
              strstr(json, "{\"q\": 0.5, \"value\": null}"), "%s", json);
}

/* --mapping and --alpha reach the summaries: quantiles reports the mapping and accuracy the file was written with,
 * and every answer keeps within it. */
Test(cli, summary_mapping_and_accuracy_are_the_options)
{
    char path[512];
    snprintf(path, sizeof path, "%s/acc.csv", workdir);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    for (int i = 0; i < 2000; i++) fprintf(f, "%d,%d.%d\n", 1000 * i, 1 + (i * 7919) % 5000, i % 10);
    fclose(f);
    const char *mappings[] = {"logarithmic", "cubic"};
    const double alphas[] = {0.05, 0.002};
    char out[4096];
    for (int k = 0; k < 2; k++) {
        char args[256];
        snprintf(args, sizeof args, "compress acc.csv -o acc.tseg --summary --mapping %s --alpha %g", mappings[k],
                 alphas[k]);
        cr_assert_eq(run(out, sizeof out, args), 0, "%s", out);
        cr_assert_eq(run(out, sizeof out, "quantiles acc.tseg --q 0.1,0.5,0.99 --exact --json"), 0, "%s", out);
        char want[128];
        snprintf(want, sizeof want, "\"mapping\": \"%s\"", mappings[k]);
        cr_assert(strstr(out, want), "%s", out);
        cr_assert_float_eq(json_number(out, "relative_accuracy"), alphas[k], 1e-9, "%s", out);
        for (const char *at = strstr(out, "\"relative_error\": "); at; at = strstr(at + 1, "\"relative_error\": "))
            cr_assert_leq(strtod(at + 18, NULL), alphas[k] * (1 + 1e-9), "%s", out);
        /* quantiles --mapping / --alpha: the file's own mapping is taken; another is refused with what the file
         * holds (0.49.7: ignored without a word), on a segment and on a chunk file alike. */
        snprintf(args, sizeof args, "quantiles acc.tseg --mapping %s --alpha %g", mappings[k], alphas[k]);
        cr_assert_eq(run(out, sizeof out, args), 0, "%s", out);
        snprintf(args, sizeof args, "quantiles acc.tseg --mapping %s --alpha %g", mappings[!k], alphas[k]);
        cr_assert_eq(run(out, sizeof out, args), 1, "%s", out);
        snprintf(want, sizeof want, "its summaries are %s sketches of relative accuracy %g", mappings[k], alphas[k]);
        cr_assert(strstr(out, want), "%s", out);
        cr_assert_eq(run(out, sizeof out, "quantiles acc.tseg --alpha 0.03"), 1, "%s", out);
    }
    /* Without summaries the options choose the sketch. */
    cr_assert_eq(run(out, sizeof out, "compress acc.csv -o plain.tseg"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "quantiles plain.tseg --mapping logarithmic --alpha 0.03 --json"), 0, "%s", out);
    cr_assert(strstr(out, "\"mapping\": \"logarithmic\""), "%s", out);
    cr_assert_float_eq(json_number(out, "relative_accuracy"), 0.03, 1e-9, "%s", out);
}

/* A segment the library wrote with an unnamed series: decompress names it by its id. */
Test(cli, an_unnamed_series_is_printed_by_its_id)
{
    const uint64_t ids[2] = {77, UINT64_MAX};
    write_library_segment("ids.tseg", TSCHUNK_UNIT_MS, ids, 2, 1.5, 2.5);
    char out[4096];
    cr_assert_eq(run(out, sizeof out, "decompress ids.tseg -o -"), 0, "%s", out);
    cr_assert_str_eq(out, "series,timestamp,value\nnamed,5,1.5\nnamed,6,2.5\n18446744073709551615,5,1.5\n"
                          "18446744073709551615,6,2.5\n");
}

/* A gzip'd CSV (0.51.0) reads as the CSV it holds, through gzip -dc: the same segment and Prometheus file bytes,
 * the series named after the file without .csv.gz; a truncated one fails and writes nothing. bzip2, xz and zstd
 * files (0.51.2) likewise, through their tools; gzip'd standard input (0.51.4) too. */
Test(cli, gzipd_csv_reads_as_the_csv_it_holds)
{
    char out[4096];
    write_file("multi.csv", "series,timestamp,value\na,1000,1.5\nb,1000,2\na,2000,2.5\nb,2000,NaN\n");
    write_file("temp.csv", "1,20\n2,21.5\n3,-0\n");
    cr_assert_eq(run_script(out, sizeof out, "gzip -k multi.csv temp.csv && mkdir gz && mv multi.csv.gz temp.csv.gz gz/"
                                             " && mv gz/temp.csv.gz gz/temp.gz"), 0, "%s", out);
    cr_assert_eq(run_script(out, sizeof out, "$T compress multi.csv -o a.tseg && $T compress gz/multi.csv.gz -o b.tseg"
                                             " && cmp a.tseg b.tseg"), 0, "%s", out);
    cr_assert_eq(run_script(out, sizeof out, "$T compress temp.csv -o c.tseg && $T compress gz/temp.gz -o d.tseg"
                                             " && cmp c.tseg d.tseg && $T ls d.tseg"), 0, "%s", out);
    cr_assert(strstr(out, "\ntemp\t0\t1\t3\t1\t3\t"), "%s", out);
    cr_assert_eq(run_script(out, sizeof out, "$T export-prom temp.csv -o e.prom && $T export-prom gz/temp.gz -o f.prom"
                                             " && cmp e.prom f.prom"), 0, "%s", out);
    /* 20,000 lines, cut: gzip's failure, or the cut line, fails the command; nothing is written. */
    cr_assert_eq(run_script(out, sizeof out, "awk 'BEGIN { for (i = 0; i < 20000; i++) print i \",\" i * 3 }' "
                                             "| gzip > long.gz && head -c 20000 long.gz > cut.gz"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "compress cut.gz -o cut.tseg"), 1, "%s", out);
    cr_assert(strstr(out, "gzip") && !exists("cut.tseg"), "%s", out);
    /* Every line whole, the CRC in the trailer wrong: only gzip's exit status tells. */
    cr_assert_eq(run_script(out, sizeof out, "cp long.gz crc.gz && printf ABCD | dd of=crc.gz bs=1 conv=notrunc "
                                             "seek=$(( $(stat -c %s long.gz) - 8 )) 2>/dev/null"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "compress crc.gz -o crc.tseg"), 1, "%s", out);
    cr_assert(strstr(out, "crc.gz: gzip -dc failed (exit 1)") && !exists("crc.tseg"), "%s", out);
    cr_assert_eq(run(out, sizeof out, "compress long.gz -o long.tseg"), 0, "%s", out);
    cr_assert(strstr(out, "20000 samples"), "%s", out);
    /* gzip'd standard input (0.51.4): its first byte handed back through sh, the rest through gzip. */
    cr_assert_eq(run_script(out, sizeof out, "$T compress - -o in.tseg < gz/temp.gz && $T compress - -o ref.tseg "
                                             "< temp.csv && cmp in.tseg ref.tseg"), 0, "%s", out);
    cr_assert_eq(run_script(out, sizeof out, "$T compress - -o cutin.tseg < crc.gz"), 1, "%s", out);
    cr_assert(strstr(out, "-: gzip -dc failed (exit 1)") && !exists("cutin.tseg"), "%s", out);
    /* bzip2, xz and zstd files by their magic, through a stand-in tool on PATH that writes the CSV out (the real
     * ones need not be installed); a tool that cannot be run is named. */
    static const char *const tools[3] = {"bzip2", "xz", "zstd"}, *const files[3] = {"p.csv.bz2", "p.xz", "p.zst"};
    static const unsigned char magics[3][6] = {{'B', 'Z', 'h', '9'}, {0xfd, '7', 'z', 'X', 'Z', 0},
                                               {0x28, 0xb5, 0x2f, 0xfd}};
    cr_assert_eq(run_script(out, sizeof out, "mkdir fake"), 0, "%s", out);
    for (int k = 0; k < 3; k++) {
        char name[64], path[600];
        snprintf(name, sizeof name, "fake/%s", tools[k]);
        write_file(name, "#!/bin/sh\n[ \"$1 $2\" = \"-dc --\" ] && exec cat temp.csv\n");
        snprintf(path, sizeof path, "%s/%s", workdir, files[k]);
        test_write_file(path, magics[k], 6);
    }
    cr_assert_eq(run_script(out, sizeof out, "chmod +x fake/* && cp temp.csv p.csv && $T compress p.csv -o p.tseg "
                                             "> /dev/null && for f in p.csv.bz2 p.xz p.zst; do "
                                             "PATH=\"$PWD/fake:$PATH\" $T compress $f -o $f.tseg > /dev/null && "
                                             "cmp $f.tseg p.tseg || exit 1; done"),
                 0, "the same segment as p.csv's: %s", out);
    cr_assert_neq(run_script(out, sizeof out, "PATH=\"$PWD/fake:$PATH\" $T compress p.xz -o c2.tseg && "
                                              "cmp c2.tseg c.tseg"), 0, "named p, not temp: %s", out);
    cr_assert_eq(run_script(out, sizeof out, "PATH=\"$PWD/fake:$PATH\" $T compress - -o xin.tseg < p.xz && "
                                             "cmp xin.tseg ref.tseg"), 0, "xz'd standard input: %s", out);
    cr_assert_eq(run(out, sizeof out, "ls p.xz"), 1, "%s", out);
    cr_assert(strstr(out, "p.xz: a file compressed by xz (a CSV? tschunk compress reads it), not a segment"), "%s",
              out);
    cr_assert_eq(run_script(out, sizeof out, "PATH=/nonexistent $T compress gz/temp.gz -o n.tseg"), 1, "%s", out);
    cr_assert(strstr(out, "gz/temp.gz is gzip-compressed, and gzip cannot be run: No such file or directory") &&
              !exists("n.tseg"), "%s", out);
    /* A binary file: its first line's NUL byte says what it likely is. */
    cr_assert_eq(run_script(out, sizeof out, "printf 'AB\\000\\001\\n' > raw.bin && "
                                             "$T compress raw.bin -o raw.tseg"), 1, "%s", out);
    cr_assert(strstr(out, "raw.bin: line 1: holds a NUL byte (a binary file? the input is CSV text)"), "%s", out);
}

/* A tab-separated or ';'-separated file fails with what its first line suggests (0.51.0); a one-column file whose
 * header holds a ';' still reads; a decimal timestamp's refusal says what a timestamp is. */
Test(cli, other_separators_are_named)
{
    char out[4096];
    write_file("t.tsv", "time\tvalue\n1\t2.5\n");
    write_file("s.csv", "time;value\n1;2,5\n");
    write_file("h.csv", "temp (C; hourly)\n1.5\n2.5\n");
    cr_assert_eq(run(out, sizeof out, "compress t.tsv -o t.tseg"), 1, "%s", out);
    cr_assert(strstr(out, "line 2: bad value '1\t2.5' (the first line is split by tabs, not commas"), "%s", out);
    cr_assert_eq(run(out, sizeof out, "compress s.csv -o s.tseg"), 1, "%s", out);
    cr_assert(strstr(out, "line 2: 2 columns, the file started with 1 (the first line is split by ';'"), "%s", out);
    cr_assert_eq(run(out, sizeof out, "compress t.tsv --wide -o t.tseg"), 1, "%s", out);
    cr_assert(strstr(out, "(the first line is split by tabs, not commas"), "%s", out);
    cr_assert_eq(run(out, sizeof out, "compress h.csv -o h.tseg"), 0, "%s", out);
    cr_assert(strstr(out, "2 samples"), "%s", out);
    /* Fractional Unix seconds: refused, and said why. */
    write_file("f.csv", "ts,v\n1700000000.5,1\n");
    cr_assert_eq(run(out, sizeof out, "compress f.csv --ts-unit s -o f.tseg"), 1, "%s", out);
    cr_assert(strstr(out, "line 2: bad timestamp '1700000000.5': a timestamp is an integer in the timestamp unit, "
                          "or a date-time, not a decimal"), "%s", out);
}

/* cat of a segment holding one series needs no name (0.51.3); of several, the refusal says how many; a segment
 * given to compress is refused as one; ls --iso (0.51.5) gives date-times; merge takes each file once (0.51.7). */
Test(cli, cat_of_one_series_needs_no_name)
{
    char out[4096];
    write_file("one.csv", "5,1.5\n6,2.5\n");
    write_file("two.csv", "a,5,1.5\nb,6,2.5\n");
    cr_assert_eq(run(out, sizeof out, "compress one.csv -o one.tseg"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "compress two.csv -o two.tseg"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "cat one.tseg --from 6"), 0, "%s", out);
    cr_assert_str_eq(out, "timestamp,value\n6,2.5\n");
    cr_assert_eq(run(out, sizeof out, "cat two.tseg"), 1, "%s", out);
    cr_assert(strstr(out, "two.tseg holds 2 series: cat takes SERIES"), "%s", out);
    cr_assert_eq(run(out, sizeof out, "cat two.tseg b"), 0, "%s", out);
    cr_assert_str_eq(out, "timestamp,value\n6,2.5\n");
    /* merge of one file twice (0.51.7): refused, under its name or a link's, where its samples came out twice. */
    cr_assert_eq(run(out, sizeof out, "merge one.tseg two.tseg one.tseg -o m.tseg"), 1, "%s", out);
    cr_assert(strstr(out, "one.tseg is given twice: each segment once") && !exists("m.tseg"), "%s", out);
    cr_assert_eq(run_script(out, sizeof out, "ln -s one.tseg link.tseg && $T merge one.tseg link.tseg -o m.tseg"), 1,
                 "%s", out);
    cr_assert(strstr(out, "link.tseg is the same file as one.tseg: each segment once") && !exists("m.tseg"), "%s", out);
    cr_assert_eq(run(out, sizeof out, "merge one.tseg two.tseg -o m.tseg"), 0, "%s", out);
    /* ls --iso (0.51.5): the time range as date-times. */
    cr_assert_eq(run(out, sizeof out, "ls two.tseg --iso"), 0, "%s", out);
    cr_assert(strstr(out, "\na\t0\t1\t1\t1970-01-01T00:00:00.005Z\t1970-01-01T00:00:00.005Z\t"), "%s", out);
    cr_assert(strstr(out, "\nb\t1\t1\t1\t1970-01-01T00:00:00.006Z\t1970-01-01T00:00:00.006Z\t"), "%s", out);
    cr_assert_eq(run_script(out, sizeof out, "mkdir adir && $T compress adir -o d.tseg"), 1, "%s", out);
    cr_assert(strstr(out, "adir is a directory, not a CSV file") && !exists("d.tseg"), "%s", out);
    /* A segment given to compress is named for what it is. */
    cr_assert_eq(run(out, sizeof out, "compress two.tseg -o again.tseg"), 1, "%s", out);
    cr_assert(strstr(out, "two.tseg is a tschunk file already, not CSV") && !exists("again.tseg"), "%s", out);
}

/* Run `tschunk ARGS` in the work directory's `dir` with tests/sync_shim.c preloaded; the last fsync it made must
 * be of that directory (after the rename into it) and one before it of a file. */
static void assert_synced_into(const char *dir, const char *args)
{
    static char shim[4096];
    char cmd[8192], out[4096], wanted[4200];
    snprintf(cmd, sizeof cmd,
             "cd '%s/%s' && rm -f '%s/sync.report' && TSCHUNK_SYNC_REPORT='%s/sync.report'"
             " ASAN_OPTIONS=\"${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0\" LD_PRELOAD='%s' '%s' %s 2>&1",
             workdir, dir, workdir, workdir, shim_path("sync_shim.so", shim, sizeof shim), cli(), args);
    cr_assert_eq(run_line(out, sizeof out, cmd), 0, "%s: %s", args, out);
    snprintf(cmd, sizeof cmd, "cd '%s/%s' && printf 'dir %%s\\n' \"$(pwd -P)\"", workdir, dir);
    cr_assert_eq(run_line(wanted, sizeof wanted, cmd), 0, "%s", wanted);
    const char *report = read_file("sync.report"), *last = report + strlen(report);
    while (last > report && last[-1] == '\n') last--;
    while (last > report && last[-1] != '\n') last--;
    cr_assert_str_eq(last, wanted, "%s: the last fsync is not the output's directory's:\n%s", args, report);
    cr_assert(!strncmp(report, "file ", 5), "%s: no file synced before its directory:\n%s", args, report);
}

/* 0.52.0: every output renamed into place has its directory synced after the rename, so that its name survives a
 * power loss as its bytes do (before, only the file was synced). */
Test(cli, outputs_are_synced_with_their_directory)
{
    char out[4096];
    write_two_series("sync.csv");
    const char *setup = "mkdir -p out/deeper && cp sync.csv out/ && printf '1,2\\n3,4\\n' > out/p.csv";
    cr_assert_eq(run_script(out, sizeof out, setup), 0, "%s", out);
    assert_synced_into("out", "compress sync.csv -o a.tseg");
    assert_synced_into("out", "compress sync.csv -o deeper/../b.tseg --verify");
    assert_synced_into("out/deeper", "compress ../sync.csv -o ../../out/deeper/c.tseg --summary");
    assert_synced_into("out", "delete a.tseg a --from 0 --to 100");
    assert_synced_into("out", "compact a.tseg -o d.tseg");
    assert_synced_into("out", "merge a.tseg b.tseg -o e.tseg");
    assert_synced_into("out", "export-prom p.csv -o f.prom --verify");
    assert_synced_into("out", "export-prom p.csv -o g.prom");
    assert_synced_into("out", "import-prom g.prom -o h.tseg");
    assert_synced_into("out/deeper", "decompress ../h.tseg -o back.csv");
}

/* 0.52.1: temporary files are created exclusively (O_EXCL), so a link planted at the name a run would use
 * ("OUT.tmp.PID": exec keeps the shell's PID) is not followed to overwrite the file it names; the run takes the next
 * free name. */
Test(cli, temporary_names_follow_no_planted_link)
{
    char out[4096];
    static const char *const commands[] = {
        "compress p.csv -o o.tseg", "compress p.csv -o o.tseg --verify", "decompress o.tseg -o o.csv",
        "export-prom p.csv -o o.prom", "export-prom p.csv -o o.prom --verify", "delete o.tseg p --from 1 --to 1",
        "compact o.tseg -o o2.tseg",
    };
    static const char *const outputs[] = {"o.tseg", "o.tseg", "o.csv", "o.prom", "o.prom", "o.tseg", "o2.tseg"};
    write_file("p.csv", "1,2\n3,4\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        char script[1024];
        snprintf(script, sizeof script,
                 "printf 'keep me\\n' > victim && T=\"$T\" sh -c 'ln -s victim %s.tmp.$$ && exec \"$T\" %s' && "
                 "rm %s.tmp.* && cat victim", outputs[i], commands[i], outputs[i]);
        cr_assert_eq(run_script(out, sizeof out, script), 0, "%s: %s", commands[i], out);
        cr_assert(strstr(out, "keep me\n") && !strstr(out, "keep me\nkeep"), "%s: the link was followed:\n%s",
                  commands[i], out);
        cr_assert(exists(outputs[i]), "%s", commands[i]);
    }
    cr_assert_eq(run(out, sizeof out, "cat o.tseg"), 0, "%s", out);
    cr_assert_str_eq(out, "timestamp,value\n3,4\n");
}

/* An output that replaces a file keeps that file's permission bits, through a staged --verify output too; a new one
 * has the umask's default. Until 0.55.1 a private segment came back 0644 from a delete. */
Test(cli, replaced_outputs_keep_their_mode)
{
    char out[4096];
    static const char *const commands[] = {
        "compress p.csv -o m.tseg", "compress p.csv -o m.tseg --verify", "decompress m.tseg -o m.csv",
        "export-prom p.csv -o m.prom", "export-prom p.csv -o m.prom --verify", "delete m.tseg p --from 1 --to 1",
        "compact m.tseg -o m2.tseg", "import-prom m.prom -o m2.tseg",
    };
    static const char *const outputs[] = {"m.tseg", "m.tseg", "m.csv", "m.prom", "m.prom", "m.tseg", "m2.tseg",
                                          "m2.tseg"};
    write_file("p.csv", "1,2\n3,4\n");
    cr_assert_eq(run_script(out, sizeof out, "rm -f m.* m2.* && umask 022 && \"$T\" compress p.csv -o m.tseg > "
                                             "/dev/null && stat -c %a m.tseg && touch m.csv m.prom m2.tseg"), 0, "%s", out);
    cr_assert_str_eq(out, "644\n", "a new output");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        char script[1024];
        const char *mode = i % 2 ? "600" : "640";
        snprintf(script, sizeof script, "chmod %s %s && \"$T\" %s > /dev/null && stat -c %%a %s", mode, outputs[i],
                 commands[i], outputs[i]);
        cr_assert_eq(run_script(out, sizeof out, script), 0, "%s: %s", commands[i], out);
        cr_assert(!strncmp(out, mode, 3) && out[3] == '\n', "%s: mode %s, not %s", commands[i], out, mode);
    }
}

/* Run `tschunk ARGS` in the work directory's intr/ in the background with tests/sync_shim.c preloaded, sleeping at the
 * first fsync of `kind` ("file": the output written whole, before its rename; "dir": right after), send it `sig`
 * there, and return its exit status and what intr/ then holds ("status N\nfile\n..."), in out. `launch` goes before
 * the command (`env --default-signal=INT`: a background job's SIGINT is ignored otherwise). */
static void interrupt_at(char *out, size_t cap, const char *kind, const char *sig, const char *launch, const char *args)
{
    static char shim[4096];
    char cmd[8192];
    snprintf(cmd, sizeof cmd,
             "cd '%s/intr' && rm -f ../int.report && { TSCHUNK_SYNC_REPORT='%s/int.report' TSCHUNK_SYNC_SLEEP=%s"
             " ASAN_OPTIONS=\"${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0\" LD_PRELOAD='%s' %s '%s' %s"
             " > /dev/null 2>&1 & pid=$!; n=0; until grep -q '^%s ' ../int.report 2>/dev/null || [ $n -ge 600 ]; do"
             " n=$((n+1)); sleep 0.05; done; kill -%s $pid; sleep 0.1; kill -0 $pid 2>/dev/null && echo running"
             " && kill -TERM $pid; wait $pid; echo \"status $?\"; ls -A; } 2>&1 | grep -v '^Terminated'",
             workdir, workdir, kind, shim_path("sync_shim.so", shim, sizeof shim), launch, cli(), args, kind, sig);
    run_line(out, cap, cmd);
}

/* 0.53.0: a CLI run ended by SIGINT, SIGTERM or SIGHUP while writing leaves no temporary or staged file behind (an
 * interrupted merge left its OUT.tmp.PID), and a file rewritten in place stays as it was; a signal ignored on entry
 * (a background job's SIGINT) stays ignored. */
Test(cli, interrupted_runs_leave_no_temporary_file, .timeout = 120)
{
    char out[4096];
    const char *setup = "mkdir intr && cd intr && printf '1,2\\n3,4\\n5,6\\n' > p.csv && $T compress p.csv -o s.tseg"
                        " && $T export-prom p.csv -o g.prom && cp s.tseg ../s.copy";
    cr_assert_eq(run_script(out, sizeof out, setup), 0, "%s", out);
    static const struct {
        const char *kind, *sig, *args, *status;
    } runs[] = {
        {"file", "TERM", "compress p.csv -o new.tseg", "143"},
        {"dir", "TERM", "compress p.csv -o new.tseg --verify", "143"},
        {"file", "HUP", "decompress s.tseg -o new.csv", "129"},
        {"file", "TERM", "delete s.tseg p --from 0 --to 3", "143"},
        {"file", "TERM", "compact s.tseg -o new.tseg", "143"},
        {"file", "INT", "merge s.tseg -o new.tseg", "130"},
        {"file", "TERM", "export-prom p.csv -o new.prom", "143"},
        {"dir", "TERM", "export-prom p.csv -o new.prom --verify", "143"},
        {"file", "TERM", "import-prom g.prom -o new.tseg", "143"},
    };
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        char wanted[64];
        interrupt_at(out, sizeof out, runs[i].kind, runs[i].sig, "env --default-signal=INT", runs[i].args);
        snprintf(wanted, sizeof wanted, "status %s\ng.prom\np.csv\ns.tseg\n", runs[i].status);
        cr_assert_str_eq(out, wanted, "%s, SIG%s at the first %s sync", runs[i].args, runs[i].sig, runs[i].kind);
        cr_assert_eq(run_script(out, sizeof out, "cmp intr/s.tseg s.copy"), 0, "%s: %s", runs[i].args, out);
    }
    /* SIGINT ignored on entry: the run goes on (the test then ends it by SIGTERM, and the temporary file goes; the
     * shell's "Terminated" report is left out). */
    interrupt_at(out, sizeof out, "file", "INT", "", "compress p.csv -o new.tseg");
    cr_assert_str_eq(out, "running\nstatus 143\ng.prom\np.csv\ns.tseg\n");
}

/* 0.54.0: ls --json, one object a script can read: every series with its id, chunks, samples, time range (null for a
 * series compacted to nothing; date-times too with --iso) and bytes; a name's bytes outside UTF-8 as \u00XX. */
Test(cli, ls_json_lists_every_series)
{
    char out[4096];
    static const char csv[] = "series,timestamp,value\na,5,1.5\nb\\\xff\xc3\xa9,6,2.5\nb\\\xff\xc3\xa9,7,3\n";
    write_bytes("j.csv", csv, sizeof csv - 1);
    cr_assert_eq(run(out, sizeof out, "compress j.csv -o j.tseg"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "ls j.tseg --json"), 0, "%s", out);
    cr_assert(!strncmp(out, "{\"file\": \"j.tseg\", \"ts_unit\": \"ms\", \"series\": [\n"
                            "  {\"name\": \"a\", \"id\": 0, \"chunks\": 1, \"samples\": 1, \"first_ts\": 5, "
                            "\"last_ts\": 5, \"bytes\": ", 118), "%s", out);
    cr_assert(strstr(out, "},\n  {\"name\": \"b\\\\\\u00ff\xc3\xa9\", \"id\": 1, \"chunks\": 1, \"samples\": 2, "
                          "\"first_ts\": 6, \"last_ts\": 7, \"bytes\": "), "%s", out);
    cr_assert(strstr(out, "}\n]}\n") && !strchr(strstr(out, "}\n]}\n") + 5, '\n'), "%s", out);
    /* Not UTF-8: a surrogate, an overlong form, a code point past U+10FFFF, a sequence cut short; a 4-byte one is. */
    static const char odd[] = "c\xed\xa0\x80\xc0\xaf\xf4\x90\x80\x80\xf0\x9f\x98\x80\xe2\x82,1,2\n";
    write_bytes("odd.csv", odd, sizeof odd - 1);
    cr_assert_eq(run(out, sizeof out, "compress odd.csv -o odd.tseg"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "ls odd.tseg --json"), 0, "%s", out);
    cr_assert(strstr(out, "{\"name\": \"c\\u00ed\\u00a0\\u0080\\u00c0\\u00af\\u00f4\\u0090\\u0080\\u0080"
                          "\xf0\x9f\x98\x80\\u00e2\\u0082\", \"id\": 0,"), "%s", out);
    cr_assert_eq(run(out, sizeof out, "delete j.tseg a --from 0 --to 10"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "compact j.tseg"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "ls j.tseg --json --iso"), 0, "%s", out);
    cr_assert(strstr(out, "{\"name\": \"a\", \"id\": 0, \"chunks\": 0, \"samples\": 0, \"first_ts\": null, "
                          "\"last_ts\": null, \"first\": null, \"last\": null, \"bytes\": 0},\n"), "%s", out);
    cr_assert(strstr(out, "\"first_ts\": 6, \"last_ts\": 7, \"first\": \"1970-01-01T00:00:00.006Z\", "
                          "\"last\": \"1970-01-01T00:00:00.007Z\", \"bytes\": "), "%s", out);
    write_file("jp.csv", "1,2\n3,4\n");
    cr_assert_eq(run(out, sizeof out, "export-prom jp.csv -o jp.prom"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "ls jp.prom --json"), 0, "%s", out);
    static const char jp[] = "{\"file\": \"jp.prom\", \"ts_unit\": \"ms\", \"series\": [\n  {\"name\": \"jp.prom\", "
                             "\"id\": 0, \"chunks\": 1, \"samples\": 2, \"first_ts\": 1, \"last_ts\": 3, \"bytes\": ";
    cr_assert(!strncmp(out, jp, sizeof jp - 1), "%s", out);
    cr_assert_eq(run(out, sizeof out, "ls j.tseg --bits"), 2, "%s", out);
}

/* No value in JSON text out that printf wrote for a NaN or an infinity. */
static int finite_json(const char *out)
{
    static const char *const words[] = {": nan", ": -nan", ": inf", ": -inf", "[nan", "[inf", ", nan", ", inf"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strstr(out, words[i])) return 0;
    return 1;
}

/* 0.54.1: JSON has no NaN nor infinity: a sum past the double range (Kahan's sum of 1e308 + 1.7e308 + 1e308 is NaN,
 * as the reference libraries' is) and a decoded stream's NaN sum print as null, where they printed `-nan` / `nan`. */
Test(cli, json_numbers_are_finite_or_null)
{
    char out[4096];
    write_file("huge.csv", "1,1e308\n2,1.7e308\n3,1e308\n");
    cr_assert_eq(run(out, sizeof out, "compress huge.csv -o huge.tseg --summary"), 0, "%s", out);
    cr_assert_eq(run(out, sizeof out, "quantiles huge.tseg --q 0.5 --exact --json"), 0, "%s", out);
    cr_assert(strstr(out, "\"min\": 1e+308, \"max\": 1.6999999999999999e+308, \"sum\": null, \"quantiles\": [{"), "%s",
              out);
    cr_assert(finite_json(out), "%s", out);
    /* 1 and 2 with exact statistics, the SUM block's double made a NaN (f87f). */
    const char *nan_sum = "sketch decode a00388000000000000f03f8c000000000000004084000000000000f87f02fd4a815abf52f03f"
                          "0000000000000000050200024402 --json";
    cr_assert_eq(run(out, sizeof out, nan_sum), 0, "%s", out);
    cr_assert(strstr(out, "\"count\": 2, \"sum\": null, \"min\": 1, \"max\": 2,"), "%s", out);
    cr_assert(finite_json(out), "%s", out);
}

/* A Prometheus chunk's time may go back (its format and encoder allow it; Prometheus' own appender never writes it):
 * ls lists the file's range over every sample, not from each chunk's first and last (0.57.1: it listed 50 .. 10). */
Test(cli, ls_of_a_prometheus_file_takes_every_sample_range)
{
    unsigned char file[256], chunk[128];
    tschunk_prom_encoder enc;
    cr_assert_eq(tschunk_prom_encoder_init(&enc, chunk, sizeof chunk, NULL), 0);
    const int64_t ts[] = {50, 20, 90, 10};
    for (int i = 0; i < 4; i++) cr_assert_eq(tschunk_prom_append(&enc, ts[i], i + 1.0), 0);
    size_t size = tschunk_prom_encoder_finish(&enc);
    cr_assert(!tschunk_is_error(size) && size < 128);
    file[0] = (unsigned char)size; /* the record's uvarint length: one byte */
    memcpy(file + 1, chunk, size);
    write_bytes("back.prom", file, size + 1);
    char out[4096];
    cr_assert_eq(run(out, sizeof out, "ls back.prom"), 0, "%s", out);
    cr_assert(strstr(out, "\nback.prom\t0\t1\t4\t10\t90\t"), "%s", out);
}
