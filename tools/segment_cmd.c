/*
 * The CLI's segment commands: compress CSV into a segment (one series, a
 * series,timestamp,value file, or a --wide table), and verify, ls, cat,
 * decompress, stats, quantiles and delete of a segment. Every read goes
 * through tschunk_segment_decode, so deleted samples never show.
 */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "csv.h"
#include "file.h"
#include "output.h"

static int open_segment_with(const char *path, const unsigned char *data, size_t size, unsigned flags,
                             tschunk_segment **seg)
{
    size_t err = tschunk_segment_open(seg, data, size, flags, NULL);
    return err ? fail("%s: broken segment: %s", path, tschunk_error_name(err)) : 0;
}

static int open_segment(const char *path, const unsigned char *data, size_t size, tschunk_segment **seg)
{
    return open_segment_with(path, data, size, 0, seg);
}

/* The live samples of chunk i, whose info c was read, into chunk_ts/chunk_values.
 * @return their count, or SIZE_MAX after the message. */
static size_t decode_read_chunk(const char *path, const tschunk_segment *seg, size_t i,
                                const tschunk_segment_chunk_info *c)
{
    /* chunks with deletions go through the tombstone-aware decoder */
    size_t n = c->deleted ? tschunk_segment_decode(seg, i, chunk_ts, chunk_values, TSCHUNK_MAX_SAMPLES)
                          : tschunk_decode(c->ref.chunk, c->ref.chunk_size, chunk_ts, chunk_values, TSCHUNK_MAX_SAMPLES);
    const char *why = NULL;
    if (tschunk_is_error(n)) why = tschunk_error_name(n);
    else if (n != (size_t)(c->count - c->deleted)) why = "count mismatch";
    /* cat merges overlapping chunks by the index's ranges (and a decoder's time never goes back) */
    else if (n && (chunk_ts[0] < c->first_ts || chunk_ts[n - 1] > c->last_ts)) why = "samples outside its time range";
    if (!why) return n;
    fail_chunk(path, i, why);
    return SIZE_MAX;
}

/* Chunk i's live samples into chunk_ts/chunk_values, its record checked once (c may be NULL).
 * @return their count, or SIZE_MAX after the message. */
static size_t decode_chunk(const char *path, const tschunk_segment *seg, size_t i, tschunk_segment_chunk_info *c)
{
    tschunk_segment_chunk_info local;
    if (!c) c = &local;
    size_t err = tschunk_segment_chunk(seg, i, c);
    if (!err) return decode_read_chunk(path, seg, i, c);
    fail_chunk(path, i, tschunk_error_name(err));
    return SIZE_MAX;
}

static size_t chunk_count(const tschunk_segment *seg)
{
    tschunk_segment_info info;
    tschunk_segment_get_info(seg, &info);
    return info.chunks;
}

/* After a compaction, a merge, a delete or a range query refused its input (err): the first chunk of seg in
 * [begin, end) that does not decode, named as the readers name it, so that a damaged segment among several is found.
 * Not after a write or an allocation failure, nor for segments unlike each other. @return 1 after that message,
 * else 0. */
static int name_damaged_chunk(const char *path, const tschunk_segment *seg, size_t begin, size_t end, size_t err)
{
    tschunk_error_code code = tschunk_get_error_code(err);
    if (code == TSCHUNK_ERROR_GENERIC || code == TSCHUNK_ERROR_ALLOCATION || code == TSCHUNK_ERROR_NOT_MERGEABLE)
        return 0;
    for (size_t i = begin; i < end; i++)
        if (decode_chunk(path, seg, i, NULL) == SIZE_MAX) return 1;
    return 0;
}

/* ---- compress ------------------------------------------------------------- */

/* The input's series, in order of first appearance (that order is their id), found by name through a hash. */
typedef struct {
    char *name;
    sample_set samples;
} input_series;

typedef struct {
    input_series *list;
    size_t n, cap;
    size_t *slots; /* index + 1 into list; 0 = empty */
    size_t nslots;
} series_table;

static uint64_t name_hash(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603u; /* FNV-1a */
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211u;
    return h;
}

static int rehash(series_table *t)
{
    size_t nslots = t->nslots ? t->nslots * 2 : 256;
    size_t *slots = calloc(nslots, sizeof *slots);
    if (!slots) return -1;
    for (size_t i = 0; i < t->n; i++) {
        size_t at = (size_t)name_hash(t->list[i].name, strlen(t->list[i].name)) & (nslots - 1);
        while (slots[at]) at = (at + 1) & (nslots - 1);
        slots[at] = i + 1;
    }
    free(t->slots);
    t->slots = slots;
    t->nslots = nslots;
    return 0;
}

/* @return the series named so (added when new), or NULL when out of memory. */
static input_series *series_get(series_table *t, const char *name)
{
    size_t len = strlen(name);
    if (t->n * 2 >= t->nslots && rehash(t)) return NULL;
    size_t at = (size_t)name_hash(name, len) & (t->nslots - 1);
    for (; t->slots[at]; at = (at + 1) & (t->nslots - 1))
        if (!strcmp(t->list[t->slots[at] - 1].name, name)) return &t->list[t->slots[at] - 1];
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 64;
        input_series *grown = realloc(t->list, cap * sizeof *grown);
        if (!grown) return NULL;
        t->list = grown;
        t->cap = cap;
    }
    input_series *s = &t->list[t->n];
    memset(s, 0, sizeof *s);
    if (!(s->name = strdup(name))) return NULL;
    t->slots[at] = ++t->n;
    return s;
}

static void series_table_free(series_table *t)
{
    for (size_t i = 0; i < t->n; i++) {
        free(t->list[i].name);
        samples_free(&t->list[i].samples);
    }
    free(t->list);
    free(t->slots);
}

/* name without the suffix ext, if it ends so (and is more than it). @return 1 if dropped. */
static int drop_suffix(char *name, const char *ext)
{
    size_t n = strlen(name), e = strlen(ext);
    if (n <= e || strcmp(name + n - e, ext)) return 0;
    name[n - e] = 0;
    return 1;
}

/* A two-column file is one series, named after the file (directory, a compressor's suffix and .csv dropped). */
static void name_after_file(const char *path, char *name, size_t size)
{
    static const char *const packed[] = {".gz", ".bz2", ".xz", ".zst"};
    const char *base = strrchr(path, '/');
    snprintf(name, size, "%s", !strcmp(path, "-") ? "stdin" : base ? base + 1 : path);
    for (size_t k = 0; k < sizeof packed / sizeof packed[0] && !drop_suffix(name, packed[k]); k++) continue;
    drop_suffix(name, ".csv");
}

/* Progress on a terminal for long reads (over 2 s), at most once a second; `shown` asks for the closing newline. */
typedef struct {
    double start, last_report;
    int shown;
} read_progress;

static void progress(const options *o, size_t rows, read_progress *p)
{
    if ((rows & 0xffff) || !isatty(2) || now_s() - p->start < 2.0 || now_s() - p->last_report < 1.0) return;
    fprintf(stderr, "\rreading %s: %zu samples", o->in, rows);
    p->last_report = now_s();
    p->shown = 1;
}

static int read_wide(const options *o, csv_reader *r, series_table *t, size_t *rows, read_progress *p)
{
    if (csv_wide_header(r)) return fail("%s: %s", o->in, r->error);
    size_t columns = r->columns - 1;
    for (size_t c = 0; c < columns; c++) {
        input_series *s = series_get(t, r->wide_names[c]);
        if (!s) return fail("out of memory");
        if (t->n != c + 1) return fail("%s: column '%s' appears twice in the header", o->in, r->wide_names[c]);
    }
    int64_t ts;
    char **cells;
    int got;
    while ((got = csv_next_wide(r, &ts, &cells)) == 1) {
        for (size_t c = 0; c < columns; c++) {
            uint64_t bits;
            if (!*cells[c]) { r->skipped++; continue; }
            if (parse_value(cells[c], &bits))
                return fail("%s: line %zu: bad value '%.60s'", o->in, r->line_no, cells[c]);
            if (samples_push(&t->list[c].samples, ts, bits)) return fail("out of memory");
            progress(o, ++*rows, p);
        }
    }
    return got < 0 ? fail("%s: %s", o->in, r->error) : 0;
}

static int read_long(const options *o, csv_reader *r, series_table *t, size_t *rows, read_progress *p)
{
    char file_series[256];
    name_after_file(o->in, file_series, sizeof file_series);
    input_series *last_series = NULL;
    int64_t ts;
    uint64_t bits;
    int got;
    while ((got = csv_next(r, &ts, &bits)) == 1) {
        const char *name = r->columns == 3 ? r->series : file_series;
        input_series *s = last_series && !strcmp(last_series->name, name) ? last_series : series_get(t, name);
        if (!s || samples_push(&s->samples, ts, bits)) return fail("out of memory");
        last_series = s;
        progress(o, ++*rows, p);
    }
    return got < 0 ? fail("%s: %s", o->in, r->error) : 0;
}

/* The input's series. @return 0 or 1 after the message (line number included). */
static int read_series(const options *o, series_table *t, size_t *rows, size_t *skipped)
{
    input_file in;
    if (input_open(&in, o->in)) return 1;
    csv_reader r;
    csv_init(&r, in.file, o->unit);
    read_progress p = {now_s(), now_s(), 0};
    int rc = o->wide ? read_wide(o, &r, t, rows, &p) : read_long(o, &r, t, rows, &p);
    if (p.shown) fputc('\n', stderr);
    rc |= input_close(&in, o->in, !rc);
    *skipped = r.skipped;
    csv_free(&r);
    return rc;
}

typedef struct {
    tschunk_segment_writer *w;
    uint64_t series_id;
    uint64_t chunks, chunk_bytes, summary_bytes;
} segment_sink;

static int add_to_segment(void *ctx, const unsigned char *chunk, size_t size, uint32_t samples,
                          const unsigned char *summary, size_t summary_size)
{
    (void)samples;
    segment_sink *s = ctx;
    size_t err = tschunk_segment_writer_add_chunk(s->w, s->series_id, chunk, size, summary, summary_size);
    if (err) return fail("cannot add a chunk to the segment: %s", error_reason(err));
    s->chunks++;
    s->chunk_bytes += size;
    s->summary_bytes += summary_size;
    return 0;
}

/* The smallest and largest timestamp of every series (0 and 0 without samples). */
static void time_span(const series_table *t, int64_t *min, int64_t *max)
{
    *min = INT64_MAX, *max = INT64_MIN;
    for (size_t i = 0; i < t->n; i++)
        for (size_t k = 0; k < t->list[i].samples.n; k++) {
            int64_t ts = t->list[i].samples.ts[k];
            *min = ts < *min ? ts : *min;
            *max = ts > *max ? ts : *max;
        }
    if (*min > *max) *min = *max = 0;
}

static int64_t min_timestamp(const series_table *t)
{
    int64_t min, max;
    time_span(t, &min, &max);
    return min;
}

/* Integers labelled milliseconds by default that read as 1973 to 2286 in another unit (10^8 to 10^10 seconds, 10^14
 * to 10^16 microseconds, 10^17 and up nanoseconds) are far likelier that unit than what milliseconds make of them
 * (days after 1970, or dates past the year 5000): say so, since the label decides what --iso prints and what
 * date-time bounds mean. Milliseconds of 1973 to 2286 lie between. */
static void note_other_unit(const options *o, const series_table *t)
{
    static const struct { int64_t from, to; const char *unit, *flag; } likelier[] = { /* to: inclusive */
        {INT64_C(100000000), INT64_C(9999999999), "seconds", "s"},
        {INT64_C(100000000000000), INT64_C(9999999999999999), "microseconds", "us"},
        {INT64_C(100000000000000000), INT64_MAX, "nanoseconds", "ns"},
    };
    int64_t min, max;
    time_span(t, &min, &max);
    if (o->unit_set || o->unit != UNIT_MS) return;
    for (size_t k = 0; k < sizeof likelier / sizeof likelier[0]; k++)
        if (min >= likelier[k].from && max <= likelier[k].to)
            fprintf(stderr, "tschunk: note: the timestamps (%lld to %lld) look like Unix %s, but are labelled "
                    "milliseconds; --ts-unit %s labels them %s (they are stored as given either way)\n",
                    (long long)min, (long long)max, likelier[k].unit, likelier[k].flag, likelier[k].unit);
}

/* Every series encoded into chunks and added. @return 0 or 1 after the message. */
static int write_series(const options *o, const series_table *t, tschunk_segment_writer *w, tschunk_sketch *summary,
                        segment_sink *sink, double *encode_s)
{
    for (size_t i = 0; i < t->n; i++) {
        const input_series *s = &t->list[i];
        sink->series_id = i;
        if (tschunk_segment_writer_add_series(w, i, s->name, strlen(s->name)))
            return fail("series name longer than 4096 bytes: '%.40s...'", s->name);
        if (encode_chunks(FORMAT_NATIVE, o->codec, s->samples.ts, s->samples.bits, s->samples.n, (uint32_t)o->samples_per_chunk,
                          (uint32_t)o->max_chunk_bytes, summary, add_to_segment, sink, encode_s))
            return 1;
    }
    return 0;
}

static int verify_written(const char *path, const series_table *t);

/* With --summary, the sketch every chunk's summary is made with, and its mapping in *so. @return 0, or 1 after the
 * message. */
static int summary_setup(const options *o, tschunk_segment_options *so, tschunk_sketch **summary)
{
    *summary = NULL;
    if (!o->summary) return 0;
    tschunk_sketch_options ko = {o->mapping, o->alpha, 0, 0, {NULL, NULL, NULL}, 0};
    tschunk_sketch_stats ks;
    if (tschunk_sketch_create(summary, &ko)) return fail("cannot create the summary sketch");
    tschunk_sketch_get_stats(*summary, &ks);
    so->has_summaries = 1;
    so->summary_mapping = ks.mapping;
    so->summary_gamma = ks.gamma;
    so->summary_offset = ks.index_offset;
    so->summary_block_chunks = (uint32_t)o->summary_block;
    return 0;
}

/* encode_best_s over the table's series; first_s, the pass that wrote the file, when memory runs out. */
static double warm_encode_s(const options *o, const series_table *t, tschunk_sketch *summary, double first_s,
                            int *passes)
{
    series_view *views = malloc((t->n + 1) * sizeof *views);
    *passes = 1;
    if (!views) return first_s;
    for (size_t i = 0; i < t->n; i++)
        views[i] = (series_view){t->list[i].samples.ts, t->list[i].samples.bits, t->list[i].samples.n};
    double best_s = encode_best_s(FORMAT_NATIVE, o->codec, (uint32_t)o->samples_per_chunk,
                                  (uint32_t)o->max_chunk_bytes, summary, views, t->n, first_s, passes);
    free(views);
    return best_s;
}

/* The segment written from the table at target. @return its bytes, or 0 after the message. */
static size_t write_segment_file(const options *o, const series_table *t, const char *target,
                                 const tschunk_segment_options *so, tschunk_sketch *summary, segment_sink *sink,
                                 double *encode_s)
{
    tschunk_segment_writer *w;
    output_file out;
    if (output_create(&out, target, o->out)) return 0;
    size_t created = tschunk_segment_writer_create_io(&w, &out.io, so);
    if (created) {
        output_discard(&out);
        fail("cannot create %s: %s", o->out, error_reason(created));
        return 0;
    }
    *sink = (segment_sink){w, 0, 0, 0, 0};
    if (write_series(o, t, w, summary, sink, encode_s)) {
        tschunk_segment_writer_abort(w);
        output_discard(&out);
        return 0;
    }
    size_t bytes = tschunk_segment_writer_finish(w);
    if (tschunk_is_error(bytes)) {
        output_discard(&out);
        fail("%s not written: %s", o->out, error_reason(bytes));
        return 0;
    }
    return output_commit(&out) ? 0 : bytes;
}

int segment_compress(const options *o)
{
    if (!o->out || !strcmp(o->out, "-")) return fail("compress needs -o OUT, a file (not stdout)");
    series_table t = {0};
    size_t rows = 0, skipped = 0, bytes = 0;
    tschunk_sketch *summary = NULL;
    char staged[4200];
    const char *target = NULL;
    int rc = read_series(o, &t, &rows, &skipped);
    if (!rc) note_other_unit(o, &t);
    tschunk_segment_options so = {.min_ts = min_timestamp(&t), .ts_unit = (tschunk_ts_unit)o->unit};
    rc = rc || summary_setup(o, &so, &summary) || !(target = staged_path(staged, sizeof staged, o->out, o->verify));
    segment_sink sink = {0};
    double encode_s = 0, best_s = 0;
    int passes = 1;
    if (!rc) rc = !(bytes = write_segment_file(o, &t, target, &so, summary, &sink, &encode_s));
    if (!rc) best_s = warm_encode_s(o, &t, summary, encode_s, &passes);
    tschunk_sketch_free(summary);
    if (rc) { series_table_free(&t); return 1; }
    printf("%s -> %s: %zu sample%s (%zu empty value%s skipped), %zu series, %llu chunk%s, %zu bytes", o->in, o->out,
           rows, plural(rows), skipped, plural(skipped), t.n, (unsigned long long)sink.chunks, plural(sink.chunks), bytes);
    if (o->summary) printf(" (summaries %llu of them)", (unsigned long long)sink.summary_bytes);
    printf("\n");
    if (rows)
        printf("  %.3f bytes/sample (%.2f bits; chunks alone %.2f), ratio %.1fx against 16-byte raw samples, "
               "encode %.2f ns/sample (best of %d passes; the first, writing the file, %.2f)\n",
               (double)bytes / (double)rows, (double)bytes * 8 / (double)rows,
               (double)sink.chunk_bytes * 8 / (double)rows, 16.0 * (double)rows / (double)bytes,
               best_s * 1e9 / (double)rows, passes, encode_s * 1e9 / (double)rows);
    if (o->verify) rc = publish_staged(target, o->out, verify_written(target, &t));
    series_table_free(&t);
    return rc;
}

typedef struct {
    size_t index;
    tschunk_segment_chunk_info info; /* info.ref.chunk: the chunk's bytes inside the file */
} placed_chunk;

static int by_file_position(const void *a, const void *b)
{
    const char *x = ((const placed_chunk *)a)->info.ref.chunk, *y = ((const placed_chunk *)b)->info.ref.chunk;
    return (x > y) - (x < y);
}

/* The infos of chunks [begin, begin + n) read in one run into infos. @return 0, or 1 after naming the first
 * damaged one. */
static int read_infos(const char *path, const tschunk_segment *seg, size_t begin, size_t n,
                      tschunk_segment_chunk_info *infos)
{
    size_t err = tschunk_segment_chunks(seg, begin, n, infos);
    if (!err) return 0;
    size_t bad = begin;
    while (bad + 1 < begin + n && !tschunk_segment_chunk(seg, bad, &infos[0])) bad++; /* the first one refused */
    return fail_chunk(path, bad, tschunk_error_name(err));
}

/* Chunks [begin, end), their infos read in one run, sorted into file order (the order the writer got them).
 * Free it. @return NULL after the message. */
static placed_chunk *file_order(const char *path, const tschunk_segment *seg, size_t begin, size_t end)
{
    size_t n = end - begin;
    int err = 0;
    placed_chunk *placed = malloc((n + 1) * sizeof *placed);
    tschunk_segment_chunk_info *infos = malloc((n + 1) * sizeof *infos);
    if (placed && infos) err = read_infos(path, seg, begin, n, infos);
    if (!placed || !infos) fail("out of memory");
    for (size_t c = 0; placed && infos && !err && c < n; c++) placed[c] = (placed_chunk){begin + c, infos[c]};
    if (placed && infos && !err) qsort(placed, n, sizeof *placed, by_file_position);
    free(infos);
    if (!infos || err) {
        free(placed);
        return NULL;
    }
    return placed;
}

/* Compare one series' chunks, in the order compress wrote them (file order), with the input. */
static int verify_series(const char *path, const tschunk_segment *seg, const input_series *s, size_t ordinal)
{
    size_t begin = 0, end = 0, at = 0;
    tschunk_segment_range(seg, (uint32_t)ordinal, INT64_MIN, INT64_MAX, &begin, &end);
    placed_chunk *order = file_order(path, seg, begin, end);
    if (!order) return 1;
    int rc = 0;
    for (size_t c = 0; !rc && c < end - begin; c++) {
        size_t n = decode_read_chunk(path, seg, order[c].index, &order[c].info);
        if (n == SIZE_MAX) { rc = 1; break; }
        for (size_t k = 0; k < n && !rc; k++, at++) {
            uint64_t bits;
            memcpy(&bits, &chunk_values[k], 8);
            if (at >= s->samples.n || s->samples.ts[at] != chunk_ts[k] || s->samples.bits[at] != bits)
                rc = fail("verify: series '%s' sample %zu differs", s->name, at);
        }
    }
    free(order);
    if (!rc && at != s->samples.n) rc = fail("verify: series '%s' holds %zu of %zu samples", s->name, at, s->samples.n);
    return rc;
}

/* compress --verify: read the segment at path back and compare every series, sample for sample. */
static int verify_written(const char *path, const series_table *t)
{
    tscf_reader r;
    if (tscf_open(&r, path)) { tscf_close(&r); return fail("%s", r.error); }
    tschunk_segment *seg = NULL;
    int rc = open_segment(path, r.data, r.size, &seg);
    for (size_t i = 0; !rc && i < t->n; i++) {
        size_t ordinal = tschunk_segment_find_series(seg, i);
        rc = tschunk_is_error(ordinal) ? fail("verify: series '%s' is missing", t->list[i].name)
                                       : verify_series(path, seg, &t->list[i], ordinal);
    }
    if (!rc) printf("  verify: all %zu series decode bit-for-bit identical\n", t->n);
    if (seg) tschunk_segment_close(seg);
    tscf_close(&r);
    return rc;
}

/* ---- reading -------------------------------------------------------------- */

/* Every checksum and structure, every chunk decoded against its index entry and every summary parsed: all of it
 * tschunk_segment_verify's (a second decode here only re-ran what it proves). */
int segment_verify(const options *o, const unsigned char *data, size_t size)
{
    const char *path = o->in;
    size_t bad = 0, err = tschunk_segment_verify(data, size, &bad);
    if (err) return fail("%s: broken segment: %s at byte %zu", path, tschunk_error_name(err), bad);
    tschunk_segment *seg;
    if ((err = tschunk_segment_open(&seg, data, size, TSCHUNK_SEGMENT_VERIFY, NULL)))
        return fail("%s: broken segment: %s", path, tschunk_error_name(err));
    tschunk_segment_info info;
    tschunk_segment_get_info(seg, &info);
    uint64_t live = info.samples - info.deleted;
    printf("%s: ok (segment v%u, %u series, %u chunk%s, %llu sample%s", path, info.format_version, info.series,
           info.chunks, plural(info.chunks), (unsigned long long)live, plural(live));
    if (info.deleted) printf(", %llu deleted", (unsigned long long)info.deleted);
    if (info.summary_blocks)
        printf(", %u block summar%s", info.summary_blocks, info.summary_blocks == 1 ? "y" : "ies");
    printf(")\n");
    tschunk_segment_close(seg);
    return 0;
}

/* The time range of chunk i's live samples into *first, *last (widening them): the record's own, or for a chunk with
 * deletions that of the samples left, from a decode (deletions at a chunk's ends narrow the range; a chunk with
 * none left adds nothing). @return 0, or 1 after the message. */
static int widen_live_range(const char *path, const tschunk_segment *seg, size_t i, const tschunk_segment_chunk_info *c,
                            int64_t *first, int64_t *last)
{
    int64_t lo = c->first_ts, hi = c->last_ts;
    if (c->deleted) {
        size_t n = decode_read_chunk(path, seg, i, c);
        if (n == SIZE_MAX) return 1;
        if (n == 0) return 0;
        lo = chunk_ts[0], hi = chunk_ts[n - 1];
    }
    if (lo < *first) *first = lo;
    if (hi > *last) *last = hi;
    return 0;
}

/* One line per series: name, id, chunks, live samples, their time range, chunk bytes (summaries apart). */
int segment_list(const options *o, const unsigned char *data, size_t size)
{
    const char *path = o->in;
    tschunk_segment *seg;
    if (open_segment(path, data, size, &seg)) return 1;
    tschunk_segment_info info;
    tschunk_segment_get_info(seg, &info);
    int unit = iso_unit(o, (int)info.ts_unit);
    ls_begin(o, unit);
    for (uint32_t ordinal = 0; ordinal < info.series; ordinal++) {
        ls_series row = {0};
        size_t begin, end, err;
        tschunk_segment_series(seg, ordinal, &row.id, &row.name, &row.name_len);
        tschunk_segment_range(seg, ordinal, INT64_MIN, INT64_MAX, &begin, &end);
        row.first = INT64_MAX, row.last = INT64_MIN, row.chunks = end - begin;
        for (size_t i = begin; i < end; i++) {
            tschunk_segment_chunk_info c;
            if ((err = tschunk_segment_chunk(seg, i, &c))) {
                tschunk_segment_close(seg);
                return fail_chunk(path, i, tschunk_error_name(err));
            }
            row.samples += c.count - c.deleted;
            row.bytes += c.ref.chunk_size + c.ref.summary_size;
            if (widen_live_range(path, seg, i, &c, &row.first, &row.last)) {
                tschunk_segment_close(seg);
                return 1;
            }
        }
        ls_row(o, unit, &row, ordinal == 0);
    }
    ls_end(o, info.series);
    tschunk_segment_close(seg);
    return 0;
}

/* A series named on the command line: by name, else by numeric id. @return its ordinal or an error. */
static size_t find_series_arg(const tschunk_segment *seg, const char *arg)
{
    size_t ordinal = tschunk_segment_find_series_name(seg, arg, strlen(arg));
    /* A lazy open reads the series table as the search reaches it: a damaged block is an error, not "absent". */
    if (tschunk_get_error_code(ordinal) != TSCHUNK_ERROR_BAD_PARAMETER) return ordinal;
    char *end;
    errno = 0;
    unsigned long long id = strtoull(arg, &end, 10);
    /* Digits only: strtoull would also take a sign (-1 as 2^64 - 1), and clamp what overflows to 2^64 - 1. */
    if (isdigit((unsigned char)*arg) && !*end && errno != ERANGE) ordinal = tschunk_segment_find_series(seg, id);
    return ordinal;
}

/* find_series_arg's error: the series is absent, or the part of the segment the search read is damaged. */
static int series_arg_error(const options *o, size_t err)
{
    if (tschunk_get_error_code(err) == TSCHUNK_ERROR_BAD_PARAMETER)
        return fail("%s: no series '%s'", o->in, o->series);
    return fail("%s: broken segment: %s", o->in, tschunk_error_name(err));
}

typedef struct {
    int64_t ts;
    uint64_t bits;
    size_t seq; /* file order: equal timestamps keep it */
} timed_sample;

static int by_time(const void *a, const void *b)
{
    const timed_sample *x = a, *y = b;
    if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

/*
 * cat's chunks, cut into groups that no sample crosses: a group ends before chunk k when every chunk from k on
 * starts after every chunk before k ends (index ranges; decode_read_chunk holds each chunk to its own). Each group
 * is printed in time order, ties in file order, as one sort of the whole series would, but holding one group's
 * samples: a series whose chunks follow each other holds one chunk's.
 */
typedef struct {
    const options *o;
    const tschunk_segment *seg;
    text_ctx *text;
    placed_chunk *chunks;   /* the series' chunks, index (time) order */
    int64_t *later_first;   /* [k]: the least first_ts of chunks k.. */
    timed_sample *merged;   /* a group of several chunks, sorted */
    size_t merged_cap;
} cat_state;

/* One chunk's live samples in [from, to], printed. @return 0 or 1 after the message. */
static int print_chunk_within(const char *path, const tschunk_segment *seg, const placed_chunk *c, text_ctx *t,
                              int64_t from, int64_t to)
{
    size_t n = decode_read_chunk(path, seg, c->index, &c->info);
    if (n == SIZE_MAX) return 1;
    for (size_t k = 0; k < n; k++) {
        uint64_t bits;
        memcpy(&bits, &chunk_values[k], 8);
        if (chunk_ts[k] >= from && chunk_ts[k] <= to && print_sample(t, chunk_ts[k], bits)) return 1;
    }
    return 0;
}

/* The group chunks[0 .. n - 1] (n > 1), merged: sorted into file order, decoded, sorted by time, printed. */
static int print_merged(cat_state *c, placed_chunk *chunks, size_t n)
{
    const options *o = c->o;
    size_t count = 0;
    qsort(chunks, n, sizeof *chunks, by_file_position);
    for (size_t k = 0; k < n; k++) {
        size_t got = decode_read_chunk(o->in, c->seg, chunks[k].index, &chunks[k].info);
        if (got == SIZE_MAX) return 1;
        if (count + got > c->merged_cap) {
            timed_sample *grown = realloc(c->merged, 2 * (count + got) * sizeof *grown);
            if (!grown) return fail("out of memory");
            c->merged = grown, c->merged_cap = 2 * (count + got);
        }
        for (size_t j = 0; j < got; j++) {
            if (chunk_ts[j] < o->from || chunk_ts[j] > o->to) continue;
            c->merged[count] = (timed_sample){chunk_ts[j], 0, count};
            memcpy(&c->merged[count++].bits, &chunk_values[j], 8);
        }
    }
    if (count) qsort(c->merged, count, sizeof *c->merged, by_time); /* merged is NULL when every sample was deleted */
    for (size_t i = 0; i < count; i++)
        if (print_sample(c->text, c->merged[i].ts, c->merged[i].bits)) return 1;
    return 0;
}

/* The infos of chunks [begin, end), and where later chunks start. @return 0, or 1 after the message. */
static int cat_read_index(cat_state *c, size_t begin, size_t end)
{
    size_t n = end - begin;
    c->chunks = malloc((n + 1) * sizeof *c->chunks);
    c->later_first = malloc((n + 1) * sizeof *c->later_first);
    if (!c->chunks || !c->later_first) return fail("out of memory");
    int rc = 0;
    for (size_t at = 0, m; !rc && at < n; at += m) { /* runs within an index block (64 entries) */
        tschunk_segment_chunk_info run[64];
        m = 64 - (begin + at) % 64;
        if (m > n - at) m = n - at;
        rc = read_infos(c->o->in, c->seg, begin + at, m, run);
        for (size_t k = 0; !rc && k < m; k++) c->chunks[at + k] = (placed_chunk){begin + at + k, run[k]};
    }
    c->later_first[n] = INT64_MAX;
    for (size_t k = n; !rc && k-- > 0;)
        c->later_first[k] = c->chunks[k].info.first_ts < c->later_first[k + 1] ? c->chunks[k].info.first_ts
                                                                               : c->later_first[k + 1];
    return rc;
}

/* The live samples in [from, to] of the n chunks read, in time order (overlapping chunks merged). A chunk that
 * does not decode ends the output there. */
static int cat_in_time_order(cat_state *c, size_t n)
{
    int rc = 0;
    int64_t ends = INT64_MIN; /* the latest last_ts of chunks 0 .. k (an index out of time order too) */
    for (size_t start = 0, k = 0; !rc && k < n; k++) {
        if (c->chunks[k].info.last_ts > ends) ends = c->chunks[k].info.last_ts;
        if (k + 1 < n && ends >= c->later_first[k + 1]) continue; /* a later chunk starts before this group ends */
        rc = k == start ? print_chunk_within(c->o->in, c->seg, &c->chunks[k], c->text, c->o->from, c->o->to)
                        : print_merged(c, &c->chunks[start], k + 1 - start);
        start = k + 1;
    }
    return rc;
}

/* The series cat prints: the one named, or without a name the segment's only one. @return 0, or 1 after the
 * message. */
static int cat_ordinal(const options *o, const tschunk_segment *seg, size_t *ordinal)
{
    tschunk_segment_info info;
    tschunk_segment_get_info(seg, &info);
    if (!o->series && info.series != 1)
        return fail("%s holds %u series: cat takes SERIES, a series name or its numeric id (ls lists them)", o->in,
                    info.series);
    *ordinal = o->series ? find_series_arg(seg, o->series) : 0;
    return tschunk_is_error(*ordinal) ? series_arg_error(o, *ordinal) : 0;
}

/* One series in [from, to] (inclusive) as `timestamp,value` lines, in time order. */
int segment_cat(const options *o, const unsigned char *data, size_t size)
{
    tschunk_segment *seg;
    if (open_segment_with(o->in, data, size, TSCHUNK_SEGMENT_LAZY, &seg)) return 1;
    size_t ordinal = 0, begin = 0, end = 0;
    int rc = cat_ordinal(o, seg, &ordinal);
    if (!rc) {
        /* Lazily opened, the range reads the series' index blocks, which may be damaged. */
        size_t err = tschunk_segment_range(seg, (uint32_t)ordinal, o->from, o->to, &begin, &end);
        if (err) rc = fail("%s: broken segment: %s", o->in, tschunk_error_name(err));
    }
    if (!rc) {
        tschunk_segment_info info;
        tschunk_segment_get_info(seg, &info);
        text_ctx t = {stdout, iso_unit(o, (int)info.ts_unit), o->iso, o->bits, NULL, 0};
        cat_state c = {o, seg, &t, NULL, NULL, NULL, 0};
        rc = cat_read_index(&c, begin, end);
        if (!rc) printf("timestamp,value\n");
        if (!rc) rc = cat_in_time_order(&c, end - begin);
        free(c.chunks);
        free(c.later_first);
        free(c.merged);
    }
    tschunk_segment_close(seg);
    return rc;
}

/* Every series: `timestamp,value` when the segment holds one, `series,timestamp,value` when several;
 * each series' chunks in the order they were written, so compress then decompress gives the input back
 * even where its time went backwards (cat answers in time order). */
int segment_decompress(const options *o, const unsigned char *data, size_t size, FILE *out)
{
    tschunk_segment *seg;
    if (open_segment(o->in, data, size, &seg)) return 1;
    tschunk_segment_info info;
    tschunk_segment_get_info(seg, &info);
    int several = info.series > 1, rc = 0;
    text_ctx t = {out, iso_unit(o, (int)info.ts_unit), o->iso, o->bits, NULL, 0};
    fprintf(out, several ? "series,timestamp,value\n" : "timestamp,value\n");
    for (uint32_t s = 0; s < info.series && !rc; s++) {
        char id_text[24];
        uint64_t id;
        size_t begin, end;
        tschunk_segment_series(seg, s, &id, &t.series, &t.series_len);
        if (!t.series_len) { /* unnamed: its id */
            t.series_len = (size_t)snprintf(id_text, sizeof id_text, "%llu", (unsigned long long)id);
            t.series = id_text;
        }
        if (!several) t.series = NULL;
        char *quoted = NULL; /* a name with a comma, a quote, ... as one CSV field, quoted once for all its lines */
        if (t.series && csv_needs_quotes(t.series, t.series_len)) {
            if (!(quoted = malloc(2 * t.series_len + 2))) { rc = fail("out of memory"); break; }
            t.series_len = csv_quote(t.series, t.series_len, quoted);
            t.series = quoted;
        }
        tschunk_segment_range(seg, s, INT64_MIN, INT64_MAX, &begin, &end);
        placed_chunk *order = file_order(o->in, seg, begin, end);
        if (!order) rc = 1;
        for (size_t k = 0; order && k < end - begin && !rc; k++)
            rc = print_chunk_within(o->in, seg, &order[k], &t, INT64_MIN, INT64_MAX);
        free(order);
        free(quoted);
    }
    tschunk_segment_close(seg);
    return rc;
}

/* Best of 5 full decodes, deleted samples dropped as readers do. */
static double time_decode(const tschunk_segment *seg, uint32_t chunks, uint64_t samples)
{
    double best = 0;
    for (int rep = 0; rep < 5 && samples; rep++) {
        double t0 = now_s();
        for (uint32_t i = 0; i < chunks; i++) tschunk_segment_decode(seg, i, chunk_ts, chunk_values, TSCHUNK_MAX_SAMPLES);
        double ns = (now_s() - t0) * 1e9 / (double)samples;
        if (rep == 0 || ns < best) best = ns;
    }
    return best;
}

int segment_stats(const char *path, const unsigned char *data, size_t size, stats *st)
{
    memset(st, 0, sizeof *st);
    st->format = FORMAT_NATIVE;
    tschunk_segment *seg;
    if (open_segment(path, data, size, &seg)) return 1;
    tschunk_segment_info info;
    tschunk_segment_get_info(seg, &info);
    int rc = 0;
    for (uint32_t i = 0; i < info.chunks && !rc; i++) {
        tschunk_segment_chunk_info c;
        size_t n = decode_chunk(path, seg, i, NULL);
        if (n == SIZE_MAX || tschunk_segment_chunk(seg, i, &c)) { rc = 1; break; }
        st->chunks++;
        st->samples += n;
        st->summary_bytes += c.ref.summary_size;
        rc = chunk_stats(st, FORMAT_NATIVE, c.ref.chunk, c.ref.chunk_size, n);
    }
    st->bytes = size;
    st->native_bytes = size - st->summary_bytes; /* the two encodings are compared without summaries */
    if (!rc) st->decode_ns = time_decode(seg, info.chunks, st->samples);
    tschunk_segment_close(seg);
    return rc;
}

/* ---- quantiles and delete ----------------------------------------------------- */

/* Every finite live value with from <= ts <= to, sorted, for --exact. A chunk that does not decode is a failure,
 * not a chunk left out: the summaries answered without it (until 0.57.4 the exact values were printed without its
 * samples). @return 0, or 1 after the message. */
static int exact_values(const tschunk_segment *seg, size_t begin, size_t end, const options *o, value_list *out)
{
    for (size_t i = begin; i < end; i++) {
        size_t n = decode_chunk(o->in, seg, i, NULL);
        if (n == SIZE_MAX) return 1;
        for (size_t j = 0; j < n; j++)
            if (chunk_ts[j] >= o->from && chunk_ts[j] <= o->to && isfinite(chunk_values[j]) &&
                values_push(out, chunk_values[j]))
                return fail("out of memory");
    }
    if (out->n) qsort(out->v, out->n, sizeof *out->v, cmp_dbl);
    return 0;
}

/* An empty sketch with the summaries' mapping, or --mapping/--alpha when the segment has none. */
static tschunk_sketch *empty_sketch(const tschunk_segment *seg, size_t begin, size_t end, const options *o)
{
    tschunk_sketch *acc = NULL;
    for (size_t i = begin; i < end; i++) {
        tschunk_segment_chunk_info c;
        tschunk_summary_info info;
        if (tschunk_segment_chunk(seg, i, &c) || !c.ref.summary ||
            tschunk_summary_parse(c.ref.summary, c.ref.summary_size, &info))
            continue;
        if (tschunk_sketch_decode_new(&acc, info.sketch, info.sketch_size, NULL, NULL) == 0) {
            tschunk_sketch_clear(acc);
            return acc;
        }
    }
    tschunk_sketch_options so = {o->mapping, o->alpha, 0, 0, {NULL, NULL, NULL}, 0};
    return tschunk_sketch_create(&acc, &so) == 0 ? acc : NULL;
}

/* The series a command names (SERIES or --all) and its index positions. @return 0 or 1. */
static int series_scope(const options *o, const tschunk_segment *seg, uint32_t *ordinal, size_t *begin, size_t *end)
{
    tschunk_segment_info info;
    tschunk_segment_get_info(seg, &info);
    if (o->series && o->all) return fail("%s: quantiles takes SERIES or --all, not both", o->in);
    if (!o->series && !o->all && info.series > 1)
        return fail("%s holds %u series: quantiles takes SERIES or --all", o->in, info.series);
    *ordinal = TSCHUNK_SEGMENT_ALL_SERIES;
    *begin = 0;
    *end = info.chunks;
    if (!o->series) return 0;
    size_t found = find_series_arg(seg, o->series);
    if (tschunk_is_error(found)) return series_arg_error(o, found);
    *ordinal = (uint32_t)found;
    size_t err = tschunk_segment_range(seg, *ordinal, INT64_MIN, INT64_MAX, begin, end);
    return err ? fail("%s: broken segment: %s", o->in, tschunk_error_name(err)) : 0;
}

typedef struct {
    const tschunk_segment *seg;
    uint32_t ordinal;
    int64_t from, to;
} segment_query;

static size_t run_segment_query(const void *query, tschunk_sketch *acc, tschunk_range_stats *st)
{
    const segment_query *q = query;
    return tschunk_segment_range_merge(q->seg, q->ordinal, q->from, q->to, acc, st);
}

int segment_quantiles(const options *o, const unsigned char *data, size_t size)
{
    tschunk_segment *seg;
    if (open_segment_with(o->in, data, size, o->series ? TSCHUNK_SEGMENT_LAZY : 0, &seg)) return 1;
    uint32_t ordinal = TSCHUNK_SEGMENT_ALL_SERIES;
    size_t begin = 0, end = 0;
    int rc = series_scope(o, seg, &ordinal, &begin, &end);
    tschunk_sketch *acc = rc ? NULL : empty_sketch(seg, begin, end, o);
    tschunk_sketch *scratch = rc ? NULL : empty_sketch(seg, begin, end, o);
    if (!rc && (!acc || !scratch)) rc = fail("out of memory");
    if (!rc) rc = mapping_conflict(o, acc);
    tschunk_range_stats st;
    segment_query query = {seg, ordinal, o->from, o->to};
    double us[2];
    size_t err = rc ? 0 : range_query_times(run_segment_query, &query, acc, scratch, &st, us);
    if (!rc && tschunk_is_error(err))
        rc = name_damaged_chunk(o->in, seg, begin, end, err) ? 1 : fail("%s: %s", o->in, tschunk_error_name(err));
    /* The range lookup leaves a series' chunks outside [from, to] unvisited: they are outside too. */
    uint64_t visited = rc ? 0 : st.chunks_from_summaries + st.chunks_decoded + st.chunks_skipped;
    if (!rc && visited < end - begin) st.chunks_skipped += end - begin - visited;
    value_list exact = {0};
    if (!rc && o->exact) rc = exact_values(seg, begin, end, o, &exact);
    if (!rc) print_quantiles(o, &st, us, acc, exact.v, exact.n);
    free(exact.v);
    tschunk_sketch_free(acc);
    tschunk_sketch_free(scratch);
    tschunk_segment_close(seg);
    return rc;
}

/* Delete one series' samples in [--from, --to] (inclusive): the segment is written again, atomically. */
int segment_delete(const options *o, const unsigned char *data, size_t size)
{
    if (!o->series || !o->from_set || !o->to_set)
        return fail("delete needs FILE SERIES --from T --to T (inclusive, in the file's timestamp unit)");
    tschunk_segment *seg;
    if (open_segment(o->in, data, size, &seg)) return 1;
    size_t ordinal = find_series_arg(seg, o->series);
    uint64_t deleted = 0;
    int rc = tschunk_is_error(ordinal) ? series_arg_error(o, ordinal) : 0;
    const char *path = rc ? NULL : writable_path(o->in); /* in place: through a link, to its file */
    if (!rc && !path) rc = 1;
    output_file out = {0};
    if (!rc) rc = output_create(&out, path, path);
    size_t err = rc ? 0 : tschunk_segment_delete_io(seg, &out.io, (uint32_t)ordinal, o->from, o->to, &deleted);
    if (!rc && err) {
        size_t begin = 0, end = 0;
        tschunk_segment_range(seg, (uint32_t)ordinal, o->from, o->to, &begin, &end);
        name_damaged_chunk(o->in, seg, begin, end, err);
        rc = fail("%s: delete failed: %s (the file is unchanged)", o->in, error_reason(err));
    }
    if (!rc && deleted) rc = output_commit(&out);
    else if (path) output_discard(&out); /* nothing newly deleted: the file stays as it was */
    if (!rc)
        printf("%s: deleted %llu samples of '%s' in [%lld, %lld]\n", o->in, (unsigned long long)deleted, o->series,
               (long long)o->from, (long long)o->to);
    tschunk_segment_close(seg);
    return rc;
}

/* Make the deletes final: the segment written again (to -o OUT, else in place) without its deleted samples. */
int segment_compact(const options *o, const unsigned char *data, size_t size)
{
    const char *out = o->out ? o->out : writable_path(o->in); /* in place: through a link, to its file */
    if (!out) return 1;
    if (!strcmp(out, "-")) return fail("compact writes a file, not stdout");
    tschunk_segment *seg;
    if (open_segment(o->in, data, size, &seg)) return 1;
    tschunk_segment_compact_stats st;
    output_file file;
    if (output_create(&file, out, out)) {
        tschunk_segment_close(seg);
        return 1;
    }
    size_t bytes = tschunk_segment_compact_io(seg, &file.io, &st);
    if (tschunk_is_error(bytes)) name_damaged_chunk(o->in, seg, 0, chunk_count(seg), bytes);
    tschunk_segment_close(seg);
    if (tschunk_is_error(bytes)) {
        output_discard(&file);
        return fail("%s: compact failed: %s (%s is unchanged)", o->in, error_reason(bytes), out);
    }
    if (output_commit(&file)) return 1;
    printf("%s -> %s: %llu chunk%s copied, %llu encoded again without their deleted samples, %llu dropped (emptied); "
           "%llu deleted sample%s gone; %zu -> %zu bytes\n",
           o->in, out, (unsigned long long)st.chunks_copied, plural(st.chunks_copied),
           (unsigned long long)st.chunks_rewritten, (unsigned long long)st.chunks_dropped,
           (unsigned long long)st.samples_dropped, plural(st.samples_dropped), size, bytes);
    return 0;
}

/* A segment's summaries in words ("none", "cubic sketches of relative accuracy 0.01 (gamma ..., index offset 0)":
 * %.17g tells every mapping apart), in buf. */
static const char *summaries_in_words(const tschunk_segment_info *i, char *buf, size_t size)
{
    tschunk_sketch *sketch;
    tschunk_sketch_stats st;
    if (!i->has_summaries) return "none";
    size_t err = tschunk_sketch_create_mapping(&sketch, i->summary_mapping, i->summary_gamma, i->summary_offset, NULL);
    if (err) return tschunk_get_error_code(err) == TSCHUNK_ERROR_ALLOCATION ? "summaries (out of memory to say which)"
                                                                            : "summaries of a mapping no sketch takes";
    tschunk_sketch_get_stats(sketch, &st);
    tschunk_sketch_free(sketch);
    snprintf(buf, size, "%s sketches of relative accuracy %.6g (gamma %.17g, index offset %.17g)",
             mapping_name(st.mapping), st.relative_accuracy, st.gamma, st.index_offset);
    return buf;
}

/* Why the library refused to merge (NOT_MERGEABLE): the first source unlike the first one, in words; it takes
 * segments of one timestamp unit whose summaries are alike (or all none). @return 1 after the message, 0 for
 * none found (the caller's message says what the library did). */
static int say_unlike(const char *const *paths, tschunk_segment *const *segs, size_t n, const char *out)
{
    tschunk_segment_info first, other;
    char a[160], b[160];
    tschunk_segment_get_info(segs[0], &first);
    for (size_t k = 1; k < n; k++) {
        tschunk_segment_get_info(segs[k], &other);
        if (other.ts_unit != first.ts_unit)
            return fail("merge takes segments of one timestamp unit: %s counts %s, %s %s (%s is unchanged)",
                        paths[0], unit_name((int)first.ts_unit), paths[k], unit_name((int)other.ts_unit), out);
        const char *mine = summaries_in_words(&first, a, sizeof a), *theirs = summaries_in_words(&other, b, sizeof b);
        if (strcmp(mine, theirs) != 0)
            return fail("merge takes segments whose summaries are alike: %s has %s, %s has %s (%s is unchanged)",
                        paths[0], mine, paths[k], theirs, out);
    }
    return 0;
}

/* Merge segments (their deletes made final) into out. data[k]/sizes[k]: the whole of paths[k]. */
int segment_merge(const char *out, const char *const *paths, const unsigned char *const *data, const size_t *sizes,
                  size_t n, const tschunk_segment_merge_options *m)
{
    tschunk_segment **segs = calloc(n, sizeof *segs);
    if (!segs) return fail("out of memory");
    int rc = 0;
    size_t total = 0;
    for (size_t k = 0; k < n && !rc; k++) {
        rc = open_segment(paths[k], data[k], sizes[k], &segs[k]);
        total += sizes[k];
    }
    tschunk_segment_compact_stats st;
    output_file file = {0};
    if (!rc) rc = output_create(&file, out, out);
    size_t bytes = rc ? 0 : tschunk_segment_merge_io((const tschunk_segment *const *)segs, n, &file.io, m, &st);
    if (!rc && tschunk_is_error(bytes)) output_discard(&file);
    if (!rc && tschunk_get_error_code(bytes) == TSCHUNK_ERROR_NOT_MERGEABLE) rc = say_unlike(paths, segs, n, out);
    if (!rc && tschunk_is_error(bytes)) {
        for (size_t k = 0; k < n && !name_damaged_chunk(paths[k], segs[k], 0, chunk_count(segs[k]), bytes); k++)
            continue;
        rc = fail("merge failed: %s (%s is unchanged)", error_reason(bytes), out);
    }
    if (!rc) rc = output_commit(&file);
    if (!rc)
        printf("%zu segment%s -> %s: %llu chunk%s copied, %llu encoded again%s, %llu dropped (emptied); %llu chunk%s "
               "written; %llu deleted sample%s gone; %zu -> %zu bytes\n",
               n, plural(n), out, (unsigned long long)st.chunks_copied, plural(st.chunks_copied),
               (unsigned long long)st.chunks_rewritten,
               m->samples_per_chunk ? " (cut again)" : " without their deleted samples",
               (unsigned long long)st.chunks_dropped, (unsigned long long)st.chunks_written,
               plural(st.chunks_written), (unsigned long long)st.samples_dropped, plural(st.samples_dropped), total,
               bytes);
    for (size_t k = 0; k < n; k++) tschunk_segment_close(segs[k]);
    free(segs);
    return rc;
}

/* ---- import-prom -------------------------------------------------------------- */

/* Each Prometheus chunk's samples into chunk_ts/chunk_bits. @return the count, or SIZE_MAX after the message. */
static size_t next_prom_chunk(const options *o, tscf_reader *r, int *got)
{
    const unsigned char *chunk;
    size_t size;
    if ((*got = tscf_next(r, &chunk, &size)) != 1) {
        if (*got < 0) fail("%s: %s", o->in, r->error);
        return *got < 0 ? SIZE_MAX : 0;
    }
    size_t n = tschunk_prom_decode(chunk, size, chunk_ts, chunk_values, TSCHUNK_MAX_SAMPLES);
    if (tschunk_is_error(n)) {
        fail_chunk(o->in, r->chunks_seen - 1, tschunk_error_name(n));
        return SIZE_MAX;
    }
    for (size_t i = 0; i < n; i++) memcpy(&chunk_bits[i], &chunk_values[i], 8);
    return n;
}

/* A tschunk_segment_io that keeps nothing and counts the size: what a segment would weigh. */
static int count_write_at(void *ctx, const void *data, size_t n, uint64_t at)
{
    (void)data;
    uint64_t *end = ctx;
    if (at + n > *end) *end = at + n;
    return 0;
}

static int no_read_at(void *ctx, void *data, size_t n, uint64_t at)
{
    (void)ctx, (void)data, (void)n, (void)at;
    return -1; /* without summaries the writer reads nothing back */
}

typedef struct {
    uint64_t bytes, samples, chunks;
} import_result;

/* import-prom's segment of r, read from its start: one native chunk of `codec` per Prometheus chunk (split only
 * where time goes backwards), one series named after the file; to o->out, or only sized (`size_only`). */
static int import_prom_to(const options *o, tscf_reader *r, uint32_t codec, int size_only, import_result *res)
{
    int got = 1;
    size_t n;
    int64_t min = INT64_MAX;
    tscf_rewind(r);
    while ((n = next_prom_chunk(o, r, &got)) != SIZE_MAX && got == 1) /* the header wants the minimum first */
        for (size_t i = 0; i < n; i++) min = chunk_ts[i] < min ? chunk_ts[i] : min;
    if (n == SIZE_MAX) return 1;
    tscf_rewind(r);
    tschunk_segment_options so = {.min_ts = min == INT64_MAX ? 0 : min, .ts_unit = TSCHUNK_UNIT_MS};
    tschunk_segment_writer *w;
    uint64_t counted = 0;
    tschunk_segment_io counter = {count_write_at, no_read_at, &counted};
    output_file out = {0};
    if (!size_only && output_create(&out, o->out, o->out)) return 1;
    size_t created = tschunk_segment_writer_create_io(&w, size_only ? &counter : &out.io, &so);
    if (created) {
        output_discard(&out);
        return fail("cannot create %s: %s", size_only ? "a segment in memory" : o->out, error_reason(created));
    }
    char name[256];
    name_after_file(o->in, name, sizeof name);
    segment_sink sink = {w, 0, 0, 0, 0};
    int rc = tschunk_segment_writer_add_series(w, 0, name, strlen(name)) ? fail("cannot name the series") : 0;
    res->samples = 0;
    while (!rc && (n = next_prom_chunk(o, r, &got)) != SIZE_MAX && got == 1) {
        res->samples += n;
        rc = encode_chunks(FORMAT_NATIVE, codec, chunk_ts, chunk_bits, n, n ? (uint32_t)n : 1, 0, NULL, add_to_segment,
                           &sink, NULL);
    }
    if (n == SIZE_MAX) rc = 1;
    if (rc) {
        tschunk_segment_writer_abort(w);
        output_discard(&out);
        return rc;
    }
    size_t bytes = tschunk_segment_writer_finish(w);
    if (tschunk_is_error(bytes)) {
        output_discard(&out);
        return fail("%s not written: %s", o->out, error_reason(bytes));
    }
    if (!size_only && output_commit(&out)) return 1;
    res->bytes = bytes;
    res->chunks = sink.chunks;
    return 0;
}

int segment_import_prom(const options *o, tscf_reader *r)
{
    import_result res;
    if (import_prom_to(o, r, o->codec, 0, &res)) return 1;
    printf("%s -> %s: %llu sample%s, %llu Prometheus XOR chunk%s -> %llu native chunk%s, %zu -> %llu bytes\n", o->in,
           o->out, (unsigned long long)res.samples, plural(res.samples), (unsigned long long)r->chunks_seen,
           plural(r->chunks_seen), (unsigned long long)res.chunks, plural(res.chunks), r->size,
           (unsigned long long)res.bytes);
    return 0;
}

int prom_as_segment_bytes(const char *path, tscf_reader *r, uint64_t *bytes)
{
    options o;
    memset(&o, 0, sizeof o);
    o.in = path;
    import_result res;
    if (import_prom_to(&o, r, TSCHUNK_CODEC_TSC2, 1, &res)) return 1;
    *bytes = res.bytes;
    return 0;
}
