/*
 * Stored block summaries (segment format v2 and v3): with summaries on, the writer
 * combines the summaries of every run of up to 64 consecutive chunks of a
 * series (tschunk_summary_combine) and stores the blobs in their own section,
 * so that a range query over many chunks of a series merges one sketch per
 * block instead of one per chunk, without touching the chunk records.
 *
 * Block summary section: per block, by ascending first index position, blocks
 * disjoint: uvarint first index position, uvarint chunk count (>= 2; the
 * chunks are consecutive in the index and belong to one series), uvarint blob
 * length, the block summary blob (README "Block summary blob", version 2).
 * A block with a deleted sample in any of its chunks is not used (its blob
 * still counts them); its chunks answer one by one.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>

#include "../sketch/sketch.h"
#include "format.h"

/* ---- writing -------------------------------------------------------------------------------- */

typedef struct {
    const tschunk_segment_io *io;
    const tschunk_allocator *alloc;
    tschunk_sketch *scratch;
    uint8_t *out; /* the section, grown as blocks are added */
    size_t len, cap;
    uint8_t *summaries; /* one block's summary bytes */
    size_t summaries_cap;
    tschunk_chunk_ref *refs;
    uint64_t *sum_at, *sum_len; /* where each chunk's summary lies in the file */
} block_builder;

/* Where a record's summary blob lies: re-read its length, the record's first field (v3), from the file. */
static int record_summary(const block_builder *b, const tsc_seg_entry *e, uint64_t *at, uint64_t *len)
{
    uint8_t head[10];
    size_t want = e->length < sizeof head ? (size_t)e->length : sizeof head, pos = 0;
    if (b->io->read_at(b->io->ctx, head, want, e->offset)) return -1;
    if (tsc_take_uvarint(head, want, &pos, len)) return -1;
    *at = e->offset + pos;
    return 0;
}

static int reserve(block_builder *b, uint8_t **buf, size_t *cap, size_t used, size_t need)
{
    if (*cap - used >= need) return 0;
    size_t ncap = (used + need) * 2;
    uint8_t *n = b->alloc->alloc(b->alloc->opaque, ncap);
    if (!n) return -1;
    if (*buf) {
        memcpy(n, *buf, used);
        b->alloc->free(b->alloc->opaque, *buf);
    }
    *buf = n;
    *cap = ncap;
    return 0;
}

/* Chunks entries[first, first + count) of one series: read their summaries back, combine, append. */
static size_t add_block(block_builder *b, const tsc_seg_entry *entries, size_t first, size_t count)
{
    uint64_t *at = b->sum_at, *len = b->sum_len, total = 0;
    for (size_t k = 0; k < count; k++) {
        if (record_summary(b, &entries[first + k], &at[k], &len[k])) return TSC_ERROR(GENERIC);
        total += len[k];
    }
    if (reserve(b, &b->summaries, &b->summaries_cap, 0, (size_t)total)) return TSC_ERROR(ALLOCATION);
    size_t pos = 0;
    for (size_t k = 0; k < count; k++) {
        if (b->io->read_at(b->io->ctx, b->summaries + pos, (size_t)len[k], at[k])) return TSC_ERROR(GENERIC);
        b->refs[k] = (tschunk_chunk_ref){NULL, 0, b->summaries + pos, (size_t)len[k]};
        pos += (size_t)len[k];
    }
    size_t bound = tschunk_summary_combine_bound(b->scratch);
    if (reserve(b, &b->out, &b->cap, b->len, bound + 30)) return TSC_ERROR(ALLOCATION);
    uint8_t head[30];
    size_t h = tsc_put_uvarint(head, first);
    h += tsc_put_uvarint(head + h, count);
    size_t blob = tschunk_summary_combine(b->scratch, b->refs, count, b->out + b->len + 30, bound);
    if (tsc_is_error(blob)) return blob;
    h += tsc_put_uvarint(head + h, blob);
    memmove(b->out + b->len + h, b->out + b->len + 30, blob);
    memcpy(b->out + b->len, head, h);
    b->len += h + blob;
    return 0;
}

size_t tsc_seg_build_blocks(const tschunk_segment_io *io, const tsc_seg_entry *entries, size_t n,
                            const tschunk_segment_options *o, uint8_t **out, size_t *len)
{
    *out = NULL;
    *len = 0;
    size_t per_block = o->summary_block_chunks ? o->summary_block_chunks : TSC_SEG_SUMMARY_BLOCK;
    if (!o->has_summaries || per_block < 2) return 0;
    block_builder b = {io, &o->allocator, NULL, NULL, 0, 0, NULL, 0, NULL, NULL, NULL};
    tschunk_sketch_options so = {o->summary_mapping, 0, 0, 0, o->allocator, 0};
    size_t err = tschunk_sketch_create_mapping(&b.scratch, o->summary_mapping, o->summary_gamma, o->summary_offset, &so);
    b.refs = err ? NULL : o->allocator.alloc(o->allocator.opaque, per_block * sizeof *b.refs);
    b.sum_at = err ? NULL : o->allocator.alloc(o->allocator.opaque, 2 * per_block * sizeof *b.sum_at);
    b.sum_len = b.sum_at ? b.sum_at + per_block : NULL;
    if (!err && (!b.refs || !b.sum_at)) err = TSC_ERROR(ALLOCATION);
    for (size_t run = 0, end; !err && run < n; run = end) {
        for (end = run + 1; end < n && entries[end].ordinal == entries[run].ordinal;) end++;
        for (size_t first = run; !err && first + 1 < end; first += per_block)
            err = add_block(&b, entries, first, end - first < per_block ? end - first : per_block);
    }
    if (b.scratch) tschunk_sketch_free(b.scratch);
    if (b.refs) o->allocator.free(o->allocator.opaque, b.refs);
    if (b.sum_at) o->allocator.free(o->allocator.opaque, b.sum_at);
    if (b.summaries) o->allocator.free(o->allocator.opaque, b.summaries);
    if (err && b.out) o->allocator.free(o->allocator.opaque, b.out);
    if (!err) {
        *out = b.out;
        *len = b.len;
    }
    return err;
}

/* ---- reading -------------------------------------------------------------------------------- */

size_t tsc_seg_parse_blocks(tschunk_segment *s)
{
    const uint8_t *p = s->data + s->footer.blocks_off;
    size_t size = (size_t)s->footer.blocks_len, pos = 0;
    if (!size) return 0;
    if (!s->info.has_summaries) return TSC_ERROR(CORRUPT);
    /* An entry takes >= 4 bytes (three uvarints and a blob byte). */
    s->blocks = s->allocator.alloc(s->allocator.opaque, (size / 4 + 1) * sizeof *s->blocks);
    if (!s->blocks) return TSC_ERROR(ALLOCATION);
    uint64_t next = 0;
    while (pos < size) {
        uint64_t first, count, len;
        if (tsc_take_uvarint(p, size, &pos, &first) || tsc_take_uvarint(p, size, &pos, &count) ||
            tsc_take_uvarint(p, size, &pos, &len))
            return TSC_ERROR(CORRUPT);
        if (first < next || first >= s->info.chunks || count < 2 || count > TSC_SEG_MAX_SUMMARY_BLOCK ||
            count > s->info.chunks - first || len == 0 || len > size - pos)
            return TSC_ERROR(CORRUPT);
        /* one series (a lazy open has no index to look at: tsc_seg_block_usable checks it when used) */
        if (!s->lazy && s->entries[first].ordinal != s->entries[first + count - 1].ordinal) return TSC_ERROR(CORRUPT);
        s->blocks[s->nblocks++] = (tsc_seg_block){(uint32_t)first, (uint32_t)count, p + pos, (size_t)len};
        s->info.summary_blocks = (uint32_t)s->nblocks;
        pos += (size_t)len;
        next = first + count;
    }
    return 0;
}

size_t tsc_seg_first_block_from(const tschunk_segment *s, size_t first)
{
    size_t lo = 0, hi = s->nblocks;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->blocks[mid].first < first) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

int tsc_seg_block_usable(const tschunk_segment *s, const tsc_seg_block *b)
{
    if (tsc_seg_any_tomb(s, b->first, b->count)) return 0;
    if (!s->lazy) return 1;
    tsc_seg_entry head, tail;
    return !tsc_seg_entry_at(s, b->first, &head) && !tsc_seg_entry_at(s, b->first + b->count - 1, &tail) &&
           head.ordinal == tail.ordinal;
}

/* Whether block b's blob is the combination of the chunks' summaries, as this release writes it or, for a segment
 * written before 0.55.0, with Kahan's sum alone in place of the sum plus its compensation (the two differ in a rare
 * last bit). blob: cap bytes of scratch room. @return 0 when it is, else CORRUPT. */
static size_t combination_is(tschunk_sketch *scratch, const tschunk_chunk_ref *refs, uint32_t count, uint8_t *blob,
                             size_t cap, const tsc_seg_block *b)
{
    for (int sum_alone = 0; sum_alone < 2; sum_alone++) {
        size_t size = tsc_summary_combine_as(scratch, refs, count, blob, cap, sum_alone);
        if (!tsc_is_error(size) && size == b->size && memcmp(blob, b->blob, size) == 0) return 0;
    }
    return TSC_ERROR(CORRUPT);
}

/* verify: a usable block's blob must be exactly the combination of its chunks' summaries. */
size_t tsc_seg_check_blocks(const tschunk_segment *s)
{
    if (!s->nblocks) return 0;
    tschunk_sketch *scratch;
    tschunk_sketch_options so = {s->info.summary_mapping, 0, 0, 0, s->allocator, 0};
    size_t err = tschunk_sketch_create_mapping(&scratch, s->info.summary_mapping, s->info.summary_gamma,
                                               s->info.summary_offset, &so);
    if (err) return err;
    size_t cap = tschunk_summary_combine_bound(scratch);
    tschunk_chunk_ref *refs = s->allocator.alloc(s->allocator.opaque, TSC_SEG_MAX_SUMMARY_BLOCK * sizeof *refs);
    uint8_t *blob = s->allocator.alloc(s->allocator.opaque, cap);
    if (!refs || !blob) err = TSC_ERROR(ALLOCATION);
    for (size_t k = 0; k < s->nblocks && !err; k++) {
        const tsc_seg_block *b = &s->blocks[k];
        if (!tsc_seg_block_usable(s, b)) continue; /* never read; its chunks answer */
        for (uint32_t i = 0; i < b->count && !err; i++) {
            tschunk_segment_chunk_info c;
            err = tschunk_segment_chunk(s, b->first + i, &c);
            if (!err) refs[i] = c.ref;
        }
        if (!err) err = combination_is(scratch, refs, b->count, blob, cap, b);
    }
    if (refs) s->allocator.free(s->allocator.opaque, refs);
    if (blob) s->allocator.free(s->allocator.opaque, blob);
    tschunk_sketch_free(scratch);
    return err;
}
