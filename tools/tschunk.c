/*
 * tschunk: command-line front end.
 *
 *   tschunk compress IN.csv -o OUT [--samples-per-chunk N] [--max-chunk-bytes B]
 *                    [--ts-unit s|ms|us|ns] [--codec gorilla] [--verify]
 *   tschunk decompress IN -o OUT.csv [--iso] [--bits]
 *   tschunk stats IN [--json]
 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "csv.h"
#include "file.h"
#include "tschunk.h"

#define DEFAULT_SAMPLES_PER_CHUNK 1024

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
    long samples_per_chunk;
    long max_chunk_bytes;
    int unit;
    int json, iso, bits, verify;
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
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-o") && next) { o->out = next; i++; }
        else if (!strcmp(a, "--json")) o->json = 1;
        else if (!strcmp(a, "--iso")) o->iso = 1;
        else if (!strcmp(a, "--bits")) o->bits = 1;
        else if (!strcmp(a, "--verify")) o->verify = 1;
        else if (!strcmp(a, "--samples-per-chunk") && next) {
            if (parse_long(next, 1, TSCHUNK_MAX_SAMPLES, &o->samples_per_chunk))
                return fail("--samples-per-chunk must be 1..65535, not '%s'", next);
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

/* ---- compress ------------------------------------------------------------- */
static int verify_file(const char *path, const sample_set *s);

static int write_chunks(const options *o, const sample_set *s, tscf_writer *w, double *encode_s)
{
    size_t cap = TSCHUNK_BOUND((size_t)o->samples_per_chunk);
    unsigned char *buf = malloc(cap);
    if (!buf) return fail("out of memory");
    tschunk_encoder_options eo = {TSCHUNK_CODEC_GORILLA, (uint32_t)o->samples_per_chunk,
                                  (uint32_t)o->max_chunk_bytes, 0};
    tschunk_encoder enc;
    *encode_s = 0;
    size_t i = 0;
    while (i < s->n) {
        double t0 = now_s();
        tschunk_encoder_init(&enc, buf, cap, &eo);
        /* A timestamp going backwards, or a full chunk, ends the chunk. */
        while (i < s->n && tschunk_append_bits(&enc, s->ts[i], s->bits[i]) == 0) i++;
        size_t size = tschunk_encoder_finish(&enc);
        *encode_s += now_s() - t0;
        if (tschunk_encoder_count(&enc) == 0) {
            free(buf);
            return fail("sample %zu cannot be stored: --max-chunk-bytes too small", i);
        }
        if (tscf_write_chunk(w, buf, size, (uint32_t)tschunk_encoder_count(&enc))) {
            free(buf);
            return fail("write error on %s", w->tmp_path);
        }
    }
    free(buf);
    return 0;
}

static int cmd_compress(const options *o)
{
    if (!o->out) return fail("compress needs -o OUT");
    sample_set s = {0};
    size_t skipped = 0;
    if (read_csv(o, &s, &skipped)) { samples_free(&s); return 1; }
    tscf_writer w;
    if (tscf_create(&w, o->out, o->unit)) { samples_free(&s); return fail("cannot create %s", o->out); }
    double encode_s = 0;
    if (write_chunks(o, &s, &w, &encode_s) || tscf_commit(&w)) {
        tscf_abort(&w);
        samples_free(&s);
        return fail("%s not written", o->out);
    }
    printf("%s -> %s: %zu samples (%zu empty values skipped), %llu chunks, %llu bytes\n", o->in, o->out, s.n,
           skipped, (unsigned long long)w.chunks, (unsigned long long)w.bytes);
    if (s.n)
        printf("  %.3f bytes/sample (%.2f bits), %.1fx smaller than 16-byte raw samples, encode %.2f ns/sample\n",
               (double)w.bytes / (double)s.n, (double)w.bytes * 8 / (double)s.n,
               16.0 * (double)s.n / (double)w.bytes, encode_s * 1e9 / (double)s.n);
    int rc = o->verify ? verify_file(o->out, &s) : 0;
    samples_free(&s);
    return rc;
}

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
    int got;
    while ((got = tscf_next(&r, &chunk, &size)) == 1) {
        tschunk_iter it;
        tschunk_iter_init(&it, chunk, size);
        int64_t ts;
        uint64_t bits;
        size_t res;
        while ((res = tschunk_iter_next_bits(&it, &ts, &bits)) == 1)
            if (fn(ctx, ts, bits)) { tscf_close(&r); return 1; }
        if (tschunk_is_error(res)) {
            tscf_close(&r);
            return fail("%s: damaged chunk: %s", path, tschunk_error_name(res));
        }
    }
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
    double decode_ns;
} stats;

static double time_decode(tscf_reader *r, uint64_t samples)
{
    static int64_t ts[TSCHUNK_MAX_SAMPLES];
    static double vals[TSCHUNK_MAX_SAMPLES];
    double best = 0;
    for (int rep = 0; rep < 5 && samples; rep++) {
        r->pos = 8;
        r->chunks_seen = r->samples_seen = 0;
        const unsigned char *chunk;
        size_t size;
        double t0 = now_s();
        while (tscf_next(r, &chunk, &size) == 1) tschunk_decode(chunk, size, ts, vals, TSCHUNK_MAX_SAMPLES);
        double ns = (now_s() - t0) * 1e9 / (double)samples;
        if (rep == 0 || ns < best) best = ns;
    }
    return best;
}

static int collect_stats(const char *path, stats *st)
{
    memset(st, 0, sizeof(*st));
    tscf_reader r;
    if (tscf_open(&r, path)) { tscf_close(&r); return fail("%s", r.error); }
    const unsigned char *chunk;
    size_t size;
    int got;
    while ((got = tscf_next(&r, &chunk, &size)) == 1) {
        tschunk_chunk_info info;
        tschunk_chunk_info_get(chunk, size, &info);
        st->chunks++;
        st->samples += info.count;
        st->ts_bits += (uint64_t)(info.ts_header_bytes + info.ts_bytes) * 8;
        st->value_bits += (uint64_t)(info.count ? 8 + info.value_bytes : 0) * 8;
    }
    if (got < 0) { tscf_close(&r); return fail("%s: %s", path, r.error); }
    st->bytes = r.size;
    st->decode_ns = time_decode(&r, st->samples);
    tscf_close(&r);
    return 0;
}

static int cmd_stats(const options *o)
{
    stats st;
    if (collect_stats(o->in, &st)) return 1;
    double n = st.samples ? (double)st.samples : 1;
    double bps = (double)st.bytes * 8 / n, bpt = (double)st.ts_bits / n, bpv = (double)st.value_bits / n;
    double ratio = st.bytes ? 16.0 * (double)st.samples / (double)st.bytes : 0;
    if (o->json) {
        printf("{\"file\": \"%s\", \"codec\": \"gorilla\", \"samples\": %llu, \"chunks\": %llu, \"bytes\": %llu, "
               "\"bits_per_sample\": %.4f, \"bits_per_timestamp\": %.4f, \"bits_per_value\": %.4f, "
               "\"ratio\": %.4f, \"decode_ns_per_sample\": %.3f}\n",
               o->in, (unsigned long long)st.samples, (unsigned long long)st.chunks,
               (unsigned long long)st.bytes, bps, bpt, bpv, ratio, st.decode_ns);
        return 0;
    }
    printf("file             %s\n", o->in);
    printf("codec            gorilla (tschunk chunk format v1)\n");
    printf("samples          %llu\n", (unsigned long long)st.samples);
    printf("chunks           %llu\n", (unsigned long long)st.chunks);
    printf("bytes            %llu (%.3f bytes/sample)\n", (unsigned long long)st.bytes, (double)st.bytes / n);
    printf("bits/sample      %.2f  (timestamps %.2f, values %.2f, framing and headers %.2f)\n", bps, bpt, bpv,
           bps - bpt - bpv);
    printf("ratio            %.2fx against 16 raw bytes per sample\n", ratio);
    printf("decode           %.2f ns/sample (%.0f M samples/s, best of 5)\n", st.decode_ns,
           st.decode_ns > 0 ? 1e3 / st.decode_ns : 0);
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
    options o;
    if (parse_options(argc - 2, argv + 2, &o)) return 2;
    if (!strcmp(cmd, "compress")) return cmd_compress(&o);
    if (!strcmp(cmd, "decompress")) return cmd_decompress(&o);
    if (!strcmp(cmd, "stats")) return cmd_stats(&o);
    fprintf(stderr, "tschunk: unknown command '%s'\n", cmd);
    return usage();
}
