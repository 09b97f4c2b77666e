/*
 * tschunk: command-line front end.
 *
 *   tschunk compress IN.csv -o OUT [--samples-per-chunk N] [--max-chunk-bytes B]
 *                    [--ts-unit s|ms|us|ns] [--codec gorilla] [--verify]
 *   tschunk decompress IN -o OUT.csv [--iso] [--bits]
 *   tschunk stats IN [--json]
 *   tschunk export-prom IN.csv -o OUT [--samples-per-chunk N]
 *   tschunk import-prom IN -o OUT
 * Every command that reads a chunk file reads native files and Prometheus
 * XOR files (export-prom's length-prefixed records) alike.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "csv.h"
#include "file.h"
#include "sketch_cmd.h"
#include "tschunk.h"

#define DEFAULT_SAMPLES_PER_CHUNK 1024

/* Bytes of v as a LEB128 uvarint. */
static unsigned uvarint_size(uint64_t v)
{
    unsigned n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int usage(void)
{
    fputs("usage:\n"
          "  tschunk compress IN.csv -o OUT [--samples-per-chunk N] [--max-chunk-bytes B]\n"
          "                   [--ts-unit s|ms|us|ns] [--codec gorilla] [--verify]\n"
          "  tschunk decompress IN -o OUT.csv [--iso] [--bits]\n"
          "  tschunk stats IN [--json]\n"
          "  tschunk ls FILE            (series, id, chunks, samples, time range, bytes; tab-separated)\n"
          "  tschunk cat SEGMENT SERIES [--from T --to T] [--bits]   (bounds inclusive)\n"
          "  tschunk verify FILE        (a chunk file or a segment: every checksum, structure and chunk)\n"
          "  tschunk export-prom IN.csv -o OUT [--samples-per-chunk N]   (Prometheus XOR chunks)\n"
          "  tschunk import-prom IN -o OUT                               (Prometheus XOR -> native)\n"
          "  tschunk sketch encode [--mapping logarithmic|cubic] [--alpha A] [--store dense|sparse]\n"
          "                        [--exact-stats] [--omit-mapping]  < values   (DDSketch, hex out)\n"
          "  tschunk sketch decode HEX [--q 0.5,0.99] [--json]\n"
          "  tschunk quantiles FILE [SERIES|--all] [--q 0.5,0.9,0.99] [--from T --to T] [--exact]\n"
          "                   (SERIES or --all for a segment)\n"
          "  (compress --summary [--mapping cubic|logarithmic] [--alpha A] keeps a DDSketch per chunk)\n"
          "  tschunk version\n"
          "IN.csv: 'timestamp,value' or 'value' lines, header optional; '-' reads stdin.\n",
          stderr);
    return 2;
}

__attribute__((format(printf, 1, 2))) static int fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "tschunk: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return 1;
}

/* ---- options ------------------------------------------------------------ */
typedef struct {
    const char *in, *out;
    const char *series; /* cat: the second positional argument */
    long samples_per_chunk;
    int samples_per_chunk_set;
    long max_chunk_bytes;
    int unit;
    int json, iso, bits, verify;
    int summary, exact, all;
    tschunk_mapping_kind mapping;
    double alpha;
    const char *qlist;
    int64_t from, to;
} options;

static int parse_long(const char *s, long min, long max, long *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (!*s || *end || v < min || v > max) return -1;
    *out = v;
    return 0;
}

static int parse_options(int argc, char **argv, options *o)
{
    memset(o, 0, sizeof(*o));
    o->samples_per_chunk = DEFAULT_SAMPLES_PER_CHUNK;
    o->unit = UNIT_MS;
    o->mapping = TSCHUNK_MAPPING_CUBIC;
    o->alpha = 0.01;
    o->qlist = "0.5,0.9,0.99";
    o->from = INT64_MIN;
    o->to = INT64_MAX;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-o") && next) { o->out = next; i++; }
        else if (!strcmp(a, "--json")) o->json = 1;
        else if (!strcmp(a, "--iso")) o->iso = 1;
        else if (!strcmp(a, "--bits")) o->bits = 1;
        else if (!strcmp(a, "--verify")) o->verify = 1;
        else if (!strcmp(a, "--summary")) o->summary = 1;
        else if (!strcmp(a, "--exact")) o->exact = 1;
        else if (!strcmp(a, "--all")) o->all = 1;
        else if (!strcmp(a, "--q") && next) { o->qlist = next; i++; }
        else if ((!strcmp(a, "--from") || !strcmp(a, "--to")) && next) {
            char *end;
            long long t = strtoll(next, &end, 10);
            if (!*next || *end) return fail("%s takes an integer timestamp in the file's unit, not '%s'", a, next);
            if (a[2] == 'f') o->from = t; else o->to = t;
            i++;
        } else if (!strcmp(a, "--mapping") && next) {
            if (!strcmp(next, "cubic")) o->mapping = TSCHUNK_MAPPING_CUBIC;
            else if (!strcmp(next, "logarithmic")) o->mapping = TSCHUNK_MAPPING_LOGARITHMIC;
            else return fail("--mapping takes cubic or logarithmic, not '%s'", next);
            i++;
        } else if (!strcmp(a, "--alpha") && next) {
            char *end;
            o->alpha = strtod(next, &end);
            if (*end || !(o->alpha > 0 && o->alpha < 1)) return fail("--alpha must be in (0, 1), not '%s'", next);
            i++;
        }
        else if (!strcmp(a, "--samples-per-chunk") && next) {
            if (parse_long(next, 1, TSCHUNK_MAX_SAMPLES, &o->samples_per_chunk))
                return fail("--samples-per-chunk must be 1..65535, not '%s'", next);
            o->samples_per_chunk_set = 1;
            i++;
        } else if (!strcmp(a, "--max-chunk-bytes") && next) {
            if (parse_long(next, 32, 1L << 30, &o->max_chunk_bytes))
                return fail("--max-chunk-bytes must be 32..2^30, not '%s'", next);
            i++;
        } else if (!strcmp(a, "--ts-unit") && next) {
            if ((o->unit = unit_parse(next)) < 0) return fail("--ts-unit takes s, ms, us or ns, not '%s'", next);
            i++;
        } else if (!strcmp(a, "--codec") && next) {
            if (strcmp(next, "gorilla") != 0) return fail("unknown codec '%s' (known: gorilla)", next);
            i++;
        } else if (a[0] == '-' && a[1] && !o->in) {
            return fail("unknown option '%s'", a);
        } else if (!o->in) o->in = a;
        else if (!o->series) o->series = a;
        else return fail("unexpected argument '%s'", a);
    }
    if (!o->in) return fail("missing input file");
    return 0;
}

/* ---- samples in memory ---------------------------------------------------- */
typedef struct {
    int64_t *ts;
    uint64_t *bits;
    size_t n, cap;
} sample_set;

static int samples_push(sample_set *s, int64_t ts, uint64_t bits)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 1 << 16;
        int64_t *t = realloc(s->ts, cap * sizeof *t);
        if (t) s->ts = t;
        uint64_t *b = realloc(s->bits, cap * sizeof *b);
        if (b) s->bits = b;
        if (!t || !b) return -1;
        s->cap = cap;
    }
    s->ts[s->n] = ts;
    s->bits[s->n++] = bits;
    return 0;
}

static void samples_free(sample_set *s)
{
    free(s->ts);
    free(s->bits);
}

static int read_csv(const options *o, sample_set *s, size_t *skipped)
{
    FILE *in = strcmp(o->in, "-") ? fopen(o->in, "r") : stdin;
    if (!in) return fail("cannot open %s", o->in);
    csv_reader r;
    csv_init(&r, in, o->unit);
    int tty = isatty(2);
    double start = now_s(), last_report = start;
    int64_t ts;
    uint64_t bits;
    int got;
    while ((got = csv_next(&r, &ts, &bits)) == 1) {
        if (samples_push(s, ts, bits)) return fail("out of memory after %zu samples", s->n);
        if (tty && (s->n & 0xffff) == 0 && now_s() - last_report > 1.0 && now_s() - start > 2.0) {
            fprintf(stderr, "\rreading %s: %zu samples", o->in, s->n);
            last_report = now_s();
        }
    }
    if (tty && last_report > start) fputc('\n', stderr);
    if (in != stdin) fclose(in);
    if (got < 0) return fail("%s: %s", o->in, r.error);
    *skipped = r.skipped;
    return 0;
}

/* ---- encoding in either format ---------------------------------------------- */
typedef struct {
    int format;
    tschunk_encoder native;
    tschunk_prom_encoder prom;
} any_encoder;

static size_t any_init(any_encoder *e, int format, void *buf, size_t cap, uint32_t per_chunk, uint32_t max_bytes)
{
    e->format = format;
    tschunk_encoder_options o = {format == FORMAT_NATIVE ? TSCHUNK_CODEC_GORILLA : 0, per_chunk, max_bytes, 0};
    return format == FORMAT_NATIVE ? tschunk_encoder_init(&e->native, buf, cap, &o)
                                   : tschunk_prom_encoder_init(&e->prom, buf, cap, &o);
}

static size_t any_append(any_encoder *e, int64_t ts, uint64_t bits)
{
    return e->format == FORMAT_NATIVE ? tschunk_append_bits(&e->native, ts, bits)
                                      : tschunk_prom_append_bits(&e->prom, ts, bits);
}

static size_t any_finish(any_encoder *e)
{
    return e->format == FORMAT_NATIVE ? tschunk_encoder_finish(&e->native) : tschunk_prom_encoder_finish(&e->prom);
}

static size_t any_count(const any_encoder *e)
{
    return e->format == FORMAT_NATIVE ? tschunk_encoder_count(&e->native) : e->prom.count;
}

static size_t bound_for(int format, size_t n) { return format == FORMAT_NATIVE ? TSCHUNK_BOUND(n) : TSCHUNK_PROM_BOUND(n); }

/*
 * Cut samples [0, n) into chunks of the file's format: a chunk ends when full
 * or where time goes backwards (nothing dropped, nothing reordered).
 * Calls emit for each chunk. @return 0 or 1 after printing the problem.
 */
typedef int (*chunk_sink)(void *ctx, const unsigned char *chunk, size_t size, uint32_t samples,
                          const unsigned char *summary, size_t summary_size);

/* summary: the sketch that summarizes each native chunk, or NULL for none. */
static int encode_chunks(int format, const int64_t *ts, const uint64_t *bits, size_t n, uint32_t per_chunk,
                         uint32_t max_bytes, tschunk_sketch *summary, chunk_sink emit, void *ctx, double *encode_s)
{
    size_t cap = bound_for(format, per_chunk);
    size_t scap = 0;
    unsigned char *buf = malloc(cap), *sbuf = NULL;
    if (!buf) return fail("out of memory");
    any_encoder enc;
    size_t i = 0;
    int rc = 0;
    while (i < n && rc == 0) {
        double t0 = now_s();
        any_init(&enc, format, buf, cap, per_chunk, max_bytes);
        if (summary) tschunk_encoder_set_summary(&enc.native, summary);
        size_t start = i;
        while (i < n && (i == start || ts[i] >= ts[i - 1]) && any_append(&enc, ts[i], bits[i]) == 0) i++;
        size_t size = any_finish(&enc), ssize = 0;
        if (summary) {
            size_t need = tschunk_encoder_summary_bound(&enc.native);
            if (need > scap) {
                unsigned char *grown = realloc(sbuf, need);
                if (!grown) { free(buf); free(sbuf); return fail("out of memory"); }
                sbuf = grown;
                scap = need;
            }
            ssize = tschunk_encoder_write_summary(&enc.native, sbuf, scap);
        }
        if (encode_s) *encode_s += now_s() - t0;
        if (i == start) rc = fail("sample %zu cannot be stored: --max-chunk-bytes too small", i);
        else if (summary && tschunk_is_error(ssize)) rc = fail("summary: %s", tschunk_error_name(ssize));
        else rc = emit(ctx, buf, size, (uint32_t)any_count(&enc), sbuf, ssize);
    }
    free(buf);
    free(sbuf);
    return rc;
}

static int write_record(void *ctx, const unsigned char *chunk, size_t size, uint32_t samples,
                        const unsigned char *summary, size_t summary_size)
{
    tscf_writer *w = ctx;
    if (tscf_write_chunk(w, chunk, size, samples) || (summary && tscf_write_summary(w, summary, summary_size)))
        return fail("write error on %s", w->tmp_path);
    return 0;
}

static int verify_file(const char *path, const sample_set *s);

/* compress and export-prom: CSV in, chunk file out, atomically. */
static int csv_to_chunks(const options *o, int format, long per_chunk)
{
    if (!o->out) return fail("this command needs -o OUT");
    sample_set s = {0};
    size_t skipped = 0;
    if (read_csv(o, &s, &skipped)) { samples_free(&s); return 1; }
    tscf_writer w;
    int summaries = o->summary && format == FORMAT_NATIVE;
    tschunk_sketch *summary = NULL;
    if (summaries) {
        tschunk_sketch_options so = {o->mapping, o->alpha, 0, 0, {NULL, NULL, NULL}};
        if (tschunk_sketch_create(&summary, &so)) { samples_free(&s); return fail("cannot create the summary sketch"); }
    }
    if (tscf_create(&w, o->out, format == FORMAT_PROM ? UNIT_MS : o->unit, format, summaries)) {
        samples_free(&s);
        tschunk_sketch_free(summary);
        return fail("cannot create %s", o->out);
    }
    double encode_s = 0;
    if (encode_chunks(format, s.ts, s.bits, s.n, (uint32_t)per_chunk, (uint32_t)o->max_chunk_bytes, summary,
                      write_record, &w, &encode_s) || tscf_commit(&w)) {
        tscf_abort(&w);
        samples_free(&s);
        tschunk_sketch_free(summary);
        return fail("%s not written", o->out);
    }
    tschunk_sketch_free(summary);
    printf("%s -> %s: %zu samples (%zu empty values skipped), %llu %schunks, %llu bytes", o->in, o->out, s.n,
           skipped, (unsigned long long)w.chunks, format == FORMAT_PROM ? "Prometheus XOR " : "",
           (unsigned long long)w.bytes);
    if (summaries) printf(" (summaries %llu of them)", (unsigned long long)w.summary_bytes);
    printf("\n");
    if (s.n)
        printf("  %.3f bytes/sample (%.2f bits), %.1fx smaller than 16-byte raw samples, encode %.2f ns/sample\n",
               (double)w.bytes / (double)s.n, (double)w.bytes * 8 / (double)s.n,
               16.0 * (double)s.n / (double)w.bytes, encode_s * 1e9 / (double)s.n);
    int rc = o->verify ? verify_file(o->out, &s) : 0;
    samples_free(&s);
    return rc;
}

static int cmd_compress(const options *o) { return csv_to_chunks(o, FORMAT_NATIVE, o->samples_per_chunk); }

static int cmd_export_prom(const options *o)
{
    return csv_to_chunks(o, FORMAT_PROM, o->samples_per_chunk_set ? o->samples_per_chunk : 120);
}

/* ---- reading files -------------------------------------------------------- */
static int64_t chunk_ts[TSCHUNK_MAX_SAMPLES];
static double chunk_values[TSCHUNK_MAX_SAMPLES];

static size_t decode_any(int format, const unsigned char *chunk, size_t size)
{
    return format == FORMAT_NATIVE ? tschunk_decode(chunk, size, chunk_ts, chunk_values, TSCHUNK_MAX_SAMPLES)
                                   : tschunk_prom_decode(chunk, size, chunk_ts, chunk_values, TSCHUNK_MAX_SAMPLES);
}

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
            return fail("%s: damaged chunk %llu: %s", path, (unsigned long long)r.chunks_seen - 1,
                        tschunk_error_name(n));
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
typedef struct {
    FILE *out;
    int unit, iso, bits;
} text_ctx;

static int print_sample(void *ctx, int64_t ts, uint64_t bits)
{
    text_ctx *t = ctx;
    char tbuf[64], vbuf[64];
    if (t->iso) format_iso(tbuf, sizeof tbuf, ts, t->unit);
    else snprintf(tbuf, sizeof tbuf, "%lld", (long long)ts);
    if (t->bits) snprintf(vbuf, sizeof vbuf, "0x%016llx", (unsigned long long)bits);
    else format_value(vbuf, sizeof vbuf, bits);
    return fprintf(t->out, "%s,%s\n", tbuf, vbuf) < 0;
}

static int cmd_decompress(const options *o)
{
    if (!o->out) return fail("decompress needs -o OUT.csv (or -o -)");
    int to_stdout = !strcmp(o->out, "-");
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", o->out, (long)getpid());
    text_ctx t = {to_stdout ? stdout : fopen(tmp, "w"), 0, o->iso, o->bits};
    if (!t.out) return fail("cannot create %s", tmp);
    tscf_reader probe;
    int rc = tscf_open(&probe, o->in);
    if (rc == 0) t.unit = probe.unit;
    tscf_close(&probe);
    fprintf(t.out, "timestamp,value\n");
    rc = for_each_sample(o->in, NULL, print_sample, &t);
    if (to_stdout) return rc;
    if (fclose(t.out) != 0) rc = 1;
    if (rc == 0 && rename(tmp, o->out) != 0) rc = fail("cannot rename %s to %s", tmp, o->out);
    if (rc) remove(tmp);
    return rc;
}

/* ---- stats ---------------------------------------------------------------- */
typedef struct {
    uint64_t samples, chunks, bytes, ts_bits, value_bits;
    uint64_t native_bytes, prom_bytes; /* the same samples, chunk for chunk, in each format */
    uint64_t native_chunks;
    uint64_t summary_bytes; /* summary blobs, included in bytes */
    double decode_ns;
    int format;
} stats;

static uint64_t chunk_bits[TSCHUNK_MAX_SAMPLES];

static double time_decode(tscf_reader *r, uint64_t samples)
{
    double best = 0;
    for (int rep = 0; rep < 5 && samples; rep++) {
        tscf_rewind(r);
        const unsigned char *chunk;
        size_t size;
        double t0 = now_s();
        while (tscf_next(r, &chunk, &size) == 1) decode_any(r->format, chunk, size);
        double ns = (now_s() - t0) * 1e9 / (double)samples;
        if (rep == 0 || ns < best) best = ns;
    }
    return best;
}

/* Bits a Prometheus XOR chunk spends on timestamps: varint t0, uvarint first delta, dods. */
static uint64_t prom_ts_bits(const int64_t *ts, size_t n)
{
    uint64_t bits = 0, prev_delta = 0;
    for (size_t i = 0; i < n; i++) {
        if (i == 0) { bits += 8 * uvarint_size(((uint64_t)ts[0] << 1) ^ (uint64_t)(ts[0] >> 63)); continue; }
        uint64_t delta = (uint64_t)ts[i] - (uint64_t)ts[i - 1];
        if (i == 1) bits += 8 * uvarint_size(delta);
        else {
            int64_t dod = (int64_t)(delta - prev_delta);
            bits += dod == 0 ? 1 : (dod >= -8191 && dod <= 8192) ? 16 : (dod >= -65535 && dod <= 65536) ? 20
                  : (dod >= -524287 && dod <= 524288) ? 24 : 68;
        }
        prev_delta = delta;
    }
    return bits;
}

typedef struct {
    uint64_t bytes, chunks;
} byte_count;

/* Sink that sizes a chunk file record without writing it. */
static int count_bytes(void *ctx, const unsigned char *chunk, size_t size, uint32_t samples,
                       const unsigned char *summary, size_t summary_size)
{
    (void)chunk;
    (void)samples;
    (void)summary;
    (void)summary_size;
    byte_count *c = ctx;
    c->bytes += uvarint_size(size) + size;
    c->chunks++;
    return 0;
}

static int chunk_stats(stats *st, int format, const unsigned char *chunk, size_t size, size_t n)
{
    for (size_t i = 0; i < n; i++) memcpy(&chunk_bits[i], &chunk_values[i], 8);
    uint32_t whole = n ? (uint32_t)n : 1;
    if (format == FORMAT_NATIVE) {
        tschunk_chunk_info info;
        tschunk_chunk_info_get(chunk, size, &info);
        st->ts_bits += (uint64_t)(info.ts_header_bytes + info.ts_bytes) * 8;
        st->value_bits += (uint64_t)(n ? 8 + info.value_bytes : 0) * 8;
        byte_count c = {0, 0};
        int rc = encode_chunks(FORMAT_PROM, chunk_ts, chunk_bits, n, whole, 0, NULL, count_bytes, &c, NULL);
        st->prom_bytes += c.bytes;
        return rc;
    }
    uint64_t tsb = prom_ts_bits(chunk_ts, n);
    st->ts_bits += tsb;
    st->value_bits += (uint64_t)(size - 2) * 8 - tsb;
    byte_count c = {0, 0};
    int rc = encode_chunks(FORMAT_NATIVE, chunk_ts, chunk_bits, n, whole, 0, NULL, count_bytes, &c, NULL);
    st->native_bytes += c.bytes;
    st->native_chunks += c.chunks;
    return rc;
}

static int collect_stats(const char *path, stats *st)
{
    memset(st, 0, sizeof(*st));
    tscf_reader r;
    if (tscf_open(&r, path)) { tscf_close(&r); return fail("%s", r.error); }
    st->format = r.format;
    const unsigned char *chunk;
    size_t size;
    int got;
    while ((got = tscf_next(&r, &chunk, &size)) == 1) {
        size_t n = decode_any(r.format, chunk, size);
        if (tschunk_is_error(n)) { tscf_close(&r); return fail("%s: damaged chunk: %s", path, tschunk_error_name(n)); }
        st->chunks++;
        st->samples += n;
        if (r.summary) st->summary_bytes += uvarint_size(r.summary_size) + r.summary_size;
        if (chunk_stats(st, r.format, chunk, size, n)) { tscf_close(&r); return 1; }
    }
    if (got < 0) { tscf_close(&r); return fail("%s: %s", path, r.error); }
    st->bytes = r.size;
    if (r.format == FORMAT_NATIVE) st->native_bytes = r.size - st->summary_bytes; /* encodings compared without summaries */
    else /* plus the TSCF header and end record */
        st->prom_bytes = r.size, st->native_bytes += 8 + 1 + uvarint_size(st->samples) + uvarint_size(st->native_chunks);
    st->decode_ns = time_decode(&r, st->samples);
    tscf_close(&r);
    return 0;
}

/* What a scan of a chunk file (native or Prometheus) found, every chunk decoded. */
typedef struct {
    uint64_t chunks, samples, bytes;
    int64_t first, last;
} file_scan;

/* @return 0, or 1 after naming the damaged chunk. Closes r. */
static int scan_chunk_file(const char *path, tscf_reader *r, file_scan *scan)
{
    *scan = (file_scan){0, 0, 0, INT64_MAX, INT64_MIN};
    const unsigned char *chunk;
    size_t size;
    int got;
    while ((got = tscf_next(r, &chunk, &size)) == 1) {
        size_t n = decode_any(r->format, chunk, size);
        if (tschunk_is_error(n)) {
            tscf_close(r);
            return fail("%s: chunk %llu is damaged: %s", path, (unsigned long long)scan->chunks, tschunk_error_name(n));
        }
        if (n && chunk_ts[0] < scan->first) scan->first = chunk_ts[0];
        if (n && chunk_ts[n - 1] > scan->last) scan->last = chunk_ts[n - 1];
        scan->chunks++;
        scan->samples += n;
        scan->bytes += size;
    }
    if (got < 0) { tscf_close(r); return fail("%s: %s", path, r->error); }
    tscf_close(r);
    return 0;
}

/* Segments: every checksum and structure (tschunk_segment_verify), then every chunk decoded. */
static int verify_segment(const char *path, const unsigned char *data, size_t size)
{
    size_t bad = 0, err = tschunk_segment_verify(data, size, &bad);
    if (err) return fail("%s: broken segment: %s at byte %zu", path, tschunk_error_name(err), bad);
    tschunk_segment *seg;
    if ((err = tschunk_segment_open(&seg, data, size, TSCHUNK_SEGMENT_VERIFY, NULL)))
        return fail("%s: broken segment: %s", path, tschunk_error_name(err));
    tschunk_segment_info info;
    tschunk_segment_get_info(seg, &info);
    for (uint32_t i = 0; i < info.chunks; i++) {
        tschunk_segment_chunk_info c;
        size_t n = tschunk_segment_chunk(seg, i, &c);
        if (!n) n = decode_any(FORMAT_NATIVE, c.ref.chunk, c.ref.chunk_size);
        if (tschunk_is_error(n) || (size_t)c.count != n) {
            tschunk_segment_close(seg);
            return fail("%s: chunk %u is damaged: %s", path, i, tschunk_is_error(n) ? tschunk_error_name(n) : "count mismatch");
        }
    }
    printf("%s: ok (segment v1, %u series, %u chunks, %llu samples)\n", path, info.series, info.chunks,
           (unsigned long long)info.samples);
    tschunk_segment_close(seg);
    return 0;
}

/* Exit 0 only when every checksum, structure and chunk of the file holds; otherwise name what is broken. */
static int cmd_verify(const options *o)
{
    tscf_reader r;
    if (tscf_open(&r, o->in)) { tscf_close(&r); return fail("%s", r.error); }
    if (r.size >= 4 && !memcmp(r.data, "TSEG", 4)) {
        int rc = verify_segment(o->in, r.data, r.size);
        tscf_close(&r);
        return rc;
    }
    int format = r.format;
    file_scan scan;
    if (scan_chunk_file(o->in, &r, &scan)) return 1;
    printf("%s: ok (%s, %llu chunks, %llu samples)\n", o->in, format == FORMAT_NATIVE ? "tschunk file v1" : "Prometheus XOR chunks",
           (unsigned long long)scan.chunks, (unsigned long long)scan.samples);
    return 0;
}

/* One line per series of a segment: name, id, chunks, samples, time range, chunk bytes (summaries apart). */
static int list_segment(const char *path, const unsigned char *data, size_t size)
{
    tschunk_segment *seg;
    size_t err = tschunk_segment_open(&seg, data, size, 0, NULL);
    if (err) return fail("%s: broken segment: %s", path, tschunk_error_name(err));
    tschunk_segment_info info;
    tschunk_segment_get_info(seg, &info);
    printf("series\tid\tchunks\tsamples\tfirst_ts\tlast_ts\tbytes\n");
    for (uint32_t o = 0; o < info.series; o++) {
        uint64_t id;
        const char *name;
        size_t name_len, begin, end;
        tschunk_segment_series(seg, o, &id, &name, &name_len);
        tschunk_segment_range(seg, o, INT64_MIN, INT64_MAX, &begin, &end);
        uint64_t samples = 0, bytes = 0;
        int64_t first = INT64_MAX, last = INT64_MIN;
        for (size_t i = begin; i < end; i++) {
            tschunk_segment_chunk_info c;
            if ((err = tschunk_segment_chunk(seg, i, &c))) {
                tschunk_segment_close(seg);
                return fail("%s: chunk %zu is damaged: %s", path, i, tschunk_error_name(err));
            }
            samples += c.count;
            bytes += c.ref.chunk_size + c.ref.summary_size;
            if (c.first_ts < first) first = c.first_ts;
            if (c.last_ts > last) last = c.last_ts;
        }
        printf("%.*s\t%llu\t%zu\t%llu\t%lld\t%lld\t%llu\n", (int)name_len, name, (unsigned long long)id, end - begin,
               (unsigned long long)samples, (long long)first, (long long)last, (unsigned long long)bytes);
    }
    tschunk_segment_close(seg);
    return 0;
}

/* Series of a segment; a chunk file holds one series, listed under the file's name. */
static int cmd_ls(const options *o)
{
    tscf_reader r;
    if (tscf_open(&r, o->in)) { tscf_close(&r); return fail("%s", r.error); }
    if (r.size >= 4 && !memcmp(r.data, "TSEG", 4)) {
        int rc = list_segment(o->in, r.data, r.size);
        tscf_close(&r);
        return rc;
    }
    file_scan scan;
    if (scan_chunk_file(o->in, &r, &scan)) return 1;
    printf("series\tid\tchunks\tsamples\tfirst_ts\tlast_ts\tbytes\n%s\t0\t%llu\t%llu\t%lld\t%lld\t%llu\n", o->in,
           (unsigned long long)scan.chunks, (unsigned long long)scan.samples, (long long)scan.first, (long long)scan.last,
           (unsigned long long)scan.bytes);
    return 0;
}

/* A series named on the command line: by name, else by numeric id. @return its ordinal or an error. */
static size_t find_series_arg(const tschunk_segment *seg, const char *arg)
{
    size_t ordinal = tschunk_segment_find_series_name(seg, arg, strlen(arg));
    char *end;
    unsigned long long id = strtoull(arg, &end, 10);
    if (tschunk_is_error(ordinal) && *arg && !*end) ordinal = tschunk_segment_find_series(seg, id);
    return ordinal;
}

/* The samples of one series of a segment in [from, to] (inclusive), as `timestamp,value` lines. */
static int cmd_cat(const options *o)
{
    if (!o->series) return fail("cat needs FILE SERIES (a series name, or its numeric id)");
    tscf_reader r;
    if (tscf_open(&r, o->in)) { tscf_close(&r); return fail("%s", r.error); }
    if (r.size < 4 || memcmp(r.data, "TSEG", 4)) { tscf_close(&r); return fail("%s: cat reads segments; use decompress", o->in); }
    tschunk_segment *seg;
    size_t err = tschunk_segment_open(&seg, r.data, r.size, 0, NULL);
    if (err) { tscf_close(&r); return fail("%s: broken segment: %s", o->in, tschunk_error_name(err)); }
    size_t ordinal = find_series_arg(seg, o->series);
    size_t begin = 0, stop = 0;
    int rc = tschunk_is_error(ordinal) ? fail("%s: no series '%s'", o->in, o->series) : 0;
    if (!rc) tschunk_segment_range(seg, (uint32_t)ordinal, o->from, o->to, &begin, &stop);
    text_ctx t = {stdout, 0, 0, o->bits};
    if (!rc) printf("timestamp,value\n");
    for (size_t i = begin; !rc && i < stop; i++) {
        tschunk_segment_chunk_info c;
        size_t n = tschunk_segment_chunk(seg, i, &c);
        if (!n) n = decode_any(FORMAT_NATIVE, c.ref.chunk, c.ref.chunk_size);
        if (tschunk_is_error(n)) { rc = fail("%s: chunk %zu is damaged: %s", o->in, i, tschunk_error_name(n)); break; }
        for (size_t k = 0; k < n && !rc; k++) {
            uint64_t bits;
            memcpy(&bits, &chunk_values[k], 8);
            if (chunk_ts[k] >= o->from && chunk_ts[k] <= o->to) rc = print_sample(&t, chunk_ts[k], bits);
        }
    }
    tschunk_segment_close(seg);
    tscf_close(&r);
    return rc;
}

static int cmd_stats(const options *o)
{
    stats st;
    if (collect_stats(o->in, &st)) return 1;
    double n = st.samples ? (double)st.samples : 1;
    double bps = (double)st.bytes * 8 / n, bpt = (double)st.ts_bits / n, bpv = (double)st.value_bits / n;
    double ratio = st.bytes ? 16.0 * (double)st.samples / (double)st.bytes : 0;
    const char *fmt = st.format == FORMAT_NATIVE ? "gorilla" : "prometheus-xor";
    if (o->json) {
        printf("{\"file\": \"%s\", \"codec\": \"%s\", \"samples\": %llu, \"chunks\": %llu, \"bytes\": %llu, "
               "\"bits_per_sample\": %.4f, \"bits_per_timestamp\": %.4f, \"bits_per_value\": %.4f, "
               "\"ratio\": %.4f, \"decode_ns_per_sample\": %.3f, \"native_bytes\": %llu, "
               "\"prom_xor_bytes\": %llu, \"summary_bytes\": %llu}\n",
               o->in, fmt, (unsigned long long)st.samples, (unsigned long long)st.chunks,
               (unsigned long long)st.bytes, bps, bpt, bpv, ratio, st.decode_ns,
               (unsigned long long)st.native_bytes, (unsigned long long)st.prom_bytes,
               (unsigned long long)st.summary_bytes);
        return 0;
    }
    printf("file             %s\n", o->in);
    printf("codec            %s\n", st.format == FORMAT_NATIVE ? "gorilla (tschunk chunk format v1)"
                                                                : "Prometheus XOR chunks (length-prefixed)");
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
    return 0;
}

/* ---- quantiles -------------------------------------------------------------- */
static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Every finite value with from <= ts <= to, decoded, for --exact. */
static double *exact_values(const tschunk_chunk_ref *refs, size_t n, const options *o, size_t *count)
{
    size_t cap = 1 << 16, k = 0;
    double *v = malloc(cap * sizeof *v);
    for (size_t i = 0; v && i < n; i++) {
        tschunk_iter it;
        if (tschunk_iter_init(&it, refs[i].chunk, refs[i].chunk_size)) continue;
        int64_t ts;
        double x;
        while (tschunk_iter_next(&it, &ts, &x) == 1) {
            if (ts < o->from || ts > o->to || !isfinite(x)) continue;
            if (k == cap) {
                double *grown = realloc(v, (cap *= 2) * sizeof *v);
                if (!grown) { free(v); return NULL; }
                v = grown;
            }
            v[k++] = x;
        }
    }
    if (v) qsort(v, k, sizeof *v, cmp_dbl);
    *count = k;
    return v;
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
    tschunk_sketch_options so = {o->mapping, o->alpha, 0, 0, {NULL, NULL, NULL}};
    return tschunk_sketch_create(&acc, &so) == 0 ? acc : NULL;
}

static void print_range(const options *o, const tschunk_range_stats *st, double us, const tschunk_sketch_stats *ss)
{
    static const char *const names[] = {"logarithmic", "linear", "quadratic", "cubic", "quartic"};
    printf("file        %s\n", o->in);
    if (o->from == INT64_MIN && o->to == INT64_MAX) printf("range       all samples\n");
    else printf("range       %lld .. %lld (inclusive, the file's timestamp unit)\n", (long long)o->from, (long long)o->to);
    printf("samples     %.0f in range (+ %llu NaN, %llu infinite: not in the sketch)\n", ss->count,
           (unsigned long long)st->nan_count, (unsigned long long)st->inf_count);
    printf("chunks      %llu from summaries, %llu decoded (%llu samples), %llu outside: %.1f us\n",
           (unsigned long long)st->chunks_from_summaries, (unsigned long long)st->chunks_decoded,
           (unsigned long long)st->samples_decoded, (unsigned long long)st->chunks_skipped, us);
    printf("sketch      DDSketch %s, relative accuracy %.4g\n", names[ss->mapping], ss->relative_accuracy);
    if (ss->count > 0) printf("min/max/sum %.17g / %.17g / %.17g\n", ss->min, ss->max, ss->sum);
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

/* The chunks of one series of a segment, or of every series with --all, in place in data. */
static int segment_refs(const options *o, const unsigned char *data, size_t size, tschunk_chunk_ref **out, size_t *count)
{
    if (!o->series == !o->all) return fail("%s: quantiles of a segment takes SERIES or --all", o->in);
    tschunk_segment *seg;
    size_t err = tschunk_segment_open(&seg, data, size, 0, NULL);
    if (err) return fail("%s: broken segment: %s", o->in, tschunk_error_name(err));
    tschunk_segment_info info;
    tschunk_segment_get_info(seg, &info);
    size_t begin = 0, end = info.chunks;
    int rc = 0;
    if (o->series) {
        size_t ordinal = find_series_arg(seg, o->series);
        if (tschunk_is_error(ordinal)) rc = fail("%s: no series '%s'", o->in, o->series);
        else tschunk_segment_range(seg, (uint32_t)ordinal, INT64_MIN, INT64_MAX, &begin, &end);
    }
    tschunk_chunk_ref *refs = rc ? NULL : malloc((end - begin + 1) * sizeof *refs);
    if (!rc && !refs) rc = fail("out of memory");
    size_t n = 0;
    for (size_t i = begin; !rc && i < end; i++) {
        tschunk_segment_chunk_info c;
        if ((err = tschunk_segment_chunk(seg, i, &c))) rc = fail("%s: chunk %zu is damaged: %s", o->in, i, tschunk_error_name(err));
        else refs[n++] = c.ref;
    }
    tschunk_segment_close(seg); /* the refs point into data, not into seg */
    *out = refs;
    *count = n;
    return rc;
}

static int cmd_quantiles(const options *o)
{
    tscf_reader r;
    if (tscf_open(&r, o->in)) { tscf_close(&r); return fail("%s", r.error); }
    size_t n = 0;
    tschunk_chunk_ref *refs = NULL;
    int rc = r.size >= 4 && !memcmp(r.data, "TSEG", 4) ? segment_refs(o, r.data, r.size, &refs, &n)
                                                        : chunk_file_refs(o, &r, &refs, &n);
    if (rc) { free(refs); tscf_close(&r); return rc; }
    tschunk_sketch *acc = range_sketch(refs, n, o);
    if (!acc) rc = fail("out of memory");
    tschunk_range_stats st;
    double t0 = now_s();
    size_t err = rc ? 0 : tschunk_range_merge(acc, refs, n, o->from, o->to, &st);
    double us = (now_s() - t0) * 1e6;
    if (!rc && tschunk_is_error(err)) rc = fail("%s: %s", o->in, tschunk_error_name(err));
    size_t nexact = 0;
    double *exact = !rc && o->exact ? exact_values(refs, n, o, &nexact) : NULL;
    if (!rc) {
        tschunk_sketch_stats ss;
        tschunk_sketch_get_stats(acc, &ss);
        print_range(o, &st, us, &ss);
        printf(o->exact ? "%-8s %-24s %-24s %s\n" : "%-8s %s\n", "q", "value", "exact", "relative error");
        char qbuf[512];
        snprintf(qbuf, sizeof qbuf, "%s", o->qlist);
        for (char *tok = strtok(qbuf, ","); tok; tok = strtok(NULL, ",")) {
            double q = strtod(tok, NULL), v;
            size_t qr = tschunk_sketch_quantile(acc, q, &v);
            if (tschunk_is_error(qr)) { printf("%-8s %s\n", tok, tschunk_error_name(qr)); continue; }
            if (!exact || !nexact) { printf("%-8s %-24.17g\n", tok, v); continue; }
            double e = exact[(size_t)floor(q * (double)(nexact - 1))];
            printf("%-8s %-24.17g %-24.17g %.3g\n", tok, v, e, fpclassify(e) != FP_ZERO ? fabs(v - e) / fabs(e) : fabs(v));
        }
    }
    free(exact);
    free(refs);
    tschunk_sketch_free(acc);
    tscf_close(&r);
    return rc;
}

/* ---- import-prom ---------------------------------------------------------- */
static int cmd_import_prom(const options *o)
{
    if (!o->out) return fail("import-prom needs -o OUT");
    tscf_reader r;
    if (tscf_open(&r, o->in)) { tscf_close(&r); return fail("%s", r.error); }
    if (r.format != FORMAT_PROM) { tscf_close(&r); return fail("%s is a native file already", o->in); }
    tscf_writer w;
    if (tscf_create(&w, o->out, UNIT_MS, FORMAT_NATIVE, 0)) { tscf_close(&r); return fail("cannot create %s", o->out); }
    const unsigned char *chunk;
    size_t size;
    int got, rc = 0;
    /* One native chunk per Prometheus chunk; split only where time goes backwards. */
    while (rc == 0 && (got = tscf_next(&r, &chunk, &size)) == 1) {
        size_t n = tschunk_prom_decode(chunk, size, chunk_ts, chunk_values, TSCHUNK_MAX_SAMPLES);
        if (tschunk_is_error(n)) { rc = fail("%s: damaged chunk: %s", o->in, tschunk_error_name(n)); break; }
        for (size_t i = 0; i < n; i++) memcpy(&chunk_bits[i], &chunk_values[i], 8);
        rc = encode_chunks(FORMAT_NATIVE, chunk_ts, chunk_bits, n, n ? (uint32_t)n : 1, 0, NULL, write_record, &w, NULL);
    }
    if (rc == 0 && got < 0) rc = fail("%s: %s", o->in, r.error);
    tscf_close(&r);
    if (rc || tscf_commit(&w)) {
        tscf_abort(&w);
        return rc ? rc : fail("%s not written", o->out);
    }
    printf("%s -> %s: %llu samples, %llu Prometheus XOR chunks -> %llu native chunks, %zu -> %llu bytes\n", o->in,
           o->out, (unsigned long long)w.samples, (unsigned long long)r.chunks_seen, (unsigned long long)w.chunks,
           r.size, (unsigned long long)w.bytes);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) return usage();
    const char *cmd = argv[1];
    if (!strcmp(cmd, "version") || !strcmp(cmd, "--version")) {
        printf("tschunk %s\n", tschunk_version_string());
        return 0;
    }
    if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
        usage();
        return 0;
    }
    if (!strcmp(cmd, "sketch")) return cmd_sketch(argc - 2, argv + 2);
    options o;
    if (parse_options(argc - 2, argv + 2, &o)) return 2;
    if (o.series && strcmp(cmd, "cat") != 0 && strcmp(cmd, "quantiles") != 0) {
        fail("unexpected argument '%s'", o.series);
        return 2;
    }
    if (!strcmp(cmd, "compress")) return cmd_compress(&o);
    if (!strcmp(cmd, "decompress")) return cmd_decompress(&o);
    if (!strcmp(cmd, "stats")) return cmd_stats(&o);
    if (!strcmp(cmd, "verify")) return cmd_verify(&o);
    if (!strcmp(cmd, "ls")) return cmd_ls(&o);
    if (!strcmp(cmd, "cat")) return cmd_cat(&o);
    if (!strcmp(cmd, "export-prom")) return cmd_export_prom(&o);
    if (!strcmp(cmd, "import-prom")) return cmd_import_prom(&o);
    if (!strcmp(cmd, "quantiles")) return cmd_quantiles(&o);
    fprintf(stderr, "tschunk: unknown command '%s'\n", cmd);
    return usage();
}
