/*
 * tschunk: command-line front end.
 *
 *   tschunk compress IN.csv -o OUT [--samples-per-chunk N] [--max-chunk-bytes B]
 *                    [--ts-unit s|ms|us|ns] [--codec tsc2|gorilla] [--verify] ...
 *   tschunk decompress IN -o OUT.csv [--iso] [--bits]
 *   ... (usage() below lists every command and option)
 * Every command that reads a chunk file reads native files and Prometheus
 * XOR files (export-prom's length-prefixed records) alike.
 */
#define _POSIX_C_SOURCE 200809L
#include <sys/stat.h>

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "csv.h"
#include "file.h"
#include "output.h"
#include "sketch_cmd.h"
#include "tschunk.h"


/* To stderr with exit 2 for a wrong command line; `help` asks for it on stdout. */
static int usage_to(FILE *out)
{
    fputs("usage:\n"
          "  tschunk compress IN.csv -o OUT [--samples-per-chunk N] [--max-chunk-bytes B]\n"
          "                   [--ts-unit s|ms|us|ns] [--codec tsc2|gorilla] [--verify] [--wide]\n"
          "  tschunk decompress IN -o OUT.csv [--iso] [--bits]\n"
          "  tschunk stats IN [--json]\n"
          "  tschunk ls FILE [--iso] [--json]   (series, id, chunks, samples, time range, bytes)\n"
          "  tschunk cat SEGMENT [SERIES] [--from T --to T] [--bits] [--iso]   (bounds inclusive)\n"
          "  tschunk delete SEGMENT SERIES --from T --to T   (rewrites the segment with those samples hidden)\n"
          "  tschunk compact SEGMENT [-o OUT]   (deleted samples gone for good; in place without -o)\n"
          "  tschunk merge SEGMENT... -o OUT [--summary-block N] [--samples-per-chunk N [--codec tsc2|gorilla]]\n"
          "                   (one segment, series by name, deletes made final; chunks cut again to N samples)\n"
          "  tschunk verify FILE        (a chunk file or a segment: every checksum, structure and chunk)\n"
          "  tschunk export-prom IN.csv -o OUT [--samples-per-chunk N] [--max-chunk-bytes B]\n"
          "                   [--ts-unit s|ms|us|ns] [--verify]   (Prometheus XOR chunks)\n"
          "  tschunk import-prom IN -o OUT [--codec tsc2|gorilla]        (Prometheus XOR -> native)\n"
          "  tschunk sketch encode [--mapping logarithmic|cubic] [--alpha A] [--store dense|sparse]\n"
          "                        [--exact-stats] [--omit-mapping]  < values   (DDSketch, hex out)\n"
          "  tschunk sketch decode HEX [--q 0.5,0.99] [--json]\n"
          "  tschunk quantiles FILE [SERIES|--all] [--q 0.5,0.9,0.99] [--from T --to T] [--exact] [--json]\n"
          "                   [--mapping cubic|logarithmic] [--alpha A]\n"
          "                   (SERIES or --all for a segment; --mapping and --alpha: the sketch of a file\n"
          "                    without summaries)\n"
          "  (compress --summary [--mapping cubic|logarithmic] [--alpha A] keeps a DDSketch per chunk,\n"
          "   and one per --summary-block N consecutive chunks of a series, default 64, 1 = none)\n"
          "  tschunk version\n"
          "IN.csv: 'timestamp,value' or 'value' lines (one series), 'series,timestamp,value' lines (many),\n"
          "or with --wide a 'timestamp,name1,name2,...' table; header optional but for --wide; '-' reads stdin;\n"
          "a file compressed by gzip, bzip2, xz or zstd is read through that tool.\n"
          "Options come before '--'; what follows it is a file or a series, even one named like an option.\n"
          "T: an integer in the file's timestamp unit, or a date-time such as '2013-12-01 00:00:00' or "
          "2013-12-01T00:00:00Z.\n",
          out);
    return 2;
}

static int usage(void) { return usage_to(stderr); }

static int parse_long(const char *s, long min, long max, long *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (!*s || *end || v < min || v > max) return -1;
    *out = v;
    return 0;
}

/* Every option parse_options knows, the VALUE_OPTIONS that take a value first; each command takes the ones in its
 * row of command_options. */
static const char *const option_names[] = {"-o", "--q", "--from", "--to", "--mapping", "--summary-block", "--alpha",
                                           "--samples-per-chunk", "--max-chunk-bytes", "--ts-unit", "--codec",
                                           "--json", "--iso", "--bits", "--verify", "--summary", "--exact", "--all",
                                           "--wide"};
#define OPTION_COUNT (sizeof option_names / sizeof option_names[0])
#define VALUE_OPTIONS 11u

static unsigned option_bit(const char *a)
{
    for (unsigned i = 0; i < OPTION_COUNT; i++)
        if (!strcmp(a, option_names[i])) return 1u << i;
    return 0;
}

/* Value option `a` (one of the first VALUE_OPTIONS names) with its value `next` into o.
 * @return 1 when a is one and next was taken, 0 when a is not one, -1 after the message (no value, a bad one). */
static int parse_value_option(const char *a, const char *next, options *o)
{
    unsigned bit = option_bit(a);
    if (!bit || bit >= 1u << VALUE_OPTIONS) return 0;
    if (!next) return -fail("%s needs a value", a);
    if (!strcmp(a, "-o")) o->out = next;
    else if (!strcmp(a, "--q")) {
        if (!quantile_list_ok(next)) return -fail("--q takes quantiles in [0, 1] separated by commas, not '%s'", next);
        o->qlist = next;
    } else if (!strcmp(a, "--from") || !strcmp(a, "--to")) {
        char *end;
        errno = 0;
        long long t = strtoll(next, &end, 10);
        int64_t checked;
        int is_int = *next && !*end && errno != ERANGE;
        if (!is_int && parse_timestamp(next, UNIT_S, &checked) == -1) /* seconds: the widest range; finer, later */
            return -fail("%s takes an int64 timestamp in the file's unit or a date-time (YYYY-MM-DD HH:MM:SS, "
                         "ISO-8601 with T, Z or +HH:MM, or YYYY-MM-DD alone), not '%s'", a, next);
        if (a[2] == 'f') o->from = t, o->from_set = 1, o->from_text = is_int ? NULL : next;
        else o->to = t, o->to_set = 1, o->to_text = is_int ? NULL : next;
    } else if (!strcmp(a, "--mapping")) { /* the two the summaries offer, by the one names table (cli.c) */
        if (mapping_from_name(next, &o->mapping) ||
            (o->mapping != TSCHUNK_MAPPING_CUBIC && o->mapping != TSCHUNK_MAPPING_LOGARITHMIC))
            return -fail("--mapping takes cubic or logarithmic, not '%s'", next);
        o->mapping_set = 1;
    } else if (!strcmp(a, "--summary-block")) {
        if (parse_long(next, 1, 4096, &o->summary_block))
            return -fail("--summary-block must be 1..4096 chunks (1: no block summaries), not '%s'", next);
    } else if (!strcmp(a, "--alpha")) {
        char *end;
        o->alpha = strtod(next, &end);
        if (*end || !(o->alpha > 0 && o->alpha < 1)) return -fail("--alpha must be in (0, 1), not '%s'", next);
        o->mapping_set = 1;
    } else if (!strcmp(a, "--samples-per-chunk")) {
        if (parse_long(next, 1, TSCHUNK_MAX_SAMPLES, &o->samples_per_chunk))
            return -fail("--samples-per-chunk must be 1..65535, not '%s'", next);
        o->samples_per_chunk_set = 1;
    } else if (!strcmp(a, "--max-chunk-bytes")) {
        if (parse_long(next, 32, 1L << 30, &o->max_chunk_bytes))
            return -fail("--max-chunk-bytes must be 32..2^30, not '%s'", next);
    } else if (!strcmp(a, "--ts-unit")) {
        if ((o->unit = unit_parse(next)) < 0) return -fail("--ts-unit takes s, ms, us or ns, not '%s'", next);
        o->unit_set = 1;
    } else { /* --codec */
        if (!strcmp(next, "gorilla")) o->codec = TSCHUNK_CODEC_GORILLA;
        else if (!strcmp(next, "tsc2")) o->codec = TSCHUNK_CODEC_TSC2;
        else return -fail("unknown codec '%s' (known: gorilla, tsc2)", next);
    }
    return 1;
}

static void default_options(options *o)
{
    memset(o, 0, sizeof(*o));
    o->samples_per_chunk = DEFAULT_SAMPLES_PER_CHUNK;
    o->unit = UNIT_MS;
    o->codec = TSCHUNK_CODEC_TSC2; /* the default codec; --codec gorilla for codec 1 */
    o->mapping = TSCHUNK_MAPPING_CUBIC;
    o->alpha = 0.01;
    o->qlist = "0.5,0.9,0.99";
    o->from = INT64_MIN;
    o->to = INT64_MAX;
}

static int unknown_option(const char *a)
{
    return fail("unknown option '%s' (a file or series named so goes after --)", a);
}

/* The input file, then the series. @return 0, or 1 after the message for a third. */
static int positional(const char *a, options *o)
{
    if (!o->in) o->in = a;
    else if (!o->series) o->series = a;
    else return fail("unexpected argument '%s'", a);
    return 0;
}

static int parse_options(int argc, char **argv, options *o)
{
    default_options(o);
    int operands_only = 0; /* after "--": a file or a series, even one named like an option */
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!operands_only && !strcmp(a, "--")) {
            operands_only = 1;
            continue;
        }
        if (operands_only) {
            if (positional(a, o)) return 1;
            continue;
        }
        o->given |= option_bit(a);
        int taken = parse_value_option(a, i + 1 < argc ? argv[i + 1] : NULL, o);
        if (taken < 0) return 1;
        if (taken) i++;
        else if (!strcmp(a, "--json")) o->json = 1;
        else if (!strcmp(a, "--iso")) o->iso = 1;
        else if (!strcmp(a, "--bits")) o->bits = 1;
        else if (!strcmp(a, "--verify")) o->verify = 1;
        else if (!strcmp(a, "--summary")) o->summary = 1;
        else if (!strcmp(a, "--exact")) o->exact = 1;
        else if (!strcmp(a, "--all")) o->all = 1;
        else if (!strcmp(a, "--wide")) o->wide = 1;
        else if (a[0] == '-' && a[1]) return unknown_option(a);
        else if (positional(a, o)) return 1;
    }
    if (!o->in) return fail("missing input file");
    return 0;
}

/* ---- samples in memory ---------------------------------------------------- */
/* A whole file in memory, when it is a segment. @return 1 if so, 0 if another format, -1 after the message. */
static int open_if_segment(const char *path, tscf_reader *r)
{
    if (tscf_open(r, path)) {
        fail("%s", r->error);
        tscf_close(r);
        return -1;
    }
    return r->size >= 4 && !memcmp(r->data, "TSEG", 4);
}

static int read_csv(const options *o, sample_set *s, size_t *skipped)
{
    input_file in;
    if (input_open(&in, o->in)) return 1;
    csv_reader r;
    csv_init(&r, in.file, o->unit);
    int tty = isatty(2);
    double start = now_s(), last_report = start;
    int64_t ts;
    uint64_t bits;
    int got;
    int rc = 0;
    while (!rc && (got = csv_next(&r, &ts, &bits)) == 1) {
        if (r.columns == 3) rc = fail("%s: line %zu: one series only here (timestamp,value)", o->in, r.line_no);
        else if (samples_push(s, ts, bits)) rc = fail("out of memory after %zu samples", s->n);
        if (tty && (s->n & 0xffff) == 0 && now_s() - last_report > 1.0 && now_s() - start > 2.0) {
            fprintf(stderr, "\rreading %s: %zu samples", o->in, s->n);
            last_report = now_s();
        }
    }
    if (tty && last_report > start) fputc('\n', stderr);
    if (!rc && got < 0) rc = fail("%s: %s", o->in, r.error);
    rc |= input_close(&in, o->in, !rc);
    *skipped = r.skipped;
    csv_free(&r);
    return rc;
}

static int write_record(void *ctx, const unsigned char *chunk, size_t size, uint32_t samples,
                        const unsigned char *summary, size_t summary_size)
{
    (void)summary, (void)summary_size; /* Prometheus chunks have none */
    tscf_writer *w = ctx;
    if (tscf_write_chunk(w, chunk, size, samples)) return fail("write error on %s: %s", w->tmp_path, strerror(errno));
    return 0;
}

static int verify_file(const char *path, const sample_set *s);

/* export-prom: CSV of one series in, Prometheus XOR chunks out (length-prefixed), atomically. */
static int cmd_export_prom(const options *o)
{
    if (!o->out || !strcmp(o->out, "-")) return fail("export-prom needs -o OUT, a file (not stdout)");
    long per_chunk = o->samples_per_chunk_set ? o->samples_per_chunk : 120; /* Prometheus cuts at 120 */
    sample_set s = {0};
    size_t skipped = 0;
    tscf_writer w;
    if (read_csv(o, &s, &skipped)) { samples_free(&s); return 1; }
    if (!s.n) { /* the file format is chunks alone: none would be an empty file, which every reader refuses */
        samples_free(&s);
        return fail("%s: no samples, and a Prometheus chunk file of none would be empty: %s not written", o->in,
                    o->out);
    }
    char staged[4200];
    const char *target = staged_path(staged, sizeof staged, o->out, o->verify);
    if (!target) { samples_free(&s); return 1; }
    if (tscf_create(&w, target, o->out)) {
        samples_free(&s);
        return fail("cannot create %s: %s", o->out, strerror(errno));
    }
    signal_removes_temp(w.tmp_path);
    double encode_s = 0;
    if (encode_chunks(FORMAT_PROM, 0, s.ts, s.bits, s.n, (uint32_t)per_chunk, (uint32_t)o->max_chunk_bytes, NULL,
                      write_record, &w, &encode_s)) {
        tscf_abort(&w);
        signal_removes_temp(NULL);
        samples_free(&s);
        return fail("%s not written", o->out);
    }
    int commit_rc = tscf_commit(&w);
    signal_removes_temp(NULL);
    if (committed(commit_rc, o->out)) {
        samples_free(&s);
        return 1;
    }
    printf("%s -> %s: %zu sample%s (%zu empty value%s skipped), %llu Prometheus XOR chunk%s, %llu bytes\n", o->in,
           o->out, s.n, plural(s.n), skipped, plural(skipped), (unsigned long long)w.chunks, plural(w.chunks),
           (unsigned long long)w.bytes);
    series_view view = {s.ts, s.bits, s.n};
    int passes;
    double best_s = encode_best_s(FORMAT_PROM, 0, (uint32_t)per_chunk, (uint32_t)o->max_chunk_bytes, NULL, &view, 1,
                                  encode_s, &passes);
    printf("  %.3f bytes/sample (%.2f bits), ratio %.1fx against 16-byte raw samples, encode %.2f ns/sample "
           "(best of %d passes; the first, writing the file, %.2f)\n",
           (double)w.bytes / (double)s.n, (double)w.bytes * 8 / (double)s.n, 16.0 * (double)s.n / (double)w.bytes,
           best_s * 1e9 / (double)s.n, passes, encode_s * 1e9 / (double)s.n);
    int rc = o->verify ? publish_staged(target, o->out, verify_file(target, &s)) : 0;
    samples_free(&s);
    return rc;
}

static int cmd_compress(const options *o) { return segment_compress(o); }

/* ---- reading files -------------------------------------------------------- */
typedef int (*sample_fn)(void *ctx, int64_t ts, uint64_t bits);

/* Decode every sample of a file in order. @return 0, or 1 after printing the damage. */
static int for_each_sample(const char *path, int *unit, sample_fn fn, void *ctx)
{
    tscf_reader r;
    if (tscf_open(&r, path)) { tscf_close(&r); return fail("%s", r.error); }
    if (unit) *unit = r.unit;
    const unsigned char *chunk;
    size_t size;
    int got, tty = isatty(2);
    double start = now_s(), last_report = start;
    while ((got = tscf_next(&r, &chunk, &size)) == 1) {
        size_t n = decode_any(r.format, chunk, size);
        if (tschunk_is_error(n)) {
            tscf_close(&r);
            return fail_chunk(path, r.chunks_seen - 1, tschunk_error_name(n));
        }
        if (tty && (r.chunks_seen & 63) == 0 && now_s() - start > 2.0 && now_s() - last_report > 1.0) {
            fprintf(stderr, "\r%s: %.0f%%", path, 100.0 * (double)r.pos / (double)r.size);
            last_report = now_s();
        }
        for (size_t i = 0; i < n; i++) {
            uint64_t bits;
            memcpy(&bits, &chunk_values[i], 8);
            if (fn(ctx, chunk_ts[i], bits)) { tscf_close(&r); return 1; }
        }
    }
    if (tty && last_report > start) fputc('\n', stderr);
    tscf_close(&r);
    if (got < 0) return fail("%s: %s", path, r.error);
    return 0;
}

typedef struct {
    const sample_set *want;
    size_t at;
} verify_ctx;

static int verify_sample(void *ctx, int64_t ts, uint64_t bits)
{
    verify_ctx *v = ctx;
    if (v->at >= v->want->n || v->want->ts[v->at] != ts || v->want->bits[v->at] != bits) {
        fprintf(stderr, "tschunk: verify: sample %zu differs\n", v->at);
        return 1;
    }
    v->at++;
    return 0;
}

static int verify_file(const char *path, const sample_set *s)
{
    verify_ctx v = {s, 0};
    if (for_each_sample(path, NULL, verify_sample, &v)) return 1;
    if (v.at != s->n) return fail("verify: %s holds fewer samples than the input", path);
    printf("  verify: all %zu samples decode bit-for-bit identical\n", s->n);
    return 0;
}

/* ---- decompress ----------------------------------------------------------- */
/* Chunk files (native TSCF or Prometheus): `timestamp,value` lines. */
static int decompress_chunk_file(const options *o, const tscf_reader *r, FILE *out)
{
    text_ctx t = {out, iso_unit(o, r->unit), o->iso, o->bits, NULL, 0};
    fprintf(out, "timestamp,value\n");
    return for_each_sample(o->in, NULL, print_sample, &t);
}

static int cmd_decompress(const options *o)
{
    if (!o->out) return fail("decompress needs -o OUT.csv (or -o -)");
    tscf_reader r;
    int seg = open_if_segment(o->in, &r);
    if (seg < 0) return 1;
    int to_stdout = !strcmp(o->out, "-");
    output_file file = {0};
    int rc = to_stdout ? 0 : output_create(&file, o->out, o->out);
    FILE *out = to_stdout ? stdout : file.file.out;
    if (!rc) rc = seg ? segment_decompress(o, r.data, r.size, out) : decompress_chunk_file(o, &r, out);
    tscf_close(&r);
    if (to_stdout || !out) return rc;
    if (rc) output_discard(&file);
    return rc ? rc : output_commit(&file);
}

/* ---- stats ---------------------------------------------------------------- */
/* Decode every chunk, 16 a call (the lanes' width) as long as their samples fit the one-chunk buffer.
 * @return the samples decoded, or SIZE_MAX when a call failed. */
static size_t decode_file(tscf_reader *r)
{
    enum { PER_CALL = 16 };
    const void *batch[PER_CALL];
    size_t sizes[PER_CALL], n = 0, batch_samples = 0;
    const unsigned char *chunk;
    size_t size;
    uint64_t seen = r->samples_seen;
    size_t decoded = 0, got = 0;
    while (tscf_next(r, &chunk, &size) == 1 && !tschunk_is_error(got)) {
        size_t count = (size_t)(r->samples_seen - seen);
        seen = r->samples_seen;
        if (n == PER_CALL || batch_samples + count > TSCHUNK_MAX_SAMPLES) {
            decoded += got = decode_many(r->format, batch, sizes, n);
            n = batch_samples = 0;
        }
        batch[n] = chunk;
        sizes[n++] = size;
        batch_samples += count;
    }
    if (n && !tschunk_is_error(got)) decoded += got = decode_many(r->format, batch, sizes, n);
    return tschunk_is_error(got) ? SIZE_MAX : decoded;
}

static double time_decode(tscf_reader *r, uint64_t samples)
{
    double best = 0;
    for (int rep = 0; rep < 5 && samples; rep++) {
        tscf_rewind(r);
        double t0 = now_s();
        if (decode_file(r) != samples) return -1; /* the chunks decoded one by one, but not together */
        double ns = (now_s() - t0) * 1e9 / (double)samples;
        if (rep == 0 || ns < best) best = ns;
    }
    return best;
}

static int collect_stats(const char *path, stats *st)
{
    memset(st, 0, sizeof(*st));
    tscf_reader r;
    int seg = open_if_segment(path, &r);
    if (seg) {
        int rc = seg < 0 ? 1 : segment_stats(path, r.data, r.size, st);
        tscf_close(&r);
        return rc;
    }
    st->format = r.format;
    const unsigned char *chunk;
    size_t size;
    int got;
    while ((got = tscf_next(&r, &chunk, &size)) == 1) {
        size_t n = decode_any(r.format, chunk, size);
        if (tschunk_is_error(n)) {
            tscf_close(&r);
            return fail_chunk(path, r.chunks_seen - 1, tschunk_error_name(n));
        }
        st->chunks++;
        st->samples += n;
        if (r.summary) st->summary_bytes += uvarint_size(r.summary_size) + r.summary_size;
        if (chunk_stats(st, r.format, chunk, size, n)) { tscf_close(&r); return 1; }
    }
    if (got < 0) { tscf_close(&r); return fail("%s: %s", path, r.error); }
    st->bytes = r.size;
    if (r.format == FORMAT_NATIVE) st->native_bytes = r.size - st->summary_bytes; /* encodings compared without summaries */
    else {
        st->prom_bytes = r.size;
        if (prom_as_segment_bytes(path, &r, &st->native_bytes)) { /* what import-prom writes */
            tscf_close(&r);
            return 1;
        }
    }
    st->decode_ns = time_decode(&r, st->samples);
    tscf_close(&r);
    return st->decode_ns < 0 ? fail("%s: the chunks decode one by one but not 16 at a time", path) : 0;
}

/* What a scan of a chunk file (native or Prometheus) found, every chunk decoded. */
typedef struct {
    uint64_t chunks, samples, bytes;
    int64_t first, last;
} file_scan;

/* @return 0, or 1 after naming the damaged chunk. */
static int scan_chunk_file(const char *path, tscf_reader *r, file_scan *scan)
{
    *scan = (file_scan){0, 0, 0, INT64_MAX, INT64_MIN};
    const unsigned char *chunk;
    size_t size;
    int got;
    while ((got = tscf_next(r, &chunk, &size)) == 1) {
        size_t n = decode_any(r->format, chunk, size);
        if (tschunk_is_error(n))
            return fail_chunk(path, scan->chunks, tschunk_error_name(n));
        for (size_t k = 0; k < n; k++) { /* a Prometheus chunk's time may go back: not its ends alone */
            if (chunk_ts[k] < scan->first) scan->first = chunk_ts[k];
            if (chunk_ts[k] > scan->last) scan->last = chunk_ts[k];
        }
        scan->chunks++;
        scan->samples += n;
        scan->bytes += size;
    }
    return got < 0 ? fail("%s: %s", path, r->error) : 0;
}

typedef int (*segment_fn)(const options *o, const unsigned char *data, size_t size);
typedef int (*chunk_file_fn)(const options *o, tscf_reader *r); /* r is closed by the caller */

/* The timestamp unit of a file open in r (a segment's header, a chunk file's, Prometheus' milliseconds), or the
 * error of a segment that does not open. */
static size_t file_unit(const tscf_reader *r, int seg, int *unit)
{
    *unit = r->unit;
    if (!seg) return 0;
    tschunk_segment *s;
    size_t err = tschunk_segment_open(&s, r->data, r->size, TSCHUNK_SEGMENT_LAZY, NULL);
    if (err) return err;
    tschunk_segment_info info;
    tschunk_segment_get_info(s, &info);
    tschunk_segment_close(s);
    *unit = (int)info.ts_unit;
    return 0;
}

/* Date-time bounds converted to the file's unit (a bound past it, or a file without one, is an error). */
static int resolve_bounds(options *o, int unit)
{
    const char *texts[2] = {o->from_text, o->to_text};
    int64_t *bounds[2] = {&o->from, &o->to};
    for (int k = 0; k < 2; k++) {
        if (!texts[k]) continue;
        if (unit == UNIT_RAW) return fail("%s: its timestamps have no unit: give --from/--to as integers", o->in);
        int refusal = parse_timestamp(texts[k], unit, bounds[k]);
        if (refusal == TS_FINER_THAN_UNIT) /* cut short, a bound would take or drop samples */
            return fail("%s '%s' has digits finer than the file's timestamp unit, %s", k ? "--to" : "--from", texts[k],
                        unit_name(unit));
        if (refusal)
            return fail("%s '%s' is outside the range of the file's timestamp unit", k ? "--to" : "--from", texts[k]);
    }
    return 0;
}

/* Run a command's segment form, or its chunk-file form (NULL: refuse with `refusal`). */
static int by_format(const options *given, segment_fn on_segment, chunk_file_fn on_chunk_file, const char *refusal)
{
    options o = *given;
    tscf_reader r;
    int seg = open_if_segment(o.in, &r);
    if (seg < 0) return 1;
    int rc = 0;
    o.bounds_unit = -1;
    if (o.from_set || o.to_set) {
        /* A segment that does not open is named here only when a date-time bound needs its unit; otherwise the
         * command's own reading names it. */
        size_t err = file_unit(&r, seg, &o.bounds_unit);
        if (err) o.bounds_unit = -1;
        if (o.from_text || o.to_text)
            rc = err ? fail("%s: broken segment: %s", o.in, tschunk_error_name(err)) : resolve_bounds(&o, o.bounds_unit);
    }
    /* Swapped bounds select nothing: cat printed a bare header and quantiles "no values" (delete refused them). */
    if (!rc && o.from_set && o.to_set && o.from > o.to)
        rc = fail("--from %lld is after --to %lld (the bounds are inclusive)", (long long)o.from, (long long)o.to);
    if (!rc)
        rc = seg            ? on_segment(&o, r.data, r.size)
           : on_chunk_file ? on_chunk_file(&o, &r)
                           : fail("%s: %s", o.in, refusal);
    tscf_close(&r);
    return rc;
}

static int verify_chunk_file(const options *o, tscf_reader *r)
{
    int format = r->format;
    file_scan scan;
    if (scan_chunk_file(o->in, r, &scan)) return 1;
    printf("%s: ok (%s, %llu chunk%s, %llu sample%s)\n", o->in,
           format == FORMAT_NATIVE ? "tschunk file v1" : "Prometheus XOR chunks", (unsigned long long)scan.chunks,
           plural(scan.chunks), (unsigned long long)scan.samples, plural(scan.samples));
    return 0;
}

/* Exit 0 only when every checksum, structure and chunk of the file holds; otherwise name what is broken. */
static int cmd_verify(const options *o) { return by_format(o, segment_verify, verify_chunk_file, NULL); }

/* A chunk file holds one series, listed under the file's name. */
static int list_chunk_file(const options *o, tscf_reader *r)
{
    file_scan scan;
    if (scan_chunk_file(o->in, r, &scan)) return 1;
    int unit = iso_unit(o, r->unit);
    ls_series row = {o->in, strlen(o->in), 0, scan.chunks, scan.samples, scan.bytes, scan.first, scan.last};
    ls_begin(o, unit);
    ls_row(o, unit, &row, 1);
    ls_end(o, 1);
    return 0;
}

static int cmd_ls(const options *o) { return by_format(o, segment_list, list_chunk_file, NULL); }

/* stats --json: one object, its keys a contract (codec-scoreboard reads them). figures: bits a sample, a timestamp,
 * a value and decode ns a sample, or NULL for a file without samples (then null: no figure a sample). */
static void print_stats_json(const options *o, const stats *st, const char *fmt, double ratio, const double *figures)
{
    static const char *const keys[4] = {"bits_per_sample", "bits_per_timestamp", "bits_per_value",
                                        "decode_ns_per_sample"};
    printf("{\"file\": ");
    print_json_string(o->in);
    printf(", \"codec\": \"%s\", \"samples\": %llu, \"chunks\": %llu, \"bytes\": %llu", fmt,
           (unsigned long long)st->samples, (unsigned long long)st->chunks, (unsigned long long)st->bytes);
    for (int k = 0; k < 4; k++) {
        if (k == 3) printf(", \"ratio\": %.4f", ratio);
        if (figures) printf(k == 3 ? ", \"%s\": %.3f" : ", \"%s\": %.4f", keys[k], figures[k]);
        else printf(", \"%s\": null", keys[k]);
    }
    printf(", \"native_bytes\": %llu, \"prom_xor_bytes\": %llu, \"native_chunk_bytes\": %llu, "
           "\"prom_xor_chunk_bytes\": %llu, \"summary_bytes\": %llu}\n",
           (unsigned long long)st->native_bytes, (unsigned long long)st->prom_bytes,
           (unsigned long long)st->native_chunk_bytes, (unsigned long long)st->prom_chunk_bytes,
           (unsigned long long)st->summary_bytes);
}

static int cmd_stats(const options *o)
{
    stats st;
    if (collect_stats(o->in, &st)) return 1;
    double n = st.samples ? (double)st.samples : 1;
    double bps = (double)st.bytes * 8 / n, bpt = (double)st.ts_bits / n, bpv = (double)st.value_bits / n;
    double ratio = st.bytes ? 16.0 * (double)st.samples / (double)st.bytes : 0;
    const char *fmt = st.format != FORMAT_NATIVE                         ? "prometheus-xor"
                      : !st.codecs                                      ? "none" /* no chunks: no codec */
                      : st.codecs == 1u << TSCHUNK_CODEC_TSC2           ? "tsc2"
                      : st.codecs & (1u << TSCHUNK_CODEC_TSC2)          ? "mixed"
                                                                        : "gorilla";
    const double figures[4] = {bps, bpt, bpv, st.decode_ns};
    if (o->json) {
        print_stats_json(o, &st, fmt, ratio, st.samples ? figures : NULL);
        return 0;
    }
    if (!st.samples) { /* no figure a sample to give */
        printf("file             %s\ncodec            %s\nsamples          0\nchunks           %llu\n"
               "bytes            %llu (no samples, so no figures a sample)\n",
               o->in, strcmp(fmt, "none") ? fmt : "none (no chunks)", (unsigned long long)st.chunks,
               (unsigned long long)st.bytes);
        return 0;
    }
    printf("file             %s\n", o->in);
    printf("codec            %s\n", st.format != FORMAT_NATIVE ? "Prometheus XOR chunks (length-prefixed)"
                                    : !strcmp(fmt, "tsc2")      ? "tsc2 (codec 2: groups of 128; chunk format v1 framing)"
                                    : !strcmp(fmt, "mixed")     ? "gorilla and tsc2 chunks"
                                                                : "gorilla (tschunk chunk format v1, segment or chunk file)");
    printf("samples          %llu\n", (unsigned long long)st.samples);
    printf("chunks           %llu\n", (unsigned long long)st.chunks);
    printf("bytes            %llu (%.3f bytes/sample)\n", (unsigned long long)st.bytes, (double)st.bytes / n);
    printf("bits/sample      %.2f  (timestamps %.2f, values %.2f, framing and headers %.2f)\n", bps, bpt, bpv,
           bps - bpt - bpv - (double)st.summary_bytes * 8 / n);
    if (st.summary_bytes)
        printf("summaries        %llu bytes (%.2f bits/sample, included above)\n", (unsigned long long)st.summary_bytes,
               (double)st.summary_bytes * 8 / n);
    printf("ratio            %.2fx against 16 raw bytes per sample\n", ratio);
    printf("decode           %.2f ns/sample (%.0f M samples/s, best of 5)\n", st.decode_ns,
           st.decode_ns > 0 ? 1e3 / st.decode_ns : 0);
    printf("same samples as  tschunk native: %llu bytes (%.3f bytes/sample); Prometheus XOR: %llu bytes "
           "(%.3f bytes/sample); native is %+.1f%%\n",
           (unsigned long long)st.native_bytes, (double)st.native_bytes / n, (unsigned long long)st.prom_bytes,
           (double)st.prom_bytes / n,
           st.prom_bytes ? ((double)st.native_bytes / (double)st.prom_bytes - 1) * 100 : 0);
    /* On a small file a segment's index, names and checksums outweigh its chunks: say what the chunks alone weigh. */
    printf("chunks alone     tschunk native: %llu bytes; Prometheus XOR: %llu bytes; native is %+.1f%%\n",
           (unsigned long long)st.native_chunk_bytes, (unsigned long long)st.prom_chunk_bytes,
           st.prom_chunk_bytes ? ((double)st.native_chunk_bytes / (double)st.prom_chunk_bytes - 1) * 100 : 0);
    return 0;
}

/* Every finite value with from <= ts <= to, decoded and sorted, for --exact. A chunk that does not decode is a
 * failure, named as the segment path names it, not a chunk left out (until 0.57.5 it was, where the summaries had
 * answered the range without decoding it). @return 0, or 1 after the message. */
static int exact_values(const tschunk_chunk_ref *refs, size_t n, const options *o, value_list *out)
{
    for (size_t i = 0; i < n; i++) {
        tschunk_summary_info info; /* the chunks the range query skipped by their summaries are not read here */
        if (refs[i].summary && tschunk_summary_parse(refs[i].summary, refs[i].summary_size, &info) == 0 &&
            info.count && (info.last_ts < o->from || info.first_ts > o->to))
            continue;
        tschunk_iter it;
        size_t got = tschunk_iter_init(&it, refs[i].chunk, refs[i].chunk_size);
        int64_t ts;
        double x;
        while (!tschunk_is_error(got) && (got = tschunk_iter_next(&it, &ts, &x)) == 1)
            if (ts >= o->from && ts <= o->to && isfinite(x) && values_push(out, x)) return fail("out of memory");
        if (tschunk_is_error(got)) return fail_chunk(o->in, i, tschunk_error_name(got));
    }
    if (out->n) qsort(out->v, out->n, sizeof *out->v, cmp_dbl);
    return 0;
}

/* The sketch that answers: the summaries' mapping, or --mapping/--alpha without summaries. */
static tschunk_sketch *range_sketch(const tschunk_chunk_ref *refs, size_t n, const options *o)
{
    tschunk_sketch *acc = NULL;
    tschunk_summary_info info;
    if (n && refs[0].summary && tschunk_summary_parse(refs[0].summary, refs[0].summary_size, &info) == 0 &&
        tschunk_sketch_decode_new(&acc, info.sketch, info.sketch_size, NULL, NULL) == 0) {
        tschunk_sketch_clear(acc);
        return acc;
    }
    tschunk_sketch_options so = {o->mapping, o->alpha, 0, 0, {NULL, NULL, NULL}, 0};
    return tschunk_sketch_create(&acc, &so) == 0 ? acc : NULL;
}

/* The chunks of a chunk file and their summaries, in place in r. @return 0 or 1 after the message. */
static int chunk_file_refs(const options *o, tscf_reader *r, tschunk_chunk_ref **out, size_t *count)
{
    if (r->format != FORMAT_NATIVE) return fail("%s: quantiles reads native files (import-prom first)", o->in);
    if (o->series) return fail("%s holds one series: drop '%s'", o->in, o->series);
    size_t n = 0, cap = 1024;
    tschunk_chunk_ref *refs = malloc(cap * sizeof *refs);
    const unsigned char *chunk;
    size_t size;
    int got = 0;
    while (refs && (got = tscf_next(r, &chunk, &size)) == 1) {
        if (n == cap) {
            tschunk_chunk_ref *grown = realloc(refs, (cap *= 2) * sizeof *refs);
            if (!grown) { free(refs); refs = NULL; break; }
            refs = grown;
        }
        refs[n++] = (tschunk_chunk_ref){chunk, size, r->summary, r->summary_size};
    }
    *out = refs;
    *count = n;
    if (!refs) return fail("out of memory");
    return got < 0 ? fail("%s: %s", o->in, r->error) : 0;
}

typedef struct {
    const tschunk_chunk_ref *refs;
    size_t n;
    int64_t from, to;
} chunk_query;

static size_t run_chunk_query(const void *query, tschunk_sketch *acc, tschunk_range_stats *st)
{
    const chunk_query *q = query;
    return tschunk_range_merge(acc, q->refs, q->n, q->from, q->to, st);
}

static int quantiles_chunk_file(const options *o, tscf_reader *r)
{
    size_t n = 0;
    tschunk_chunk_ref *refs = NULL;
    int rc = chunk_file_refs(o, r, &refs, &n);
    if (rc) { free(refs); return rc; }
    tschunk_sketch *acc = range_sketch(refs, n, o), *scratch = range_sketch(refs, n, o);
    if (!acc || !scratch) rc = fail("out of memory");
    else rc = mapping_conflict(o, acc);
    tschunk_range_stats st;
    chunk_query query = {refs, n, o->from, o->to};
    double us[2];
    size_t err = rc ? 0 : range_query_times(run_chunk_query, &query, acc, scratch, &st, us);
    if (!rc && tschunk_is_error(err)) rc = fail("%s: %s", o->in, tschunk_error_name(err));
    value_list exact = {0};
    if (!rc && o->exact) rc = exact_values(refs, n, o, &exact);
    if (!rc) print_quantiles(o, &st, us, acc, exact.v, exact.n);
    free(exact.v);
    free(refs);
    tschunk_sketch_free(acc);
    tschunk_sketch_free(scratch);
    return rc;
}

static int cmd_quantiles(const options *o) { return by_format(o, segment_quantiles, quantiles_chunk_file, NULL); }

/* ---- import-prom ---------------------------------------------------------- */
static int cmd_import_prom(const options *o)
{
    if (!o->out || !strcmp(o->out, "-")) return fail("import-prom needs -o OUT, a file (not stdout)");
    tscf_reader r;
    if (tscf_open(&r, o->in)) { tscf_close(&r); return fail("%s", r.error); }
    int rc = r.format != FORMAT_PROM ? fail("%s is a native file already", o->in) : segment_import_prom(o, &r);
    tscf_close(&r);
    return rc;
}

static int cmd_cat(const options *o) { return by_format(o, segment_cat, NULL, "cat reads segments; use decompress"); }

static int cmd_delete(const options *o)
{
    return by_format(o, segment_delete, NULL, "delete works on segments (compress writes them)");
}

static int cmd_compact(const options *o)
{
    return by_format(o, segment_compact, NULL, "compact works on segments (compress writes them)");
}

/* A file by its device and inode, so that one named twice (or through a link) is known. */
typedef struct {
    dev_t dev;
    ino_t ino;
} file_id;

/* @return 0 with path's id in *id, or -1 when it cannot be stat'ed. */
static int file_id_of(const char *path, file_id *id)
{
    struct stat st;
    if (stat(path, &st)) return -1;
    *id = (file_id){st.st_dev, st.st_ino};
    return 0;
}

static int same_file(const file_id *a, const file_id *b) { return a->dev == b->dev && a->ino == b->ino; }

/* Whether the output path names the input file (a link to it included): writing it would destroy the input. */
static int output_is_input(const options *o)
{
    file_id in, out;
    if (!o->in || !o->out || !strcmp(o->in, "-") || !strcmp(o->out, "-")) return 0;
    return !file_id_of(o->in, &in) && !file_id_of(o->out, &out) && same_file(&in, &out);
}

/* The options each command takes (the usage text's): another one would be ignored without a word, so that `quantiles
 * --json` printed text and `cat --exact` did nothing, silently. */
static const struct {
    const char *command, *options;
} command_options[] = {
    {"compress", "-o --samples-per-chunk --max-chunk-bytes --ts-unit --codec --verify --wide --summary --mapping --alpha "
                 "--summary-block"},
    {"decompress", "-o --iso --bits"},
    {"stats", "--json"},
    {"verify", ""},
    {"ls", "--iso --json"},
    {"cat", "--from --to --bits --iso"},
    {"delete", "--from --to"},
    {"compact", "-o"},
    {"export-prom", "-o --samples-per-chunk --max-chunk-bytes --ts-unit --verify"},
    {"import-prom", "-o --codec"},
    {"quantiles", "--all --q --from --to --exact --mapping --alpha --json"},
    {"merge", "-o --summary-block --samples-per-chunk --codec"},
};

/* Whether the space-separated list holds name as one of its words. */
static int list_has(const char *list, const char *name)
{
    size_t len = strlen(name);
    for (const char *at = strstr(list, name); at; at = strstr(at + 1, name))
        if ((at == list || at[-1] == ' ') && (at[len] == 0 || at[len] == ' ')) return 1;
    return 0;
}

/* @return 1 after naming the first option `cmd` does not take, 0 when it takes them all (or is not known). */
static int options_not_taken(const char *cmd, unsigned given)
{
    for (size_t c = 0; c < sizeof command_options / sizeof command_options[0]; c++) {
        if (strcmp(cmd, command_options[c].command)) continue;
        for (unsigned i = 0; i < OPTION_COUNT; i++)
            if ((given >> i & 1) && !list_has(command_options[c].options, option_names[i]))
                return fail("%s does not take %s (tschunk help lists each command's options)", cmd, option_names[i]);
        return 0;
    }
    return 0;
}

/* Options that mean something only beside another (given alone they were ignored without a word).
 * @return 1 after naming the first one given without its partner, else 0. */
static int options_without_partner(const char *cmd, const options *o)
{
    static const char *const summary_options[] = {"--mapping", "--alpha", "--summary-block"};
    for (size_t i = 0; !strcmp(cmd, "compress") && !o->summary && i < 3; i++)
        if (o->given & option_bit(summary_options[i]))
            return fail("%s goes with --summary (it shapes the summaries)", summary_options[i]);
    if (!strcmp(cmd, "merge") && !o->samples_per_chunk_set && (o->given & option_bit("--codec")))
        return fail("--codec goes with --samples-per-chunk (without it merge copies the chunks as they are)");
    return 0;
}

/* path's id into ids[n]. @return the position of the same file among ids[0, n) (merged twice, its samples would be
 * too), or n. */
static size_t given_before(file_id *ids, size_t n, const char *path)
{
    if (file_id_of(path, &ids[n])) return n; /* the open that follows says why */
    size_t k = 0;
    while (k < n && !same_file(&ids[k], &ids[n])) k++;
    return k;
}

/* merge IN... -o OUT [--summary-block N] [--samples-per-chunk N [--codec C]]: its own arguments, since it takes any
 * number of inputs. Series are matched by name. */
static int cmd_merge(int argc, char **argv)
{
    options o;
    default_options(&o);
    size_t n = 0;
    tscf_reader *readers = calloc((size_t)argc + 1, sizeof *readers);
    const char **paths = calloc((size_t)argc + 1, sizeof *paths);
    const unsigned char **data = calloc((size_t)argc + 1, sizeof *data);
    size_t *sizes = calloc((size_t)argc + 1, sizeof *sizes);
    file_id *ids = calloc((size_t)argc + 1, sizeof *ids);
    int rc = readers && paths && data && sizes && ids ? 0 : fail("out of memory");
    int wrong_line = 0; /* a wrong command line exits 2, as every other command's does */
    int operands_only = 0; /* after "--": segments, even one named like an option */
    size_t twice;
    for (int i = 0; i < argc && !rc; i++) {
        const char *a = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (!operands_only && !strcmp(a, "--")) {
            operands_only = 1;
            continue;
        }
        if (!operands_only) o.given |= option_bit(a);
        int taken = operands_only                              ? 0
                    : options_not_taken("merge", option_bit(a)) ? -1
                                                                : parse_value_option(a, next, &o);
        if (taken < 0 || (!taken && !operands_only && a[0] == '-' && a[1])) {
            rc = wrong_line = taken < 0 ? 1 : unknown_option(a);
        } else if (taken) {
            i++;
        } else if ((twice = given_before(ids, n, a)) < n) {
            rc = strcmp(paths[twice], a) ? fail("%s is the same file as %s: each segment once", a, paths[twice])
                                         : fail("%s is given twice: each segment once", a);
        } else {
            int seg = open_if_segment(a, &readers[n]);
            rc = seg < 0 ? 1 : !seg ? fail("%s: merge works on segments (compress writes them)", a) : 0;
            if (seg >= 0) paths[n] = a, data[n] = readers[n].data, sizes[n] = readers[n].size, n++;
        }
    }
    if (!rc && options_without_partner("merge", &o)) rc = wrong_line = 1;
    if (!rc && (!o.out || !strcmp(o.out, "-") || !n))
        rc = wrong_line = fail("merge needs SEGMENT... and -o OUT, a file");
    const char *out = rc ? NULL : writable_path(o.out);
    if (!rc && !out) rc = 1;
    tschunk_segment_merge_options m = {(uint32_t)o.summary_block, TSCHUNK_MERGE_BY_NAME,
                                       o.samples_per_chunk_set ? (uint32_t)o.samples_per_chunk : 0, o.codec};
    if (!rc) rc = segment_merge(out, paths, data, sizes, n, &m);
    for (size_t k = 0; k < n; k++) tscf_close(&readers[k]);
    free(readers);
    free(paths);
    free(data);
    free(sizes);
    free(ids);
    return wrong_line ? 2 : rc;
}

static int run_command(int argc, char **argv)
{
    const char *cmd = argv[1];
    if (!strcmp(cmd, "version") || !strcmp(cmd, "--version")) {
        printf("tschunk %s\n", tschunk_version_string());
        return 0;
    }
    if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
        usage_to(stdout);
        return 0;
    }
    if (!strcmp(cmd, "sketch")) return cmd_sketch(argc - 2, argv + 2);
    if (!strcmp(cmd, "merge")) return cmd_merge(argc - 2, argv + 2);
    options o;
    if (parse_options(argc - 2, argv + 2, &o)) return 2;
    if (o.series && strcmp(cmd, "cat") != 0 && strcmp(cmd, "quantiles") != 0 && strcmp(cmd, "delete") != 0) {
        fail("unexpected argument '%s'", o.series);
        return 2;
    }
    if (options_not_taken(cmd, o.given) || options_without_partner(cmd, &o)) return 2;
    if (o.out && strcmp(o.out, "-") && !(o.out = writable_path(o.out))) return 1;
    int converts = !strcmp(cmd, "compress") || !strcmp(cmd, "decompress") || !strcmp(cmd, "export-prom") ||
                   !strcmp(cmd, "import-prom");
    if (converts && output_is_input(&o)) return fail("-o %s is the input file: write the output elsewhere", o.out);
    if (!strcmp(cmd, "compress")) return cmd_compress(&o);
    if (!strcmp(cmd, "decompress")) return cmd_decompress(&o);
    if (!strcmp(cmd, "stats")) return cmd_stats(&o);
    if (!strcmp(cmd, "verify")) return cmd_verify(&o);
    if (!strcmp(cmd, "ls")) return cmd_ls(&o);
    if (!strcmp(cmd, "cat")) return cmd_cat(&o);
    if (!strcmp(cmd, "export-prom")) return cmd_export_prom(&o);
    if (!strcmp(cmd, "import-prom")) return cmd_import_prom(&o);
    if (!strcmp(cmd, "delete")) return cmd_delete(&o);
    if (!strcmp(cmd, "compact")) return cmd_compact(&o);
    if (!strcmp(cmd, "quantiles")) return cmd_quantiles(&o);
    fprintf(stderr, "tschunk: unknown command '%s'\n", cmd);
    return usage();
}

int main(int argc, char **argv)
{
    if (argc < 2) return usage();
    remove_on_signals(); /* an interrupted run leaves no temporary file */
    int rc = run_command(argc, argv);
    /* What went to stdout (a listing, a sketch, quantiles) was written only if the last flush succeeds: a full
     * disk or a closed device must not end in success with the output lost. */
    int flushed = fflush(stdout) == 0, failed = errno;
    if ((!flushed || ferror(stdout)) && rc == 0)
        rc = fail("write error on standard output%s%s", flushed ? "" : ": ", flushed ? "" : strerror(failed));
    return rc;
}
