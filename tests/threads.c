/*
 * `make tsan`: threads that share one open segment, under ThreadSanitizer (not a Criterion test: Criterion's runner
 * does not start under TSan, its inheritable arena refused). The README promises that any number of threads may
 * read through one handle; an open segment writes only its records-checked bits and, lazily opened, its index
 * blocks' maxima, with relaxed atomics. Four threads ask every series' ranges, decode every chunk and merge every
 * series' summaries (and one sketch they all read, merged from and encoded), in different orders, on a fresh full
 * open and a fresh lazy open of a segment with summaries, block summaries and a delete; then four threads encode
 * and decode in every codec (codec_pass). Each answer must equal the one-thread answer, and TSan must see no race
 * (it exits 66 when it does).
 * usage: threads DIR (where the segment files go)
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "tschunk.h"

enum { SERIES = 200, CHUNKS = 3, SAMPLES = 120, THREADS = 4 };

typedef struct {
    uint64_t decoded; /* the bits of every sample decoded, summed: one number per series */
    size_t begin, end; /* tschunk_segment_range over a middle window */
    double p90;        /* tschunk_segment_range_merge over the same window, with the shared sketch merged in */
    uint64_t from_summaries;
    uint64_t shared_bytes; /* the shared sketch encoded, hashed */
} answer;

typedef struct {
    const tschunk_segment *seg;
    const tschunk_sketch *shared; /* one sketch every thread reads: merged from, encoded */
    const answer *want; /* NULL: fill got */
    answer *got;
    unsigned start;
    unsigned wrong;
} job;

static int64_t window_from(uint32_t s) { return (int64_t)(s % 7) * 15000 * 40; }
static int64_t window_to(uint32_t s) { return window_from(s) + 15000 * (SAMPLES * CHUNKS / 2); }

static uint64_t hash_bytes(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211u;
    return h;
}

static size_t ask(const tschunk_segment *seg, const tschunk_sketch *shared, uint32_t s, tschunk_sketch *acc,
                  answer *a)
{
    unsigned char encoded[8192];
    static _Thread_local int64_t ts[SAMPLES];
    static _Thread_local double v[SAMPLES];
    size_t begin, end, err = tschunk_segment_range(seg, s, INT64_MIN, INT64_MAX, &begin, &end);
    memset(a, 0, sizeof *a);
    for (size_t i = begin; !err && i < end; i++) {
        size_t n = tschunk_segment_decode(seg, i, ts, v, SAMPLES);
        if (tschunk_is_error(n)) return n;
        for (size_t k = 0; k < n; k++) {
            uint64_t bits;
            memcpy(&bits, &v[k], sizeof bits);
            a->decoded += bits ^ (uint64_t)ts[k];
        }
    }
    tschunk_range_stats rs = {0};
    tschunk_sketch_clear(acc);
    if (!err) err = tschunk_segment_range(seg, s, window_from(s), window_to(s), &a->begin, &a->end);
    if (!err) err = tschunk_segment_range_merge(seg, s, window_from(s), window_to(s), acc, &rs);
    if (!err) err = tschunk_sketch_merge(acc, shared);
    if (!err) err = tschunk_sketch_quantile(acc, 0.9, &a->p90);
    size_t n = err ? 0 : tschunk_sketch_encode(shared, encoded, sizeof encoded, 0);
    if (tschunk_is_error(n)) return n;
    a->shared_bytes = hash_bytes(14695981039346656037u, encoded, n);
    a->from_summaries = rs.chunks_from_summaries;
    return err;
}

/* Every sketch here: the summaries', and each thread's own for its queries. @return NULL when out of memory. */
static tschunk_sketch *cubic_sketch(void)
{
    tschunk_sketch *sk;
    tschunk_sketch_options so = {TSCHUNK_MAPPING_CUBIC, 0.01, 0, 0, {0, 0, 0}, 0};
    return tschunk_sketch_create(&sk, &so) ? NULL : sk;
}

static void *walk(void *arg)
{
    job *j = arg;
    tschunk_sketch *acc = cubic_sketch();
    j->wrong += !acc;
    if (!acc) return NULL;
    for (uint32_t k = 0; k < SERIES; k++) {
        uint32_t s = (j->start + k * 7) % SERIES; /* 7 is prime to SERIES: each series once */
        answer a;
        if (tschunk_is_error(ask(j->seg, j->shared, s, acc, &a))) j->wrong++;
        else if (!j->want) j->got[s] = a;
        else j->wrong += memcmp(&a, &j->want[s], sizeof a) != 0;
    }
    tschunk_sketch_free(acc);
    return NULL;
}

/* SERIES series of CHUNKS chunks with summaries (block summaries of two chunks), then samples of series 3 deleted. */
static int write_segment(const char *path, const char *deleted_path)
{
    tschunk_sketch *sk = cubic_sketch();
    tschunk_sketch_stats st;
    if (!sk) return 1;
    tschunk_sketch_get_stats(sk, &st);
    tschunk_segment_options o = {.has_summaries = 1, .summary_mapping = st.mapping, .summary_gamma = st.gamma,
                                 .summary_offset = st.index_offset, .ts_unit = TSCHUNK_UNIT_MS,
                                 .summary_block_chunks = 2};
    tschunk_segment_writer *w;
    if (tschunk_segment_writer_create(&w, path, &o)) return 1;
    uint64_t rng = 42;
    for (uint64_t id = 0; id < SERIES; id++) {
        char name[32];
        int len = snprintf(name, sizeof name, "series_%llu", (unsigned long long)id);
        if (tschunk_segment_writer_add_series(w, id, name, (size_t)len)) return 1;
        for (int c = 0; c < CHUNKS; c++) {
            unsigned char chunk[TSCHUNK_BOUND(SAMPLES)], summary[4096];
            tschunk_encoder enc;
            tschunk_encoder_init(&enc, chunk, sizeof chunk, NULL);
            tschunk_encoder_set_summary(&enc, sk);
            for (int i = c * SAMPLES; i < (c + 1) * SAMPLES; i++) {
                rng = rng * 6364136223846793005u + 1442695040888963407u;
                tschunk_append(&enc, i * 15000LL + (int64_t)(rng >> 61), (double)(id + (rng >> 54)) * 0.25);
            }
            size_t size = tschunk_encoder_finish(&enc);
            size_t summary_size = tschunk_encoder_write_summary(&enc, summary, sizeof summary);
            if (tschunk_is_error(size) || tschunk_is_error(summary_size) ||
                tschunk_segment_writer_add_chunk(w, id, chunk, size, summary, summary_size))
                return 1;
        }
    }
    tschunk_sketch_free(sk);
    tschunk_segment *seg;
    if (tschunk_is_error(tschunk_segment_writer_finish(w)) || tschunk_segment_open_file(&seg, path, 0, NULL)) return 1;
    uint64_t deleted = 0;
    size_t err = tschunk_segment_delete(seg, deleted_path, 3, 15000 * 100, 15000 * 200, &deleted);
    tschunk_segment_close(seg);
    return err || deleted == 0;
}

/* Encoders and decoders keep no state between calls and none in the library: every thread encodes every series in
 * the three codecs (codec 2 with a summary), decodes them one at a time and 16 chunks a call, and hashes what it
 * got; one thread's hashes are the reference. */
enum { LANES = 16 };

static uint64_t codec_pass(uint32_t s, tschunk_sketch *sk)
{
    static _Thread_local int64_t ts[LANES * SAMPLES], back_ts[LANES * SAMPLES];
    static _Thread_local double v[LANES * SAMPLES], back_v[LANES * SAMPLES];
    static _Thread_local unsigned char chunks[LANES][TSCHUNK_BOUND(SAMPLES)];
    unsigned char summary[4096];
    const void *ptrs[LANES];
    size_t sizes[LANES];
    uint64_t rng = s + 1, h = 14695981039346656037u;
    for (size_t i = 0; i < LANES * SAMPLES; i++) {
        rng = rng * 6364136223846793005u + 1442695040888963407u;
        ts[i] = (int64_t)i * 15000 + (int64_t)(rng >> 60);
        v[i] = (double)(rng >> 50) / 100;
    }
    for (uint32_t codec = 0; codec < 3; codec++) {
        tschunk_encoder_options opts = {codec == 1 ? TSCHUNK_CODEC_GORILLA : TSCHUNK_CODEC_TSC2, 0, 0, 0};
        for (size_t c = 0; c < LANES; c++) {
            const int64_t *cts = ts + c * SAMPLES;
            const double *cv = v + c * SAMPLES;
            if (codec == 2) {
                sizes[c] = tschunk_prom_encode(chunks[c], sizeof chunks[c], cts, cv, SAMPLES, NULL);
            } else {
                tschunk_encoder enc;
                tschunk_encoder_init(&enc, chunks[c], sizeof chunks[c], &opts);
                if (codec == 0) tschunk_encoder_set_summary(&enc, sk);
                tschunk_append_many(&enc, cts, cv, SAMPLES, NULL);
                sizes[c] = tschunk_encoder_finish(&enc);
                size_t summary_size = codec == 0 ? tschunk_encoder_write_summary(&enc, summary, sizeof summary) : 0;
                if (tschunk_is_error(summary_size)) return 0;
                h = hash_bytes(h, summary, summary_size);
            }
            if (tschunk_is_error(sizes[c])) return 0;
            ptrs[c] = chunks[c];
            h = hash_bytes(h, chunks[c], sizes[c]);
        }
        size_t one = codec == 2 ? tschunk_prom_decode(ptrs[0], sizes[0], back_ts, back_v, SAMPLES)
                                : tschunk_decode(ptrs[0], sizes[0], back_ts, back_v, SAMPLES);
        size_t all = codec == 2 ? tschunk_prom_decode_chunks(ptrs, sizes, LANES, back_ts, back_v, LANES * SAMPLES)
                                : tschunk_decode_chunks(ptrs, sizes, LANES, back_ts, back_v, LANES * SAMPLES);
        if (one != SAMPLES || all != LANES * SAMPLES || memcmp(back_ts, ts, sizeof ts) || memcmp(back_v, v, sizeof v))
            return 0;
    }
    return h;
}

typedef struct {
    const uint64_t *want; /* NULL: fill got */
    uint64_t *got;
    unsigned start, wrong;
} codec_job;

static void *codec_walk(void *arg)
{
    codec_job *j = arg;
    tschunk_sketch *sk = cubic_sketch();
    j->wrong += !sk;
    if (!sk) return NULL;
    for (uint32_t k = 0; k < SERIES / 4; k++) {
        uint32_t s = (j->start + k * 7) % (SERIES / 4); /* 7 is prime to SERIES / 4 */
        uint64_t h = codec_pass(s, sk);
        if (!j->want) j->got[s] = h;
        j->wrong += h == 0 || (j->want && h != j->want[s]);
    }
    tschunk_sketch_free(sk);
    return NULL;
}

static unsigned codecs_in_threads(void)
{
    static uint64_t want[SERIES / 4], unused[SERIES / 4];
    codec_job reference = {NULL, want, 0, 0}, jobs[THREADS];
    codec_walk(&reference);
    pthread_t threads[THREADS];
    for (unsigned t = 0; t < THREADS; t++) {
        jobs[t] = (codec_job){want, unused, t * 13, 0};
        if (pthread_create(&threads[t], NULL, codec_walk, &jobs[t])) return 1;
    }
    unsigned wrong = reference.wrong;
    for (unsigned t = 0; t < THREADS; t++) {
        pthread_join(threads[t], NULL);
        wrong += jobs[t].wrong;
    }
    printf("threads: %u threads encode and decode %u series in three codecs: %u wrong\n", THREADS, SERIES / 4,
           wrong);
    return wrong;
}

int main(int argc, char **argv)
{
    char path[4096], deleted_path[4096];
    if (argc != 2) return 2;
    snprintf(path, sizeof path, "%s/threads.tseg", argv[1]);
    snprintf(deleted_path, sizeof deleted_path, "%s/threads_deleted.tseg", argv[1]);
    if (write_segment(path, deleted_path)) {
        fprintf(stderr, "threads: cannot write %s\n", path);
        return 1;
    }
    static answer want[SERIES], unused[SERIES];
    unsigned wrong = 0;
    tschunk_sketch *shared_sketch = cubic_sketch();
    if (!shared_sketch) return 1;
    for (int i = 1; i <= 1000; i++) tschunk_sketch_add(shared_sketch, 1000.0 / i);
    for (unsigned lazy = 0; lazy < 2; lazy++) {
        tschunk_segment *one, *shared;
        if (tschunk_segment_open_file(&one, deleted_path, 0, NULL) ||
            tschunk_segment_open_file(&shared, deleted_path, lazy ? TSCHUNK_SEGMENT_LAZY : 0, NULL))
            return 1;
        job reference = {one, shared_sketch, NULL, want, 0, 0};
        walk(&reference); /* one thread, a full open */
        pthread_t threads[THREADS];
        job jobs[THREADS];
        for (unsigned t = 0; t < THREADS; t++) {
            jobs[t] = (job){shared, shared_sketch, want, unused, t * (SERIES / THREADS), 0};
            if (pthread_create(&threads[t], NULL, walk, &jobs[t])) return 1;
        }
        for (unsigned t = 0; t < THREADS; t++) {
            pthread_join(threads[t], NULL);
            wrong += jobs[t].wrong;
        }
        unsigned summarized = 0; /* series whose window took a chunk from its summary: the answers say something */
        for (uint32_t s = 0; s < SERIES; s++) summarized += want[s].from_summaries > 0 && want[s].p90 > 0;
        wrong += reference.wrong + (summarized < SERIES / 2);
        printf("threads: %u threads on one %s open, %u series each (%u with chunks from summaries): %u wrong\n",
               THREADS, lazy ? "lazy" : "full", SERIES, summarized, wrong);
        tschunk_segment_close(one);
        tschunk_segment_close(shared);
    }
    tschunk_sketch_free(shared_sketch);
    wrong += codecs_in_threads();
    return wrong != 0;
}
