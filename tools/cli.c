/* Helpers the CLI's commands share (cli.h). */
#define _XOPEN_SOURCE 700 /* realpath; POSIX 2008 with it */
#include "cli.h"

#include <errno.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "csv.h"
#include "file.h"
#include "output.h"

extern char **environ; /* POSIX's, for posix_spawnp */

int64_t chunk_ts[TSCHUNK_MAX_SAMPLES];
double chunk_values[TSCHUNK_MAX_SAMPLES];
uint64_t chunk_bits[TSCHUNK_MAX_SAMPLES];

/* Bytes of v as a LEB128 uvarint. */
unsigned uvarint_size(uint64_t v)
{
    unsigned n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "tschunk: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return 1;
}

int fail_chunk(const char *path, unsigned long long chunk, const char *why)
{
    return fail("%s: chunk %llu is damaged: %s", path, chunk, why);
}

/* The length of the well-formed UTF-8 sequence at p (n bytes left), or 0 when there is none (RFC 3629). */
static size_t utf8_length(const unsigned char *p, size_t n)
{
    unsigned char c = p[0], lo = 0x80, hi = 0xbf; /* the second byte's range */
    size_t len = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3
               : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    if (!len || len > n) return 0;
    if (c == 0xe0) lo = 0xa0;
    else if (c == 0xed) hi = 0x9f; /* no surrogates */
    else if (c == 0xf0) lo = 0x90;
    else if (c == 0xf4) hi = 0x8f; /* nothing past U+10FFFF */
    if (len > 1 && (p[1] < lo || p[1] > hi)) return 0;
    for (size_t i = 2; i < len; i++)
        if ((p[i] & 0xc0) != 0x80) return 0;
    return len;
}

void print_json_bytes(const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + len;
    putchar('"');
    while (p < end) {
        size_t n = utf8_length(p, (size_t)(end - p));
        if (*p == '"' || *p == '\\') printf("\\%c", *p);
        else if (*p < 0x20 || !n) printf("\\u%04x", *p); /* a stray byte as its Latin-1 reading: valid JSON */
        else fwrite(p, 1, n, stdout);
        p += n ? n : 1;
    }
    putchar('"');
}

void print_json_string(const char *s) { print_json_bytes(s, strlen(s)); }

const char *json_number(char buf[32], double v)
{
    if (!isfinite(v)) return "null";
    snprintf(buf, 32, "%.17g", v);
    return buf;
}

const char *error_reason(size_t err)
{
    return tschunk_get_error_code(err) == TSCHUNK_ERROR_GENERIC && errno ? strerror(errno) : tschunk_error_name(err);
}

void print_table_name(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == 0x7f) printf("\\x%02x", c);
        else putchar(c);
    }
}

int samples_push(sample_set *s, int64_t ts, uint64_t bits)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 16; /* 16 first: a file of 100,000 series holds 100,000 of these */
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

void samples_free(sample_set *s)
{
    free(s->ts);
    free(s->bits);
}

/* ---- encoding in either format ---------------------------------------------- */
typedef struct {
    int format;
    tschunk_encoder native;
    tschunk_prom_encoder prom;
} any_encoder;

static size_t any_init(any_encoder *e, int format, uint32_t codec, void *buf, size_t cap, uint32_t per_chunk,
                       uint32_t max_bytes)
{
    e->format = format;
    tschunk_encoder_options o = {format == FORMAT_NATIVE ? codec : 0, per_chunk, max_bytes, 0};
    return format == FORMAT_NATIVE ? tschunk_encoder_init(&e->native, buf, cap, &o)
                                   : tschunk_prom_encoder_init(&e->prom, buf, cap, &o);
}

/* Appends samples [0, n) in bulk until the first refusal. @return how many went in. */
static size_t any_append_many(any_encoder *e, const int64_t *ts, const uint64_t *bits, size_t n)
{
    const double *values = (const double *)(const void *)bits; /* read as bit patterns (memcpy) */
    size_t appended = 0;
    if (e->format == FORMAT_NATIVE) tschunk_append_many(&e->native, ts, values, n, &appended);
    else tschunk_prom_append_many(&e->prom, ts, values, n, &appended);
    return appended;
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



/* summary: the sketch that summarizes each native chunk, or NULL for none. */
int encode_chunks(int format, uint32_t codec, const int64_t *ts, const uint64_t *bits, size_t n, uint32_t per_chunk,
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
        /* The next chunk of a native series restarts the encoder: codec 2 keeps what it learned of the series. */
        if (i == 0 || format != FORMAT_NATIVE) any_init(&enc, format, codec, buf, cap, per_chunk, max_bytes);
        else tschunk_encoder_restart(&enc.native, buf, cap);
        if (summary) tschunk_encoder_set_summary(&enc.native, summary);
        size_t start = i;
        /* Time going back starts a new chunk, in both formats; no chunk takes more than per_chunk. */
        size_t run_end = start + 1, chunk_end = n - start < per_chunk ? n : start + per_chunk;
        while (run_end < chunk_end && ts[run_end] >= ts[run_end - 1]) run_end++;
        i += any_append_many(&enc, ts + start, bits + start, run_end - start);
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

static int discard_chunk(void *ctx, const unsigned char *chunk, size_t size, uint32_t samples,
                         const unsigned char *summary, size_t summary_size)
{
    (void)ctx, (void)chunk, (void)size, (void)samples, (void)summary, (void)summary_size;
    return 0;
}

double encode_best_s(int format, uint32_t codec, uint32_t per_chunk, uint32_t max_bytes, tschunk_sketch *summary,
                     const series_view *series, size_t count, double first_s, int *passes)
{
    double best = first_s, spent = first_s;
    for (*passes = 1; *passes < 5 && spent < 0.5; ++*passes) {
        double pass = 0;
        for (size_t i = 0; i < count; i++)
            if (encode_chunks(format, codec, series[i].ts, series[i].bits, series[i].n, per_chunk, max_bytes,
                              summary, discard_chunk, NULL, &pass))
                return best; /* it succeeded before: out of memory now */
        spent += pass;
        best = pass < best ? pass : best;
    }
    return best;
}

size_t decode_any(int format, const unsigned char *chunk, size_t size)
{
    return format == FORMAT_NATIVE ? tschunk_decode(chunk, size, chunk_ts, chunk_values, TSCHUNK_MAX_SAMPLES)
                                   : tschunk_prom_decode(chunk, size, chunk_ts, chunk_values, TSCHUNK_MAX_SAMPLES);
}

size_t decode_many(int format, const void *const *chunks, const size_t *sizes, size_t n)
{
    return format == FORMAT_NATIVE
               ? tschunk_decode_chunks(chunks, sizes, n, chunk_ts, chunk_values, TSCHUNK_MAX_SAMPLES)
               : tschunk_prom_decode_chunks(chunks, sizes, n, chunk_ts, chunk_values, TSCHUNK_MAX_SAMPLES);
}

int print_sample(void *ctx, int64_t ts, uint64_t bits)
{
    text_ctx *t = ctx;
    char line[160], *end = line; /* timestamp and value: 64 bytes each at most */
    if (t->iso) {
        format_iso(line, 64, ts, t->unit);
        end += strlen(line);
    } else {
        end = put_int64(end, ts);
    }
    *end++ = ',';
    if (t->bits) end = put_hex_bits(end, bits);
    else {
        format_value(end, 64, bits);
        end += strlen(end);
    }
    *end++ = '\n';
    /* One write a line, the series first (a name is up to 4 KiB); stdio buffers them. */
    int failed = t->series && (fwrite(t->series, 1, t->series_len, t->out) != t->series_len || putc(',', t->out) < 0);
    failed = failed || fwrite(line, 1, (size_t)(end - line), t->out) != (size_t)(end - line);
    return failed ? fail("write error: %s", strerror(errno)) : 0;
}

/* Bits a Prometheus XOR chunk spends on timestamps: varint t0, uvarint first delta, dods. */
static uint64_t prom_ts_bits(const int64_t *ts, size_t n)
{
    uint64_t bits = 0, prev_delta = 0;
    for (size_t i = 0; i < n; i++) {
        if (i == 0) { bits += 8 * uvarint_size(((uint64_t)ts[0] << 1) ^ (0 - ((uint64_t)ts[0] >> 63))); continue; }
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
    uint64_t bytes, chunks, chunk_bytes; /* chunk_bytes: the chunks alone, without their length prefixes */
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
    c->chunk_bytes += size;
    c->chunks++;
    return 0;
}

int chunk_stats(stats *st, int format, const unsigned char *chunk, size_t size, size_t n)
{
    for (size_t i = 0; i < n; i++) memcpy(&chunk_bits[i], &chunk_values[i], 8);
    uint32_t whole = n ? (uint32_t)n : 1;
    if (format == FORMAT_NATIVE) {
        tschunk_chunk_info info;
        tschunk_chunk_info_get(chunk, size, &info);
        st->codecs |= 1u << info.codec;
        /* Codec 1 keeps the first value in its header; codec 2 keeps everything in its groups. */
        st->ts_bits += (uint64_t)(info.ts_header_bytes + info.ts_bytes) * 8;
        int first_value_in_header = info.codec == TSCHUNK_CODEC_GORILLA || (info.flags & TSCHUNK_FLAG_VAL_CONST);
        unsigned header_value_bytes = 8; /* VAL_SHORT: the bits reversed as a uvarint, 7 bits a byte */
        if (info.flags & TSCHUNK_FLAG_VAL_SHORT)
            header_value_bytes = info.first_bits ? (70 - (unsigned)__builtin_ctzll(info.first_bits)) / 7 : 1;
        st->value_bits += (uint64_t)(n && first_value_in_header ? header_value_bytes : 0) * 8 +
                          (uint64_t)info.value_bytes * 8;
        byte_count c = {0, 0, 0};
        int rc = encode_chunks(FORMAT_PROM, 0, chunk_ts, chunk_bits, n, whole, 0, NULL, count_bytes, &c, NULL);
        st->prom_bytes += c.bytes;
        st->native_chunk_bytes += size;
        st->prom_chunk_bytes += c.chunk_bytes;
        return rc;
    }
    uint64_t tsb = prom_ts_bits(chunk_ts, n);
    st->ts_bits += tsb;
    st->value_bits += (uint64_t)(size - 2) * 8 - tsb;
    byte_count c = {0, 0, 0};
    int rc = encode_chunks(FORMAT_NATIVE, TSCHUNK_CODEC_TSC2, chunk_ts, chunk_bits, n, whole, 0, NULL, count_bytes, &c, NULL);
    st->native_bytes += c.bytes;
    st->prom_chunk_bytes += size;
    st->native_chunk_bytes += c.chunk_bytes;
    st->native_chunks += c.chunks;
    return rc;
}

const char *plural(uint64_t n) { return n == 1 ? "" : "s"; }

/* ---- quantiles -------------------------------------------------------------- */
int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#define WARM_RUNS 5
#define WARM_BUDGET_US 50000.0 /* a long query is not run again: its first run is the figure */

size_t range_query_times(range_query_fn run, const void *query, tschunk_sketch *acc, tschunk_sketch *scratch,
                         tschunk_range_stats *st, double us[2])
{
    double t0 = now_s();
    size_t err = run(query, acc, st);
    us[0] = (now_s() - t0) * 1e6;
    us[1] = -1;
    double spent = us[0];
    for (int i = 0; i < WARM_RUNS && spent < WARM_BUDGET_US && scratch && !tschunk_is_error(err); i++) {
        tschunk_range_stats again;
        tschunk_sketch_clear(scratch);
        t0 = now_s();
        size_t err_again = run(query, scratch, &again);
        double t = (now_s() - t0) * 1e6;
        if (tschunk_is_error(err_again)) return err_again;
        if (us[1] < 0 || t < us[1]) us[1] = t;
        spent += t;
    }
    return err;
}

static const char *const mapping_names[] = {"logarithmic", "linear", "quadratic", "cubic", "quartic"};

/* Whether a new file can be made at path: its directory exists and takes files (said before any input is read, not
 * after minutes of it). A directory path too long to copy is left to the create to name. */
static int directory_takes_new_file(const char *path)
{
    char dir[4096];
    if (tsc_directory_of(path, dir, sizeof dir) || access(dir, W_OK | X_OK) == 0) return 1;
    fail("cannot create %s: %s", path, strerror(errno));
    return 0;
}

const char *writable_path(const char *path)
{
    static char *resolved; /* the last link resolved: kept until exit */
    struct stat st;
    if (lstat(path, &st) != 0) return directory_takes_new_file(path) ? path : NULL; /* a new file */
    if (S_ISLNK(st.st_mode)) {
        free(resolved);
        resolved = realpath(path, NULL);
        if (!resolved) {
            fail("%s is a symbolic link to nothing (%s): give the file's own path", path, strerror(errno));
            return NULL;
        }
        if (stat(resolved, &st) != 0) return resolved;
        path = resolved;
    }
    if (S_ISREG(st.st_mode)) return path;
    fail("%s is not a regular file: tschunk writes its output to a temporary file beside it and renames that over "
         "it, so -o names a file (decompress writes to standard output with -o -)", path);
    return NULL;
}

const char *staged_path(char *buf, size_t cap, const char *out, int verify)
{
    if (!verify) return out;
    if ((size_t)snprintf(buf, cap, "%s.verify.%ld", out, (long)getpid()) < cap) {
        signal_removes_staged(buf); /* until publish_staged */
        return buf;
    }
    fail("%s: the path is too long", out);
    return NULL;
}

int committed(int commit_rc, const char *out)
{
    if (commit_rc == -1) return fail("%s not written: %s", out, strerror(errno));
    if (commit_rc) return fail("%s is written, but its directory could not be synced: %s", out, strerror(errno));
    return 0;
}

int publish_staged(const char *staged, const char *out, int rc)
{
    if (!strcmp(staged, out)) return rc;
    if (!rc && rename(staged, out) != 0) rc = fail("cannot rename %s to %s: %s", staged, out, strerror(errno));
    else if (!rc) {
        signal_removes_staged(NULL);
        return tsc_sync_directory_of(out) ? committed(-2, out) : 0;
    }
    remove(staged);
    signal_removes_staged(NULL);
    fprintf(stderr, "tschunk: %s not written\n", out);
    return rc;
}

const char *mapping_name(tschunk_mapping_kind kind)
{
    return (unsigned)kind < sizeof mapping_names / sizeof *mapping_names ? mapping_names[kind] : "unknown";
}

int iso_unit(const options *o, int unit)
{
    if (o->iso && unit == UNIT_RAW)
        fprintf(stderr, "tschunk: note: %s: its timestamps have no unit; --iso reads them as milliseconds\n", o->in);
    return unit;
}

void ls_begin(const options *o, int unit)
{
    if (!o->json) {
        printf("series\tid\tchunks\tsamples\tfirst_ts\tlast_ts\tbytes\n");
        return;
    }
    printf("{\"file\": ");
    print_json_string(o->in);
    printf(", \"ts_unit\": \"%s\", \"series\": [", unit_name(unit));
}

/* A time range's two ends in JSON: the integers, and with --iso the date-times; null for a series without one. */
static void json_time_range(const options *o, int unit, const ls_series *s)
{
    char first[64], last[64];
    if (s->first > s->last) {
        printf(", \"first_ts\": null, \"last_ts\": null%s", o->iso ? ", \"first\": null, \"last\": null" : "");
        return;
    }
    *put_int64(first, s->first) = 0, *put_int64(last, s->last) = 0;
    printf(", \"first_ts\": %s, \"last_ts\": %s", first, last);
    if (!o->iso) return;
    format_iso(first, sizeof first, s->first, unit), format_iso(last, sizeof last, s->last, unit);
    printf(", \"first\": \"%s\", \"last\": \"%s\"", first, last);
}

void ls_row(const options *o, int unit, const ls_series *s, int first_row)
{
    if (o->json) {
        printf("%s\n  {\"name\": ", first_row ? "" : ",");
        print_json_bytes(s->name, s->name_len);
        printf(", \"id\": %llu, \"chunks\": %llu, \"samples\": %llu", (unsigned long long)s->id,
               (unsigned long long)s->chunks, (unsigned long long)s->samples);
        json_time_range(o, unit, s);
        printf(", \"bytes\": %llu}", (unsigned long long)s->bytes);
        return;
    }
    print_table_name(s->name, s->name_len);
    printf("\t%llu\t%llu\t%llu\t", (unsigned long long)s->id, (unsigned long long)s->chunks,
           (unsigned long long)s->samples);
    if (s->first > s->last) printf("-\t-"); /* no live samples (deleted, or compacted away): no time range */
    else print_time_range(o, unit, s->first, s->last);
    printf("\t%llu\n", (unsigned long long)s->bytes);
}

void ls_end(const options *o, size_t rows)
{
    if (o->json) printf("%s]}\n", rows ? "\n" : "");
}

void print_time_range(const options *o, int unit, int64_t first, int64_t last)
{
    char a[64], b[64];
    if (o->iso) format_iso(a, sizeof a, first, unit), format_iso(b, sizeof b, last, unit);
    else *put_int64(a, first) = 0, *put_int64(b, last) = 0;
    printf("%s\t%s", a, b);
}

int mapping_conflict(const options *o, const tschunk_sketch *acc)
{
    if (!acc || !o->mapping_set) return 0;
    tschunk_sketch *asked;
    tschunk_sketch_options so = {o->mapping, o->alpha, 1, 0, {NULL, NULL, NULL}, 0};
    if (tschunk_sketch_create(&asked, &so)) return fail("out of memory");
    tschunk_sketch_stats have, want;
    tschunk_sketch_get_stats(acc, &have);
    tschunk_sketch_get_stats(asked, &want);
    tschunk_sketch_free(asked);
    double have_params[2] = {have.gamma, have.index_offset}, want_params[2] = {want.gamma, want.index_offset};
    if (have.mapping == want.mapping && !memcmp(have_params, want_params, sizeof have_params)) return 0;
    return fail("%s: its summaries are %s sketches of relative accuracy %.6g; --mapping and --alpha choose the "
                "sketch of a file without summaries", o->in, mapping_name(have.mapping), have.relative_accuracy);
}

int mapping_from_name(const char *s, tschunk_mapping_kind *out)
{
    for (size_t i = 0; i < sizeof mapping_names / sizeof *mapping_names; i++)
        if (!strcmp(s, mapping_names[i])) {
            *out = (tschunk_mapping_kind)i;
            return 0;
        }
    return -1;
}

int values_push(value_list *l, double v)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 1 << 16;
        double *grown = realloc(l->v, cap * sizeof *grown);
        if (!grown) {
            free(l->v);
            *l = (value_list){0};
            return -1;
        }
        l->v = grown;
        l->cap = cap;
    }
    l->v[l->n++] = v;
    return 0;
}

/* --exact's answer at q: the sorted values' rank floor(q (n - 1)), and the sketch's relative error against it. */
static double exact_at(const double *exact, size_t nexact, double q)
{
    return exact[(size_t)floor(q * (double)(nexact - 1))];
}

static double relative_error(double v, double exact)
{
    /* fabs(exact) <= 0 for +-0 alone (NaN compares false): glibc's fpclassify is a call on floats at -Os, which
     * -Wconversion refused there, and == is -Wfloat-equal's. */
    return !(fabs(exact) <= 0) ? fabs(v - exact) / fabs(exact) : fabs(v);
}

static void print_range(const options *o, const tschunk_range_stats *st, const double us[2],
                        const tschunk_sketch_stats *ss)
{
    printf("file        %s\n", o->in);
    if (o->from == INT64_MIN && o->to == INT64_MAX) printf("range       all samples\n");
    else {
        printf("range       %lld .. %lld (inclusive, the file's timestamp unit", (long long)o->from, (long long)o->to);
        if (o->bounds_unit > UNIT_RAW) { /* and as date-times, an open end as such */
            char from[48] = "the first sample", to[48] = "the last";
            if (o->from != INT64_MIN) format_iso(from, sizeof from, o->from, o->bounds_unit);
            if (o->to != INT64_MAX) format_iso(to, sizeof to, o->to, o->bounds_unit);
            printf(": %s .. %s", from, to);
        }
        printf(")\n");
    }
    printf("samples     %.0f in range (+ %llu NaN, %llu infinite: not in the sketch)\n", ss->count,
           (unsigned long long)st->nan_count, (unsigned long long)st->inf_count);
    printf("chunks      %llu from summaries, %llu decoded (%llu samples), %llu outside: %.1f us",
           (unsigned long long)st->chunks_from_summaries, (unsigned long long)st->chunks_decoded,
           (unsigned long long)st->samples_decoded, (unsigned long long)st->chunks_skipped, us[0]);
    if (us[1] >= 0)
        printf(" (first run, the file's pages touched for the first time; again: %.1f us, the best of up to %d)",
               us[1], WARM_RUNS);
    printf("\n");
    printf("sketch      DDSketch %s, relative accuracy %.4g\n", mapping_name(ss->mapping), ss->relative_accuracy);
    if (ss->count > 0) printf("min/max/sum %.17g / %.17g / %.17g\n", ss->min, ss->max, ss->sum);
}

/* A bound as JSON: an open end (INT64_MIN, INT64_MAX) is null. */
static void print_json_bound(const char *key, int64_t t, int64_t open)
{
    if (t == open) printf(", \"%s\": null", key);
    else printf(", \"%s\": %lld", key, (long long)t);
}

/* quantiles --json: one object, the plain output's figures under keys; no answer (no values, an error) is null. */
static void print_quantiles_json(const options *o, const tschunk_range_stats *st, const double us[2],
                                 const tschunk_sketch *acc, const tschunk_sketch_stats *ss, const double *exact,
                                 size_t nexact)
{
    int any = ss->count > 0;
    printf("{\"file\": ");
    print_json_string(o->in);
    print_json_bound("from", o->from, INT64_MIN);
    print_json_bound("to", o->to, INT64_MAX);
    printf(", \"samples\": %.0f, \"nan\": %llu, \"inf\": %llu, \"chunks_from_summaries\": %llu, "
           "\"chunks_decoded\": %llu, \"samples_decoded\": %llu, \"chunks_outside\": %llu, \"time_us\": %.3f, "
           "\"mapping\": \"%s\", \"relative_accuracy\": %.17g",
           ss->count, (unsigned long long)st->nan_count, (unsigned long long)st->inf_count,
           (unsigned long long)st->chunks_from_summaries, (unsigned long long)st->chunks_decoded,
           (unsigned long long)st->samples_decoded, (unsigned long long)st->chunks_skipped, us[1] >= 0 ? us[1] : us[0],
           mapping_name(ss->mapping), ss->relative_accuracy);
    char a[32], b[32], c[32];
    if (any) /* a sum past the double range is infinite, a summary's SUM block may hold a NaN: both print null */
        printf(", \"min\": %s, \"max\": %s, \"sum\": %s", json_number(a, ss->min), json_number(b, ss->max),
               json_number(c, ss->sum));
    else printf(", \"min\": null, \"max\": null, \"sum\": null");
    printf(", \"quantiles\": [");
    char qbuf[512];
    snprintf(qbuf, sizeof qbuf, "%s", o->qlist);
    const char *sep = "";
    for (char *tok = strtok(qbuf, ","); tok; tok = strtok(NULL, ","), sep = ", ") {
        double q = strtod(tok, NULL), v = 0;
        int answered = any && !tschunk_is_error(tschunk_sketch_quantile(acc, q, &v));
        printf("%s{\"q\": %.15g, \"value\": %s", sep, q, answered ? json_number(a, v) : "null");
        if (exact && nexact && answered) {
            double e = exact_at(exact, nexact, q);
            printf(", \"exact\": %s, \"relative_error\": %s", json_number(a, e),
                   json_number(b, relative_error(v, e)));
        }
        printf("}");
    }
    printf("]}\n");
}

void print_quantiles(const options *o, const tschunk_range_stats *st, const double us[2], const tschunk_sketch *acc,
                     const double *exact, size_t nexact)
{
    tschunk_sketch_stats ss;
    tschunk_sketch_get_stats(acc, &ss);
    if (o->json) {
        print_quantiles_json(o, st, us, acc, &ss, exact, nexact);
        return;
    }
    print_range(o, st, us, &ss);
    if (!(ss.count > 0)) {
        printf("no values in the range: no quantiles\n");
        return;
    }
    printf(o->exact ? "%-8s %-24s %-24s %s\n" : "%-8s %s\n", "q", "value", "exact", "relative error");
    char qbuf[512];
    snprintf(qbuf, sizeof qbuf, "%s", o->qlist);
    for (char *tok = strtok(qbuf, ","); tok; tok = strtok(NULL, ",")) {
        double q = strtod(tok, NULL), v;
        size_t qr = tschunk_sketch_quantile(acc, q, &v);
        if (tschunk_is_error(qr)) { printf("%-8s %s\n", tok, tschunk_error_name(qr)); continue; }
        if (!exact || !nexact) { printf("%-8s %.17g\n", tok, v); continue; }
        double e = exact_at(exact, nexact, q);
        printf("%-8s %-24.17g %-24.17g %.3g\n", tok, v, e, relative_error(v, e));
    }
}

/* The tool that unpacks the regular file f, or NULL for plain text; "" for tschunk's own files (a segment, a
 * chunk file), which are no CSV. Read from its start, and left there. Another kind of file (a pipe, a FIFO) is read
 * as it comes: its first bytes cannot be read twice. */
static const char *packer_of(FILE *f)
{
    struct stat st;
    unsigned char head[6];
    if (fstat(fileno(f), &st) || !S_ISREG(st.st_mode)) return NULL;
    size_t got = fread(head, 1, sizeof head, f);
    rewind(f);
    if (got >= 4 && (!memcmp(head, "TSEG", 4) || !memcmp(head, "TSCF", 4))) return "";
    return packer_of_bytes(head, got);
}

/* `tool -dc -- path` with its output on a pipe that in->file reads; for standard input (path "-", whose first byte
 * was read), `sh -c '{ printf BYTE; exec cat; } | tool -dc --'`, which hands that byte back first. @return 0, or 1
 * after the message. */
static int spawn_unpacker(input_file *in, const char *path, const char *tool, int first_byte)
{
    int fds[2];
    char script[64];
    snprintf(script, sizeof script, "{ printf '\\%03o'; exec cat; } | %s -dc --", (unsigned)first_byte & 0xff, tool);
    int from_stdin = !strcmp(path, "-");
    char *arg = strdup(from_stdin ? script : path); /* posix_spawnp takes char *const argv[] */
    char *name = strdup(from_stdin ? "sh" : tool);
    if (!arg || !name || pipe(fds)) {
        free(arg);
        free(name);
        return fail("cannot read %s through %s: %s", path, tool, strerror(errno));
    }
    char *file_argv[] = {name, "-dc", "--", arg, NULL}, *stdin_argv[] = {name, "-c", arg, NULL};
    char **argv = from_stdin ? stdin_argv : file_argv;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
    posix_spawn_file_actions_addclose(&actions, fds[0]);
    posix_spawn_file_actions_addclose(&actions, fds[1]);
    pid_t pid;
    int err = posix_spawnp(&pid, argv[0], &actions, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    free(arg);
    free(name);
    close(fds[1]);
    if (err) {
        close(fds[0]);
        return fail("%s is %s-compressed, and %s cannot be run: %s", from_stdin ? "the input" : path, tool,
                    from_stdin ? "sh" : tool, strerror(err));
    }
    in->unpacker_pid = (int)pid;
    in->unpacker = tool;
    if (!(in->file = fdopen(fds[0], "r"))) {
        close(fds[0]);
        input_close(in, path, 0);
        return fail("cannot read %s through %s: %s", path, tool, strerror(errno));
    }
    return 0;
}

int input_open(input_file *in, const char *path)
{
    in->unpacker_pid = 0;
    in->unpacker = NULL;
    if (!strcmp(path, "-")) {
        /* One byte read past stdio, so that the descriptor is where a child would read on: gzip's and xz's first
         * bytes, which no text starts with, are known from it; any other goes back into the stream. */
        unsigned char first;
        in->file = stdin;
        ssize_t got;
        while ((got = read(0, &first, 1)) < 0 && errno == EINTR) continue;
        if (got == 1 && (first == 0x1f || first == 0xfd))
            return spawn_unpacker(in, path, first == 0x1f ? "gzip" : "xz", first);
        if (got == 1) ungetc(first, stdin);
        return 0;
    }
    if (!(in->file = fopen(path, "r"))) return fail("cannot open %s: %s", path, strerror(errno));
    struct stat st;
    if (!fstat(fileno(in->file), &st) && S_ISDIR(st.st_mode)) { /* fopen takes one; its read fails */
        fclose(in->file);
        in->file = NULL;
        return fail("%s is a directory, not a CSV file", path);
    }
    const char *tool = packer_of(in->file);
    if (!tool) return 0;
    fclose(in->file);
    in->file = NULL;
    if (!*tool) return fail("%s is a tschunk file already, not CSV: cat, decompress, ls or merge read it", path);
    return spawn_unpacker(in, path, tool, 0);
}

int input_close(input_file *in, const char *path, int complete)
{
    if (in->file && in->file != stdin) fclose(in->file); /* an unpacker still writing ends on SIGPIPE */
    in->file = NULL;
    if (!in->unpacker_pid) return 0;
    int status = 0;
    pid_t waited;
    while ((waited = waitpid((pid_t)in->unpacker_pid, &status, 0)) < 0 && errno == EINTR) continue;
    in->unpacker_pid = 0;
    if (!complete) return 0;
    const char *tool = in->unpacker;
    if (waited < 0) return fail("%s: %s's end not known: %s", path, tool, strerror(errno));
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return 0;
    if (WIFSIGNALED(status))
        return fail("%s: %s ended on signal %d: the input may be cut short", path, tool, WTERMSIG(status));
    return fail("%s: %s -dc failed (exit %d): the file is corrupt or truncated", path, tool, WEXITSTATUS(status));
}
