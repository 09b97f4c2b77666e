/*
 * tschunk_segment_compact and tschunk_segment_merge: segments written again
 * through the writer (format v3, whatever the sources' versions) with their
 * deletes made final. tschunk_segment_delete only records tombstones, every
 * sample stays in its chunk; here a chunk without deletions is copied as it
 * is, summary included; a chunk with some is decoded without them and
 * encoded again with its own codec, its summary recomputed from the samples
 * left; a chunk left empty is dropped. The new segment has no tombstones, so
 * its stored block summaries answer for every chunk again. Every series keeps
 * its id and name, even one left without chunks (deleting samples is not
 * dropping a series). Chunks are added in index order (series id, then first
 * timestamp, then source), the order whose index costs the fewest bytes.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>

#include "format.h"

/* Chunk infos read per tschunk_segment_chunks call: one index block. */
#define RUN TSC_SEG_BLOCK

/* One source: its series ids by ordinal, and a cursor over its chunks in index order. */
typedef struct {
    const tschunk_segment *seg;
    uint64_t *ids;
    tschunk_segment_chunk_info run[RUN];
    size_t next, run_at, run_len; /* next: the index position of run[run_at] */
} source;

typedef struct {
    source *sources;
    size_t nsources;
    tschunk_allocator allocator;
    tschunk_segment_writer *w;
    tschunk_sketch *sketch; /* the summary of a chunk encoded again (segments with summaries) */
    int64_t *ts;            /* a chunk's live samples, then its bytes and summary encoded again */
    double *values;
    uint8_t *chunk, *summary;
    size_t capacity, summary_capacity; /* samples; summary bytes */
    tschunk_segment_compact_stats *stats;
    /* Chunks cut again (samples_per_chunk): the open chunk, of series open_id, in cut (TSCHUNK_BOUND bytes). */
    uint32_t samples_per_chunk, codec;
    tschunk_encoder enc;
    uint8_t *cut;
    uint64_t open_id;
    int open;
} compactor;

static void *cp_alloc(const compactor *cp, size_t size) { return cp->allocator.alloc(cp->allocator.opaque, size); }

/* A caller's allocator need not take NULL. */
static void cp_free(const compactor *cp, void *p)
{
    if (p) cp->allocator.free(cp->allocator.opaque, p);
}

static void release_samples(compactor *cp)
{
    cp_free(cp, cp->ts);
    cp_free(cp, cp->values);
    cp_free(cp, cp->chunk);
    cp->ts = NULL, cp->values = NULL, cp->chunk = NULL, cp->capacity = 0;
}

/* Room for a chunk of `count` samples: sized by the largest chunk with deletions met, not TSCHUNK_MAX_SAMPLES. */
static size_t reserve_samples(compactor *cp, size_t count)
{
    if (count <= cp->capacity) return 0;
    release_samples(cp);
    cp->ts = cp_alloc(cp, count * sizeof *cp->ts);
    cp->values = cp_alloc(cp, count * sizeof *cp->values);
    cp->chunk = cp_alloc(cp, TSCHUNK_BOUND(count));
    if (!cp->ts || !cp->values || !cp->chunk) {
        release_samples(cp);
        return TSC_ERROR(ALLOCATION);
    }
    cp->capacity = count;
    return 0;
}

static size_t reserve_summary(compactor *cp, size_t size)
{
    if (size <= cp->summary_capacity) return 0;
    cp_free(cp, cp->summary);
    cp->summary = cp_alloc(cp, size);
    cp->summary_capacity = cp->summary ? size : 0;
    return cp->summary ? 0 : TSC_ERROR(ALLOCATION);
}

/* The summary blob of the chunk enc just finished, into cp->summary. @return its size or an error. */
static size_t write_summary(compactor *cp, const tschunk_encoder *enc)
{
    size_t err = reserve_summary(cp, tschunk_encoder_summary_bound(enc));
    return err ? err : tschunk_encoder_write_summary(enc, cp->summary, cp->summary_capacity);
}

/* The chunk enc holds in `chunk`, finished, with its summary, added to the writer under series id. */
static size_t add_encoded(compactor *cp, tschunk_encoder *enc, const uint8_t *chunk, uint64_t id)
{
    size_t size = tschunk_encoder_finish(enc);
    size_t summary_size = tsc_is_error(size) || !cp->sketch ? 0 : write_summary(cp, enc);
    if (tsc_is_error(size) || tsc_is_error(summary_size)) return tsc_is_error(size) ? size : summary_size;
    cp->stats->chunks_written++;
    return tschunk_segment_writer_add_chunk(cp->w, id, chunk, size, summary_size ? cp->summary : NULL, summary_size);
}

/* Chunk i of src, which has deletions: its live samples encoded again (same codec, summary recomputed), or
 * nothing when none is left. */
static size_t rewrite_chunk(compactor *cp, const source *src, size_t i, const tschunk_segment_chunk_info *c)
{
    tschunk_chunk_info info;
    size_t err = tschunk_chunk_info_get(c->ref.chunk, c->ref.chunk_size, &info);
    if (!err) err = reserve_samples(cp, c->count);
    size_t n = err ? err : tschunk_segment_decode(src->seg, i, cp->ts, cp->values, cp->capacity);
    if (tsc_is_error(n)) return n;
    cp->stats->samples_dropped += c->count - n;
    if (n == 0) {
        cp->stats->chunks_dropped++;
        return 0;
    }
    tschunk_encoder_options opts = {info.codec, 0, 0, 0};
    tschunk_encoder enc;
    err = tschunk_encoder_init(&enc, cp->chunk, TSCHUNK_BOUND(n), &opts);
    if (!err && cp->sketch) err = tschunk_encoder_set_summary(&enc, cp->sketch);
    if (!err) err = tschunk_append_many(&enc, cp->ts, cp->values, n, NULL);
    cp->stats->chunks_rewritten++;
    return err ? err : add_encoded(cp, &enc, cp->chunk, src->ids[c->ordinal]);
}

/* Chunks cut again: the open chunk finished and added. */
static size_t close_cut(compactor *cp)
{
    if (!cp->open) return 0;
    cp->open = 0;
    return add_encoded(cp, &cp->enc, cp->cut, cp->open_id);
}

/* Chunks cut again: a new chunk of series id (the encoder restarted after the first, which keeps codec 2's
 * reading of the series' values; a series change begins afresh). */
static size_t open_cut(compactor *cp, uint64_t id, int same_series)
{
    size_t cap = TSCHUNK_BOUND(cp->samples_per_chunk), err;
    if (same_series) {
        err = tschunk_encoder_restart(&cp->enc, cp->cut, cap);
    } else {
        tschunk_encoder_options opts = {cp->codec, cp->samples_per_chunk, 0, 0};
        err = tschunk_encoder_init(&cp->enc, cp->cut, cap, &opts);
        if (!err && cp->sketch) err = tschunk_encoder_set_summary(&cp->enc, cp->sketch);
    }
    cp->open = !err;
    cp->open_id = id;
    return err;
}

/* Chunks cut again: chunk i of src's live samples appended to its series' open chunk, closing it when full or
 * when time goes back. */
static size_t cut_chunk(compactor *cp, const source *src, size_t i, const tschunk_segment_chunk_info *c)
{
    uint64_t id = src->ids[c->ordinal];
    size_t err = reserve_samples(cp, c->count), done = 0;
    size_t n = err ? err : tschunk_segment_decode(src->seg, i, cp->ts, cp->values, cp->capacity);
    if (tsc_is_error(n)) return n;
    cp->stats->samples_dropped += c->count - n;
    if (n == 0) cp->stats->chunks_dropped++;
    else cp->stats->chunks_rewritten++;
    int same_series = cp->open && cp->open_id == id;
    if (cp->open && !same_series && (err = close_cut(cp))) return err;
    while (done < n) {
        if (!cp->open && (err = open_cut(cp, id, same_series))) return err;
        size_t appended = 0;
        err = tschunk_append_many(&cp->enc, cp->ts + done, cp->values + done, n - done, &appended);
        done += appended;
        if (!err) break;
        if (tschunk_get_error_code(err) != TSCHUNK_ERROR_CHUNK_FULL &&
            tschunk_get_error_code(err) != TSCHUNK_ERROR_OUT_OF_ORDER)
            return err;
        if ((err = close_cut(cp))) return err;
        same_series = 1;
    }
    return 0;
}

static size_t copy_chunk(compactor *cp, const source *src, const tschunk_segment_chunk_info *c)
{
    cp->stats->chunks_copied++;
    cp->stats->chunks_written++;
    return tschunk_segment_writer_add_chunk(cp->w, src->ids[c->ordinal], c->ref.chunk, c->ref.chunk_size,
                                            c->ref.summary, c->ref.summary_size);
}

/* The source's chunk under its cursor, reading the next run of infos when the last is used up; NULL at the end. */
static const tschunk_segment_chunk_info *current_chunk(source *src, size_t *err)
{
    if (src->run_at == src->run_len) {
        size_t left = src->seg->info.chunks - src->next;
        if (!left) return NULL;
        src->run_len = left < RUN ? left : RUN;
        src->run_at = 0;
        *err = tschunk_segment_chunks(src->seg, src->next, src->run_len, src->run);
        if (*err) return NULL;
    }
    return &src->run[src->run_at];
}

/* A source's chunk under its cursor, as the merge orders them: by series id, then first timestamp, then source. */
typedef struct {
    uint64_t id;
    int64_t first_ts;
    size_t source;
} chunk_head;

static int head_before(const chunk_head *a, const chunk_head *b)
{
    if (a->id != b->id) return a->id < b->id;
    if (a->first_ts != b->first_ts) return a->first_ts < b->first_ts;
    return a->source < b->source;
}

/* heap[at] moved down to its place in the min-heap heap[0, n). */
static void sift_down(chunk_head *heap, size_t n, size_t at)
{
    chunk_head moving = heap[at];
    for (size_t child; (child = 2 * at + 1) < n; at = child) {
        if (child + 1 < n && head_before(&heap[child + 1], &heap[child])) child++;
        if (!head_before(&heap[child], &moving)) break;
        heap[at] = heap[child];
    }
    heap[at] = moving;
}

/* Source k's chunk under its cursor into *h. @return 1, or 0 at its end or on an error (*err set). */
static int source_head(compactor *cp, size_t k, chunk_head *h, size_t *err)
{
    const tschunk_segment_chunk_info *c = current_chunk(&cp->sources[k], err);
    if (!c) return 0;
    *h = (chunk_head){cp->sources[k].ids[c->ordinal], c->first_ts, k};
    return 1;
}

/* Every chunk of every source, in index order across them: the sources' cursors in a min-heap, so that a merge of
 * hundreds of segments takes log n comparisons a chunk, not n. */
static size_t add_chunks(compactor *cp)
{
    chunk_head *heap = cp_alloc(cp, (cp->nsources + 1) * sizeof *heap);
    if (!heap) return TSC_ERROR(ALLOCATION);
    size_t n = 0, err = 0;
    for (size_t k = 0; k < cp->nsources && !err; k++) n += (size_t)source_head(cp, k, &heap[n], &err);
    for (size_t i = n / 2; i-- > 0;) sift_down(heap, n, i);
    while (n && !err) {
        source *best = &cp->sources[heap[0].source];
        const tschunk_segment_chunk_info *c = &best->run[best->run_at];
        if (cp->samples_per_chunk) err = cut_chunk(cp, best, best->next, c);
        else if (c->deleted) err = rewrite_chunk(cp, best, best->next, c);
        else err = copy_chunk(cp, best, c);
        best->next++, best->run_at++;
        if (!err && !source_head(cp, heap[0].source, &heap[0], &err)) heap[0] = heap[--n];
        sift_down(heap, n, 0);
    }
    cp_free(cp, heap);
    return err ? err : close_cut(cp);
}

/* A series' name in the sources that hold it: the first non-empty one; another non-empty one is NOT_MERGEABLE. */
static size_t name_series(compactor *cp, uint64_t id, const uint32_t *at)
{
    const char *name = NULL;
    size_t name_len = 0;
    for (size_t k = 0; k < cp->nsources; k++) {
        const char *other;
        size_t other_len;
        const source *src = &cp->sources[k];
        if (at[k] >= src->seg->info.series || src->ids[at[k]] != id) continue;
        size_t err = tschunk_segment_series(src->seg, at[k], NULL, &other, &other_len);
        if (err) return err;
        if (name_len && other_len && (other_len != name_len || memcmp(other, name, name_len)))
            return TSC_ERROR(NOT_MERGEABLE);
        if (!name_len) name = other, name_len = other_len;
    }
    return tschunk_segment_writer_add_series(cp->w, id, name, name_len);
}

/* Every series of every source once, by ascending id (each source's series table is in that order). */
static size_t add_series(compactor *cp, uint32_t *at)
{
    for (size_t err = 0;;) {
        int any = 0;
        uint64_t id = 0;
        for (size_t k = 0; k < cp->nsources; k++) {
            const source *src = &cp->sources[k];
            if (at[k] < src->seg->info.series && (!any || src->ids[at[k]] < id)) id = src->ids[at[k]], any = 1;
        }
        if (!any) return 0;
        err = name_series(cp, id, at);
        if (err) return err;
        for (size_t k = 0; k < cp->nsources; k++) {
            const source *src = &cp->sources[k];
            at[k] += at[k] < src->seg->info.series && src->ids[at[k]] == id;
        }
    }
}

/* A series of one source, by name (TSCHUNK_MERGE_BY_NAME). */
typedef struct {
    const char *name;
    size_t name_len;
    uint32_t source, ordinal;
} named_series;

static int by_name(const void *a, const void *b)
{
    const named_series *x = a, *y = b;
    size_t n = x->name_len < y->name_len ? x->name_len : y->name_len;
    int c = memcmp(x->name, y->name, n);
    return c ? c : (x->name_len > y->name_len) - (x->name_len < y->name_len);
}

/* TSCHUNK_MERGE_BY_NAME: series numbered 0, 1, ... in bytewise name order, one id a name whatever the sources
 * said; each source's ids rewritten to those. An unnamed series is BAD_PARAMETER. */
static size_t number_by_name(compactor *cp)
{
    size_t total = 0, err = 0, at = 0;
    for (size_t k = 0; k < cp->nsources; k++) total += cp->sources[k].seg->info.series;
    named_series *all = cp_alloc(cp, (total + 1) * sizeof *all);
    if (!all) return TSC_ERROR(ALLOCATION);
    for (size_t k = 0; k < cp->nsources && !err; k++)
        for (uint32_t o = 0; o < cp->sources[k].seg->info.series && !err; o++, at++) {
            all[at] = (named_series){NULL, 0, (uint32_t)k, o};
            err = tschunk_segment_series(cp->sources[k].seg, o, NULL, &all[at].name, &all[at].name_len);
            if (!err && !all[at].name_len) err = TSC_ERROR(BAD_PARAMETER);
        }
    if (!err) qsort(all, total, sizeof *all, by_name);
    uint64_t id = 0;
    for (size_t i = 0; i < total && !err; i++) {
        if (i && by_name(&all[i - 1], &all[i])) id++;
        cp->sources[all[i].source].ids[all[i].ordinal] = id;
        if (!i || by_name(&all[i - 1], &all[i])) err = tschunk_segment_writer_add_series(cp->w, id, all[i].name,
                                                                                         all[i].name_len);
    }
    cp_free(cp, all);
    return err;
}

/* Each source's series ids by ordinal: room for them, and (read: by id) the ids themselves; by name,
 * number_by_name fills them instead. */
static size_t read_ids(compactor *cp, int read)
{
    for (size_t k = 0; k < cp->nsources; k++) {
        source *src = &cp->sources[k];
        src->ids = cp_alloc(cp, ((size_t)src->seg->info.series + 1) * sizeof *src->ids);
        if (!src->ids) return TSC_ERROR(ALLOCATION);
        for (uint32_t o = 0; read && o < src->seg->info.series; o++) {
            size_t err = tschunk_segment_series(src->seg, o, &src->ids[o], NULL, NULL);
            if (err) return err;
        }
    }
    return 0;
}

static size_t write_all(compactor *cp, unsigned flags)
{
    int by_name = (flags & TSCHUNK_MERGE_BY_NAME) != 0;
    size_t err = read_ids(cp, !by_name);
    if (!err && by_name) err = number_by_name(cp);
    if (!err && !by_name) {
        uint32_t *at = cp_alloc(cp, cp->nsources * sizeof *at);
        if (!at) return TSC_ERROR(ALLOCATION);
        memset(at, 0, cp->nsources * sizeof *at);
        err = add_series(cp, at);
        cp_free(cp, at);
    }
    return err ? err : add_chunks(cp);
}

/* The stored block summaries' chunks per block, as a source's largest block shows it (1, none, without any):
 * compaction never adds chunks to a series, so this gives the blocks the source's writer would give now. */
static uint32_t summary_block_chunks(const tschunk_segment *s)
{
    uint32_t most = 1;
    for (size_t b = 0; b < s->nblocks; b++) most = s->blocks[b].count > most ? s->blocks[b].count : most;
    return most;
}

/* The first source's options, min_ts the least of all; NOT_MERGEABLE when the sources' units or summary mappings
 * differ. */
static size_t options_of(const tschunk_segment *const *segs, size_t n, tschunk_segment_options *o)
{
    const tschunk_segment_info *first = &segs[0]->info;
    memset(o, 0, sizeof *o);
    o->min_ts = first->min_ts;
    o->has_summaries = first->has_summaries;
    o->summary_mapping = first->summary_mapping;
    o->summary_gamma = first->summary_gamma;
    o->summary_offset = first->summary_offset;
    o->allocator = segs[0]->allocator;
    o->ts_unit = first->ts_unit;
    for (size_t k = 1; k < n; k++) {
        const tschunk_segment_info *i = &segs[k]->info;
        if (i->ts_unit != first->ts_unit || i->has_summaries != first->has_summaries ||
            (i->has_summaries && (i->summary_mapping != first->summary_mapping ||
                                  tsc_bits_of(i->summary_gamma) != tsc_bits_of(first->summary_gamma) ||
                                  tsc_bits_of(i->summary_offset) != tsc_bits_of(first->summary_offset))))
            return TSC_ERROR(NOT_MERGEABLE);
        o->min_ts = i->min_ts < o->min_ts ? i->min_ts : o->min_ts;
    }
    return 0;
}

/* Write segs[0 .. n) into one segment at path, or through io when path is NULL. */
static size_t write_segment(const tschunk_segment *const *segs, size_t n, const char *path,
                            const tschunk_segment_io *io, const tschunk_segment_merge_options *m,
                            tschunk_segment_compact_stats *stats)
{
    compactor cp;
    memset(&cp, 0, sizeof cp);
    cp.nsources = n;
    cp.stats = stats;
    cp.samples_per_chunk = m->samples_per_chunk;
    cp.codec = m->codec;
    tschunk_segment_options o;
    size_t err = options_of(segs, n, &o);
    o.summary_block_chunks = m->summary_block_chunks;
    cp.allocator = o.allocator;
    cp.cut = err || !cp.samples_per_chunk ? NULL : cp_alloc(&cp, TSCHUNK_BOUND(cp.samples_per_chunk));
    if (!err && cp.samples_per_chunk && !cp.cut) err = TSC_ERROR(ALLOCATION);
    cp.sources = err ? NULL : cp_alloc(&cp, n * sizeof *cp.sources);
    if (!err && !cp.sources) err = TSC_ERROR(ALLOCATION);
    for (size_t k = 0; !err && k < n; k++) {
        memset(&cp.sources[k], 0, sizeof cp.sources[k]);
        cp.sources[k].seg = segs[k];
    }
    tschunk_sketch_options so = {o.summary_mapping, 0, 0, 0, o.allocator, 0};
    if (!err && o.has_summaries)
        err = tschunk_sketch_create_mapping(&cp.sketch, o.summary_mapping, o.summary_gamma, o.summary_offset, &so);
    if (!err)
        err = path ? tschunk_segment_writer_create(&cp.w, path, &o) : tschunk_segment_writer_create_io(&cp.w, io, &o);
    if (!err) err = write_all(&cp, m->flags);
    size_t size = err ? err : tschunk_segment_writer_finish(cp.w); /* finish frees the writer either way */
    if (err && cp.w) tschunk_segment_writer_abort(cp.w);
    for (size_t k = 0; cp.sources && k < n; k++) cp_free(&cp, cp.sources[k].ids);
    cp_free(&cp, cp.sources);
    release_samples(&cp);
    cp_free(&cp, cp.summary);
    cp_free(&cp, cp.cut);
    if (cp.sketch) tschunk_sketch_free(cp.sketch);
    if (tsc_is_error(size)) memset(stats, 0, sizeof *stats);
    return size;
}

static size_t compact_to(const tschunk_segment *seg, const char *path, const tschunk_segment_io *io,
                         tschunk_segment_compact_stats *stats)
{
    tschunk_segment_compact_stats local;
    if (!stats) stats = &local;
    memset(stats, 0, sizeof *stats);
    if (!seg || (!path && !io)) return TSC_ERROR(BAD_PARAMETER);
    tschunk_segment_merge_options m = {summary_block_chunks(seg), 0, 0, 0};
    return write_segment(&seg, 1, path, io, &m, stats);
}

size_t tschunk_segment_compact(const tschunk_segment *seg, const char *path, tschunk_segment_compact_stats *stats)
{
    return compact_to(seg, path, NULL, stats);
}

size_t tschunk_segment_compact_io(const tschunk_segment *seg, const tschunk_segment_io *io,
                                  tschunk_segment_compact_stats *stats)
{
    return compact_to(seg, NULL, io, stats);
}

static size_t merge_to(const tschunk_segment *const *segs, size_t n, const char *path, const tschunk_segment_io *io,
                       const tschunk_segment_merge_options *opts, tschunk_segment_compact_stats *stats)
{
    tschunk_segment_compact_stats local;
    if (!stats) stats = &local;
    memset(stats, 0, sizeof *stats);
    tschunk_segment_merge_options m = {0, 0, 0, 0};
    if (opts) m = *opts;
    int codec_ok = !m.codec || m.codec == TSCHUNK_CODEC_GORILLA || m.codec == TSCHUNK_CODEC_TSC2;
    if (!segs || !n || (!path && !io) || m.summary_block_chunks > TSC_SEG_MAX_SUMMARY_BLOCK ||
        (m.flags & ~TSCHUNK_MERGE_BY_NAME) || m.samples_per_chunk > TSCHUNK_MAX_SAMPLES || !codec_ok)
        return TSC_ERROR(BAD_PARAMETER);
    for (size_t k = 0; k < n; k++)
        if (!segs[k]) return TSC_ERROR(BAD_PARAMETER);
    return write_segment(segs, n, path, io, &m, stats);
}

size_t tschunk_segment_merge(const tschunk_segment *const *segs, size_t n, const char *path,
                             const tschunk_segment_merge_options *opts, tschunk_segment_compact_stats *stats)
{
    return merge_to(segs, n, path, NULL, opts, stats);
}

size_t tschunk_segment_merge_io(const tschunk_segment *const *segs, size_t n, const tschunk_segment_io *io,
                                const tschunk_segment_merge_options *opts, tschunk_segment_compact_stats *stats)
{
    return merge_to(segs, n, NULL, io, opts, stats);
}
