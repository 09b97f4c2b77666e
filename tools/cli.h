/* What the CLI's commands share: options, samples in memory, chunk encoding and decoding, text output. */
#ifndef TSCHUNK_CLI_H
#define TSCHUNK_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "file.h"
#include "tschunk.h"

#define DEFAULT_SAMPLES_PER_CHUNK 1024

typedef struct {
    const char *in, *out;
    const char *series; /* cat, quantiles, delete: the second positional argument */
    long samples_per_chunk;
    int samples_per_chunk_set;
    long max_chunk_bytes;
    int unit, unit_set; /* --ts-unit: the unit date-times convert to and the segment is labelled with */
    int json, iso, bits, verify;
    int summary, exact, all, wide;
    tschunk_mapping_kind mapping;
    double alpha;
    int mapping_set;      /* --mapping or --alpha given */
    long summary_block;   /* --summary-block N: chunks per stored block summary (0: the library's 64) */
    const char *qlist;
    int64_t from, to;
    int from_set, to_set;
    const char *from_text, *to_text; /* a date-time bound, converted once the file's unit is known */
    int bounds_unit;                  /* with --from or --to: the file's timestamp unit once open (-1: not known) */
    uint32_t codec; /* native chunks: TSCHUNK_CODEC_TSC2 (default) or TSCHUNK_CODEC_GORILLA */
    unsigned given; /* the options on the command line, a bit each (tschunk.c option_names) */
} options;

/* "s" for a count other than one: "1 chunk", "2 chunks". */
const char *plural(uint64_t n);
/* Print "tschunk: message" on stderr. @return 1, the exit status of a failed command. */
__attribute__((format(printf, 1, 2))) int fail(const char *fmt, ...);
/* "PATH: chunk N is damaged: WHY", the one message every command gives for a chunk it cannot read. @return 1. */
int fail_chunk(const char *path, unsigned long long chunk, const char *why);
/* s as a JSON string, quoted and escaped, on stdout. */
void print_json_string(const char *s);
/* The same of len bytes: a byte outside well-formed UTF-8 is written as \u00XX (its Latin-1 reading), so the output
 * stays valid JSON whatever a series name holds. */
void print_json_bytes(const char *s, size_t len);
/* v as a JSON number (%.17g) in buf (32 bytes), or "null" when it is not finite: JSON has no NaN nor infinity. */
const char *json_number(char buf[32], double v);
/* A name as one cell of a tab-separated table on stdout: control bytes (a tab, a line break, NUL) as \xHH. */
void print_table_name(const char *s, size_t len);
/* Why a library call failed: errno's text for GENERIC (a file operation), else the error's name. */
const char *error_reason(size_t err);
double now_s(void);
unsigned uvarint_size(uint64_t v);

/* A CSV input: a file, or stdin for "-". A regular file compressed by gzip (as the public data sets come), bzip2,
 * xz or zstd, known by its magic bytes, is read through `TOOL -dc`, a child process, so that the CLI links no
 * compression library; so is stdin whose first byte is gzip's or xz's. The tool's exit status is checked at the
 * end, since a truncated or corrupt file reads as a shorter one until then. */
typedef struct {
    FILE *file;
    int unpacker_pid;     /* the child unpacking, or 0 */
    const char *unpacker; /* its name */
} input_file;

/* @return 0, or 1 after the message. */
int input_open(input_file *in, const char *path);
/* Closes it; with `complete` (the input read to its end), 1 after the message when the unpacker failed.
 * @return 0 or 1. */
int input_close(input_file *in, const char *path, int complete);

/* Samples in memory (timestamps and value bit patterns). */
typedef struct {
    int64_t *ts;
    uint64_t *bits;
    size_t n, cap;
} sample_set;

int samples_push(sample_set *s, int64_t ts, uint64_t bits);
void samples_free(sample_set *s);

/* Called with each chunk encode_chunks cuts. @return 0, or non-zero to stop. */
typedef int (*chunk_sink)(void *ctx, const unsigned char *chunk, size_t size, uint32_t samples,
                          const unsigned char *summary, size_t summary_size);

/*
 * Cut samples [0, n) into chunks of format (FORMAT_NATIVE with codec, or
 * FORMAT_PROM): a chunk ends when full or where time goes backwards (nothing
 * dropped, nothing reordered). summary: the sketch that summarizes each
 * native chunk, or NULL. @return 0 or 1 after printing the problem.
 */
int encode_chunks(int format, uint32_t codec, const int64_t *ts, const uint64_t *bits, size_t n, uint32_t per_chunk,
                  uint32_t max_bytes, tschunk_sketch *summary, chunk_sink emit, void *ctx, double *encode_s);

/* One series' samples, for encode_best_s. */
typedef struct {
    const int64_t *ts;
    const uint64_t *bits;
    size_t n;
} series_view;

/*
 * The encode time of a warm pass over every series, chunks discarded: the best of up to 5 passes (about half a
 * second at most), `first_s` (the pass that wrote the file) among them. That pass pays page faults and cold caches
 * that an ingest path's steady state does not, several times the library's cost on a small file. *passes: how many.
 */
double encode_best_s(int format, uint32_t codec, uint32_t per_chunk, uint32_t max_bytes, tschunk_sketch *summary,
                     const series_view *series, size_t count, double first_s, int *passes);

/* One chunk's samples, decoded: decode_any and tschunk_segment_decode write here. */
extern int64_t chunk_ts[TSCHUNK_MAX_SAMPLES];
extern double chunk_values[TSCHUNK_MAX_SAMPLES];
extern uint64_t chunk_bits[TSCHUNK_MAX_SAMPLES];

size_t decode_any(int format, const unsigned char *chunk, size_t size);
/* n chunks of one file, one after the other, into chunk_ts/chunk_values (at most TSCHUNK_MAX_SAMPLES in all):
 * codec-1 and Prometheus chunks are decoded side by side, as a query over many chunks would. */
size_t decode_many(int format, const void *const *chunks, const size_t *sizes, size_t n);

/* `[series,]timestamp,value` lines. */
typedef struct {
    FILE *out;
    int unit, iso, bits;
    const char *series; /* printed first when not NULL */
    size_t series_len;
} text_ctx;

/* One `timestamp,value` line (`series,` first when named). @return 0, or 1 after a write error's message. */
int print_sample(void *ctx, int64_t ts, uint64_t bits);

/* What stats reports. */
typedef struct {
    uint64_t samples, chunks, bytes, ts_bits, value_bits;
    uint64_t native_bytes, prom_bytes; /* the same samples, chunk for chunk, in each format */
    uint64_t native_chunk_bytes, prom_chunk_bytes; /* the same, the chunks alone (no container, no length prefix) */
    uint64_t native_chunks;
    uint64_t summary_bytes; /* summary blobs, included in bytes */
    double decode_ns;
    int format;
    unsigned codecs; /* native chunks: bit c set when a chunk of codec c was seen */
} stats;

/* Add one decoded chunk (samples in chunk_ts/chunk_values) to st, with its size in the other format. */
int chunk_stats(stats *st, int format, const unsigned char *chunk, size_t size, size_t n);

int cmp_dbl(const void *a, const void *b);
/* Values for --exact: pushed as decoded, sorted once at the end. */
typedef struct {
    double *v;
    size_t n, cap;
} value_list;

/* @return 0, or -1 when memory runs out (the list is freed and stays empty). */
int values_push(value_list *l, double v);
/* Where to write the output file `path`, which the CLI replaces through a temporary file renamed over it: the
 * file a symbolic link names (the link stays a link), else path. NULL after a message when it is a device, a
 * FIFO, a socket or a directory (renamed over as root, /dev/null would become a file), a link to nothing, or a new
 * file whose directory is missing or takes no files (0.57.3: said before the input is read). */
const char *writable_path(const char *path);
/* Where the output goes: out, or with --verify out + ".verify." + pid, where the file is written, read back, and only
 * then renamed to out, so that out never holds a file that did not verify (nor loses the one it held). NULL after a
 * message when that name does not fit buf. */
const char *staged_path(char *buf, size_t cap, const char *out, int verify);
/* After tsc_commit_file's (or tscf_commit's) result: 0, or 1 after a message naming out (not written, or written
 * but its directory not synced). */
int committed(int commit_rc, const char *out);
/* After --verify's result rc: staged renamed to out when rc is 0 (else removed). @return rc, or 1 after a message. */
int publish_staged(const char *staged, const char *out, int rc);
/* The DDSketch mapping's name ("logarithmic", "cubic", ...). */
const char *mapping_name(tschunk_mapping_kind kind);
/* @return 0 and *out when s names a mapping, else -1. */
int mapping_from_name(const char *s, tschunk_mapping_kind *out);
/* The unit --iso prints a file's timestamps in: its own, with a note on stderr when it has none (read as ms). */
int iso_unit(const options *o, int unit);
/* One series as ls lists it. */
typedef struct {
    const char *name;
    size_t name_len;
    uint64_t id, chunks, samples, bytes;
    int64_t first, last; /* the live samples' range; first > last when there are none */
} ls_series;
/* ls's listing: a tab-separated table, or with --json one object ({"file", "ts_unit", "series": [{"name", "id",
 * "chunks", "samples", "first_ts", "last_ts", ("first", "last" with --iso), "bytes"}, ...]}). */
void ls_begin(const options *o, int unit);
void ls_row(const options *o, int unit, const ls_series *s, int first_row);
void ls_end(const options *o, size_t rows);
/* `first\tlast` on stdout: integers, or with --iso date-times in unit (ls's time range columns). */
void print_time_range(const options *o, int unit, int64_t first, int64_t last);
/* quantiles: with --mapping or --alpha, 0 when acc (from the file's summaries, or made from those options) has that
 * mapping; else 1 after saying that the summaries decide it (they were ignored without a word). */
int mapping_conflict(const options *o, const tschunk_sketch *acc);
/* One range query into acc (a segment's or a chunk file's), for range_query_times. */
typedef size_t (*range_query_fn)(const void *query, tschunk_sketch *acc, tschunk_range_stats *st);
/* The query's time in us: its first run, into acc (cold: the file's pages are touched for the first time), and
 * the best of a few more into scratch while they take under 50 ms in all (warm: what a query over data already in
 * memory costs; -1 when not run again). */
size_t range_query_times(range_query_fn run, const void *query, tschunk_sketch *acc, tschunk_sketch *scratch,
                         tschunk_range_stats *st, double us[2]);
/* What a range query merged (st, us: range_query_times'), then the q column (with exact values, the exact one and
 * the relative error). */
void print_quantiles(const options *o, const tschunk_range_stats *st, const double us[2], const tschunk_sketch *acc,
                     const double *exact, size_t nexact);

/* Segment commands (segment_cmd.c). data/size: the whole file. */
int segment_compress(const options *o);
int segment_verify(const options *o, const unsigned char *data, size_t size);
int segment_list(const options *o, const unsigned char *data, size_t size);
int segment_cat(const options *o, const unsigned char *data, size_t size);
int segment_decompress(const options *o, const unsigned char *data, size_t size, FILE *out);
int segment_stats(const char *path, const unsigned char *data, size_t size, stats *st);
int segment_quantiles(const options *o, const unsigned char *data, size_t size);
int segment_delete(const options *o, const unsigned char *data, size_t size);
int segment_compact(const options *o, const unsigned char *data, size_t size);
int segment_merge(const char *out, const char *const *paths, const unsigned char *const *data, const size_t *sizes,
                  size_t n, const tschunk_segment_merge_options *m);
/* import-prom: r is an open Prometheus file; -o gets a segment of one series named after it. */
int segment_import_prom(const options *o, tscf_reader *r);
/* The bytes of the segment `import-prom` (codec 2) would write for the Prometheus file at path, open in r. @return 0
 * or 1 after the message. */
int prom_as_segment_bytes(const char *path, tscf_reader *r, uint64_t *bytes);


#endif
