/*
 * Fences (segment format v2 and v3): one per block of 64 series in the series table
 * and one per block of 64 entries in the index, each with the block's first
 * key, its byte offset and its XXH3. A lazy reader checks the fences at open
 * and then parses and checks only the blocks a call needs, so opening a
 * segment and finding one series costs a few blocks, not the whole index.
 *
 * Fence section: ceil(series / 64) series fences, then ceil(chunks / 64) index
 * fences, 24 bytes each, little-endian: u64 key (a series fence: the id of the
 * block's first series; an index fence: the ordinal of its first entry), u64
 * offset of the block's first byte from the start of its section, u64 XXH3 of
 * the block's bytes (up to the next block's offset, the last one to the end
 * of the section; in v3 an index block's bytes end with its records hashes).
 */
#include "format.h"

const uint8_t *tsc_seg_fence(const tschunk_segment *s, int index_kind, size_t b)
{
    size_t first = index_kind ? tsc_seg_blocks(s->footer.series) : 0;
    return s->fences + (first + b) * TSC_SEG_FENCE_SIZE;
}

/* Offsets must start at 0 and rise strictly inside the section (a block takes >= 1 byte). */
static size_t check_kind(const tschunk_segment *s, int index_kind, size_t blocks, uint64_t section_len)
{
    uint64_t prev_key = 0, prev_off = 0;
    for (size_t b = 0; b < blocks; b++) {
        const uint8_t *fence = tsc_seg_fence(s, index_kind, b);
        uint64_t key = tsc_load64_le(fence), off = tsc_load64_le(fence + 8);
        if ((b ? off <= prev_off : off != 0) || off >= section_len) return TSC_ERROR(CORRUPT);
        if (index_kind ? key >= s->footer.series || (b && key < prev_key) : b && key <= prev_key)
            return TSC_ERROR(CORRUPT);
        prev_key = key;
        prev_off = off;
    }
    return 0;
}

size_t tsc_seg_check_fences(const tschunk_segment *s)
{
    const tsc_seg_footer *f = &s->footer;
    size_t err = check_kind(s, 0, tsc_seg_blocks(f->series), f->series_len);
    return err ? err : check_kind(s, 1, tsc_seg_blocks(f->chunks), f->index_len);
}

/* Bytes [*from, *to) of block b inside its section, checked against the block's hash. */
static size_t block_span(const tschunk_segment *s, int index_kind, size_t b, size_t *from, size_t *to)
{
    size_t blocks = tsc_seg_blocks(index_kind ? s->footer.chunks : s->footer.series);
    uint64_t section_off = index_kind ? s->footer.index_off : s->footer.series_off;
    uint64_t section_len = index_kind ? s->footer.index_len : s->footer.series_len;
    const uint8_t *fence = tsc_seg_fence(s, index_kind, b);
    *from = (size_t)tsc_load64_le(fence + 8);
    *to = b + 1 < blocks ? (size_t)tsc_load64_le(fence + TSC_SEG_FENCE_SIZE + 8) : (size_t)section_len;
    uint64_t hash = tsc_xxh3(s->data + section_off + *from, *to - *from);
    return TSC_SEG_CHECKSUM_OK(s->flags, hash, tsc_load64_le(fence + 16)) ? 0 : TSC_ERROR(CORRUPT);
}

static size_t block_items(size_t total, size_t b)
{
    size_t left = total - b * TSC_SEG_BLOCK;
    return left < TSC_SEG_BLOCK ? left : TSC_SEG_BLOCK;
}

size_t tsc_seg_series_block(const tschunk_segment *s, size_t b, tsc_seg_series out[TSC_SEG_BLOCK], size_t *n)
{
    size_t from, to, err = block_span(s, 0, b, &from, &to);
    if (err) return err;
    const uint8_t *p = s->data + s->footer.series_off;
    *n = block_items(s->footer.series, b);
    if ((err = tsc_seg_parse_series(s, p, to, &from, out, *n))) return err;
    if (out[0].id != tsc_load64_le(tsc_seg_fence(s, 0, b))) return TSC_ERROR(CORRUPT);
    int last_block = b + 1 == tsc_seg_blocks(s->footer.series);
    if (from != to || (!last_block && tsc_load64_le(tsc_seg_fence(s, 0, b + 1)) <= out[*n - 1].id))
        return TSC_ERROR(CORRUPT);
    return 0;
}

size_t tsc_seg_index_block(const tschunk_segment *s, size_t b, tsc_seg_entry out[TSC_SEG_BLOCK], size_t *n,
                           const uint8_t **hashes)
{
    size_t from, to, err = block_span(s, 1, b, &from, &to);
    if (err) return err;
    const uint8_t *p = s->data + s->footer.index_off;
    *n = block_items(s->footer.chunks, b);
    if ((err = tsc_seg_parse_entries(s, p, to, &from, out, *n))) return err;
    if (out[0].ordinal != tsc_load64_le(tsc_seg_fence(s, 1, b))) return TSC_ERROR(CORRUPT);
    int64_t max_last = out[0].last_ts;
    for (size_t k = 1; k < *n; k++) {
        if (!tsc_seg_entries_in_order(&out[k - 1], &out[k])) return TSC_ERROR(CORRUPT);
        max_last = out[k].last_ts > max_last ? out[k].last_ts : max_last;
    }
    size_t at;
    if (s->footer.version > 2) { /* the block's records hashes end it */
        if ((err = tsc_seg_take_block_hashes(s, to, &from, *n, &at))) return err;
        if (hashes) *hashes = p + at;
    }
    int last_block = b + 1 == tsc_seg_blocks(s->footer.chunks);
    if (from != to || (!last_block && tsc_load64_le(tsc_seg_fence(s, 1, b + 1)) < out[*n - 1].ordinal))
        return TSC_ERROR(CORRUPT);
    /* Lazy: the block's largest last_ts, for the range walks that come later (format.h, block_max_last). */
    if (s->block_max_last) atomic_store_explicit(&s->block_max_last[b], max_last, memory_order_relaxed);
    return 0;
}

size_t tsc_seg_check_block_hashes(const tschunk_segment *s)
{
    for (int kind = 0; kind < 2; kind++) {
        size_t blocks = tsc_seg_blocks(kind ? s->footer.chunks : s->footer.series), from, to, err;
        for (size_t b = 0; b < blocks; b++)
            if ((err = block_span(s, kind, b, &from, &to))) return err;
    }
    return 0;
}
