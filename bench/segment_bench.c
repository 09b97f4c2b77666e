/*
 * Segment figures (README "Sketch, summary and segment figures"): a segment of 10,000 series, one
 * 120-sample chunk each, the five synthetic workloads in turn. Write and
 * full-scan throughput, open and one-series lookup time, and the bytes the
 * container adds to the chunks it holds.
 *
 *   segment_bench [--quick] [--samples N]   (--quick: 1,000 series, 3 repetitions;
 *                                            --samples: per chunk, 120 by default, up to 1024)
 */
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tschunk.h"
#include "workloads.h"
#include "timing.h"

#define MAX_CHUNK_SAMPLES 1024
static size_t chunk_samples = 120;

static volatile double sink;

typedef struct {
    unsigned char *bytes;
    size_t size;
} encoded_chunk;

static size_t encode_all(encoded_chunk *chunks, size_t series)
{
    size_t total = 0;
    for (size_t i = 0; i < series; i++) {
        wl_series s;
        wl_synthetic(&s, (int)(i % WL_SYNTHETIC_COUNT), chunk_samples, i + 1);
        chunks[i].bytes = malloc(TSCHUNK_BOUND(chunk_samples));
        if (!chunks[i].bytes) abort();
        chunks[i].size = tschunk_encode(chunks[i].bytes, TSCHUNK_BOUND(chunk_samples), s.ts,
                                        (const double *)(const void *)s.bits, s.n, NULL);
        if (tschunk_is_error(chunks[i].size)) abort();
        total += chunks[i].size;
        wl_free(&s);
    }
    return total;
}

static size_t write_segment(const char *path, const encoded_chunk *chunks, size_t series)
{
    tschunk_segment_options opts;
    memset(&opts, 0, sizeof opts);
    opts.min_ts = INT64_C(1700000000000) - 10;
    tschunk_segment_writer *w;
    if (tschunk_segment_writer_create(&w, path, &opts)) abort();
    for (size_t i = 0; i < series; i++) {
        char name[64];
        int len = snprintf(name, sizeof name, "node_metric{instance=\"host-%zu\"}", i);
        if (tschunk_segment_writer_add_series(w, i * 7919 + 1, name, (size_t)len) ||
            tschunk_segment_writer_add_chunk(w, i * 7919 + 1, chunks[i].bytes, chunks[i].size, NULL, 0))
            abort();
    }
    size_t size = tschunk_segment_writer_finish(w);
    if (tschunk_is_error(size)) abort();
    return size;
}

static unsigned char *read_file(const char *path, size_t size)
{
    unsigned char *buf = malloc(size);
    FILE *f = fopen(path, "rb");
    if (!buf || !f || fread(buf, 1, size, f) != size) abort();
    fclose(f);
    return buf;
}

/* Open (flags: 0 or TSCHUNK_SEGMENT_LAZY), then decode every chunk of every series (checksums verified as
 * touched), their infos read `run` at a time: 1 through tschunk_segment_chunk, more through tschunk_segment_chunks. */
static double full_scan(const unsigned char *file, size_t size, unsigned flags, size_t run)
{
    static int64_t ts[MAX_CHUNK_SAMPLES];
    static double v[MAX_CHUNK_SAMPLES];
    tschunk_segment_chunk_info infos[64];
    tschunk_segment *seg;
    if (run < 1 || run > 64 || tschunk_segment_open(&seg, file, size, flags, NULL)) abort();
    tschunk_segment_info info;
    tschunk_segment_get_info(seg, &info);
    double acc = 0;
    for (uint32_t i = 0; i < info.chunks; i += (uint32_t)run) {
        size_t n_infos = info.chunks - i < run ? info.chunks - i : run;
        if (run == 1 ? tschunk_segment_chunk(seg, i, infos) : tschunk_segment_chunks(seg, i, n_infos, infos)) abort();
        for (size_t k = 0; k < n_infos; k++) {
            size_t n = tschunk_decode(infos[k].ref.chunk, infos[k].ref.chunk_size, ts, v, MAX_CHUNK_SAMPLES);
            if (tschunk_is_error(n)) abort();
            acc += v[n - 1];
        }
    }
    tschunk_segment_close(seg);
    return acc;
}

/* Find one series and the bytes of its first chunk, then close. */
static double lookup_and_close(tschunk_segment *seg, uint64_t id)
{
    size_t ordinal = tschunk_segment_find_series(seg, id), begin, end;
    if (tschunk_is_error(ordinal) || tschunk_segment_range(seg, (uint32_t)ordinal, INT64_MIN, INT64_MAX, &begin, &end))
        abort();
    tschunk_segment_chunk_info c;
    if (begin == end || tschunk_segment_chunk(seg, begin, &c)) abort();
    double got = (double)c.ref.chunk_size;
    tschunk_segment_close(seg);
    return got;
}

/* Open (flags: 0 or TSCHUNK_SEGMENT_LAZY), find one series and the bytes of its chunks, close. */
static double open_and_lookup(const unsigned char *file, size_t size, uint64_t id, unsigned flags)
{
    tschunk_segment *seg;
    if (tschunk_segment_open(&seg, file, size, flags, NULL)) abort();
    return lookup_and_close(seg, id);
}

/* The same from the file's path: tschunk_segment_open_file maps it (and close unmaps it) each time. */
static double open_file_and_lookup(const char *path, uint64_t id)
{
    tschunk_segment *seg;
    if (tschunk_segment_open_file(&seg, path, TSCHUNK_SEGMENT_LAZY, NULL)) abort();
    return lookup_and_close(seg, id);
}

/* Compaction figures: `series` series (at most the segment's), `damaged` of them (every step-th) with one sample
 * deleted, through one delete each (not timed); then the median time of `reps` compactions, in ns. */
static double compact_time(const encoded_chunk *chunks, size_t series, size_t damaged, int reps,
                           tschunk_segment_compact_stats *st)
{
    char path[64], out[80];
    snprintf(path, sizeof path, "/tmp/tschunk-compact-bench-%ld.tseg", (long)getpid());
    snprintf(out, sizeof out, "%s.compacted", path);
    size_t size = write_segment(path, chunks, series);
    for (size_t k = 0; k < damaged; k++) {
        unsigned char *file = read_file(path, size);
        tschunk_segment *seg;
        size_t ordinal = k * (series / damaged);
        tschunk_segment_chunk_info c;
        if (tschunk_segment_open(&seg, file, size, 0, NULL) || tschunk_segment_chunk(seg, ordinal, &c) ||
            tschunk_segment_delete(seg, path, (uint32_t)ordinal, c.last_ts, c.last_ts, NULL))
            abort();
        tschunk_segment_close(seg);
        free(file);
        struct stat sb;
        if (stat(path, &sb)) abort();
        size = (size_t)sb.st_size;
    }
    unsigned char *file = read_file(path, size);
    tschunk_segment *seg;
    if (tschunk_segment_open(&seg, file, size, 0, NULL)) abort();
    double t[7];
    for (int r = 0; r < reps; r++) {
        double t0 = now_ns();
        if (tschunk_is_error(tschunk_segment_compact(seg, out, st))) abort();
        t[r] = now_ns() - t0;
    }
    tschunk_segment_close(seg);
    free(file);
    remove(path);
    remove(out);
    return median(t, reps);
}

int main(int argc, char **argv)
{
    int quick = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) quick = 1;
        else if (!strcmp(argv[i], "--samples") && i + 1 < argc) chunk_samples = (size_t)atoi(argv[++i]);
    }
    if (chunk_samples < 2 || chunk_samples > MAX_CHUNK_SAMPLES) {
        fprintf(stderr, "--samples takes 2..%d\n", MAX_CHUNK_SAMPLES);
        return 2;
    }
    size_t series = quick ? 1000 : 10000;
    int reps = quick ? 3 : 7;
    encoded_chunk *chunks = calloc(series, sizeof *chunks);
    if (!chunks) abort();
    size_t chunk_bytes = encode_all(chunks, series);
    double samples = (double)series * (double)chunk_samples;
    char path[64];
    snprintf(path, sizeof path, "/tmp/tschunk-segment-bench-%ld.tseg", (long)getpid());

    double write_t[7], scan_t[7], lazy_scan1_t[7], lazy_scan_t[7], open_t[7], lookup_t[7];
    double lazy_open_t[7], lazy_lookup_t[7];
    size_t file_size = 0;
    for (int r = 0; r < reps; r++) {
        double t0 = now_ns();
        file_size = write_segment(path, chunks, series);
        write_t[r] = now_ns() - t0;
    }
    unsigned char *file = read_file(path, file_size);
    double file_lookup_t[7];
    for (int r = 0; r < reps; r++) {
        double t0 = now_ns();
        sink = full_scan(file, file_size, 0, 1);
        scan_t[r] = now_ns() - t0;
        t0 = now_ns();
        sink = full_scan(file, file_size, TSCHUNK_SEGMENT_LAZY, 1);
        lazy_scan1_t[r] = now_ns() - t0;
        t0 = now_ns();
        sink = full_scan(file, file_size, TSCHUNK_SEGMENT_LAZY, 64);
        lazy_scan_t[r] = now_ns() - t0;
        t0 = now_ns();
        tschunk_segment *seg;
        if (tschunk_segment_open(&seg, file, file_size, 0, NULL)) abort();
        open_t[r] = now_ns() - t0;
        tschunk_segment_close(seg);
        t0 = now_ns();
        for (size_t q = 0; q < 100; q++) sink = open_and_lookup(file, file_size, (q * 97 % series) * 7919 + 1, 0);
        lookup_t[r] = (now_ns() - t0) / 100;
        t0 = now_ns();
        for (size_t q = 0; q < 1000; q++) {
            if (tschunk_segment_open(&seg, file, file_size, TSCHUNK_SEGMENT_LAZY, NULL)) abort();
            tschunk_segment_close(seg);
        }
        lazy_open_t[r] = (now_ns() - t0) / 1000;
        t0 = now_ns();
        for (size_t q = 0; q < 1000; q++)
            sink = open_and_lookup(file, file_size, (q * 97 % series) * 7919 + 1, TSCHUNK_SEGMENT_LAZY);
        lazy_lookup_t[r] = (now_ns() - t0) / 1000;
        t0 = now_ns();
        for (size_t q = 0; q < 1000; q++) sink = open_file_and_lookup(path, (q * 97 % series) * 7919 + 1);
        file_lookup_t[r] = (now_ns() - t0) / 1000;
    }
    remove(path);
    double write_ns = median(write_t, reps), scan_ns = median(scan_t, reps);
    double open_ns = median(open_t, reps), lookup_ns = median(lookup_t, reps);
    printf("Segment of %zu series x %zu samples (five synthetic workloads in turn), median of %d:\n\n", series,
           chunk_samples, reps);
    printf("| figure | value |\n|---|---:|\n");
    printf("| write (add + finish, fsync included) | %.2f M samples/s |\n", samples / write_ns * 1e3);
    printf("| full scan (open + decode every chunk) | %.2f M samples/s |\n", samples / scan_ns * 1e3);
    printf("| the same, lazy open, one tschunk_segment_chunk a chunk | %.2f M samples/s |\n",
           samples / median(lazy_scan1_t, reps) * 1e3);
    printf("| the same, lazy open, tschunk_segment_chunks 64 at a time | %.2f M samples/s |\n",
           samples / median(lazy_scan_t, reps) * 1e3);
    printf("| open | %.3f ms |\n", open_ns / 1e6);
    printf("| open + find one series + its first chunk | %.3f ms (%.2f%% of a full scan) |\n", lookup_ns / 1e6,
           100.0 * lookup_ns / scan_ns);
    double lazy_open_ns = median(lazy_open_t, reps), lazy_lookup_ns = median(lazy_lookup_t, reps);
    printf("| lazy open (TSCHUNK_SEGMENT_LAZY) | %.2f us |\n", lazy_open_ns / 1e3);
    printf("| lazy open + find one series + its first chunk | %.2f us (%.3f%% of a full scan) |\n",
           lazy_lookup_ns / 1e3, 100.0 * lazy_lookup_ns / scan_ns);
    printf("| the same from the file's path (tschunk_segment_open_file: mmap, page faults, munmap) | %.2f us |\n",
           median(file_lookup_t, reps) / 1e3);
    printf("| chunk bytes | %zu (%.3f B/sample) |\n", chunk_bytes, (double)chunk_bytes / samples);
    printf("| segment bytes | %zu (%.3f B/sample) |\n", file_size, (double)file_size / samples);
    printf("| container overhead | %.2f%% (%.3f B/sample, %.1f B/chunk) |\n",
           100.0 * (double)(file_size - chunk_bytes) / (double)chunk_bytes, (double)(file_size - chunk_bytes) / samples,
           (double)(file_size - chunk_bytes) / (double)series);
    size_t name_bytes = 0;
    for (size_t i = 0; i < series; i++) {
        char name[64];
        name_bytes += (size_t)snprintf(name, sizeof name, "node_metric{instance=\"host-%zu\"}", i);
    }
    printf("| container overhead without the series names (%zu B) | %.2f%% (%.1f B/chunk) |\n", name_bytes,
           100.0 * (double)(file_size - chunk_bytes - name_bytes) / (double)chunk_bytes,
           (double)(file_size - chunk_bytes - name_bytes) / (double)series);
    tschunk_segment_compact_stats st;
    double copy_ns = compact_time(chunks, series, 0, reps, &st);
    printf("| compact, no deletions (%llu chunks copied; fsync included) | %.2f M samples/s |\n",
           (unsigned long long)st.chunks_copied, samples / copy_ns * 1e3);
    size_t small = series < 1000 ? series : 1000;
    double rewrite_ns = compact_time(chunks, small, small, reps, &st);
    printf("| compact, a sample deleted in each of %llu chunks (each encoded again) | %.2f M samples/s |\n",
           (unsigned long long)st.chunks_rewritten, (double)small * (double)chunk_samples / rewrite_ns * 1e3);
    free(file);
    for (size_t i = 0; i < series; i++) free(chunks[i].bytes);
    free(chunks);
    return 0;
}
