/*
 * tschunk_segment_delete: a segment is immutable, so a delete writes it again
 * (temporary file, rename) with the same records, series table, index and
 * series bitmap, and a tombstone section where the chunks that hold deleted
 * samples list their positions (format: tombstones.c).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "bitmap.h"
#include "durable.h"
#include "format.h"

/* Sample positions [*lo, *hi] of a chunk whose timestamps lie in [from, to]
 * (timestamps never decrease inside a chunk). @return 1 when any, 0 when none, or an error. */
static size_t positions_in_range(const tschunk_chunk_ref *ref, int64_t from, int64_t to, uint32_t *lo, uint32_t *hi)
{
    tschunk_iter it;
    size_t r = tschunk_iter_init(&it, ref->chunk, ref->chunk_size);
    if (r) return r;
    int64_t ts;
    uint32_t pos = 0, any = 0;
    while ((r = tschunk_iter_next_bits(&it, &ts, NULL)) == 1 && ts <= to) {
        if (ts >= from && !any++) *lo = pos;
        if (ts >= from) *hi = pos;
        pos++;
    }
    return tsc_is_error(r) ? r : any != 0;
}

/* One chunk's tombstone after this delete: a portable roaring blob and its cardinality (blob NULL: as before). */
typedef struct {
    uint8_t *blob;
    size_t size;
    uint64_t deleted;
} new_tomb;

/* Append r to runs[0 .. *n), which it follows in order of first value: joined with the last when they meet. */
static void push_run(tsc_run *runs, size_t *n, tsc_run r)
{
    if (*n && r.first <= runs[*n - 1].last + 1) {
        if (r.last > runs[*n - 1].last) runs[*n - 1].last = r.last;
    } else {
        runs[(*n)++] = r;
    }
}

/* The runs of old's positions (none when NULL) and the range, merged: at most old's cardinality plus one.
 * @return how many. */
static size_t add_range(const tsc_seg_tomb *old, tsc_run range, tsc_run *runs)
{
    size_t n = 0;
    int placed = 0;
    tsc_bitmap_iter it;
    tsc_run r;
    if (old) tsc_bitmap_iter_init(&it, old->blob);
    while (old && tsc_bitmap_next_run(&it, &r)) {
        if (!placed && range.first <= r.first) {
            push_run(runs, &n, range);
            placed = 1;
        }
        push_run(runs, &n, r);
    }
    if (!placed) push_run(runs, &n, range);
    return n;
}

/* The chunk's deleted positions after this delete: its old tombstone plus the positions in [from, to]. */
static size_t chunk_tombstone(const tschunk_segment *s, size_t i, int64_t from, int64_t to, new_tomb *out)
{
    tschunk_segment_chunk_info c;
    size_t err = tschunk_segment_chunk(s, i, &c);
    if (err) return err;
    const tsc_seg_tomb *old = tsc_seg_find_tomb(s, i);
    *out = (new_tomb){NULL, 0, old ? old->deleted : 0};
    tsc_run range = {0, 0}; /* set when any */
    size_t any = positions_in_range(&c.ref, from, to, &range.first, &range.last);
    if (tsc_is_error(any) || !any) return tsc_is_error(any) ? any : 0;
    tsc_run *runs = s->allocator.alloc(s->allocator.opaque, ((size_t)out->deleted + 1) * sizeof *runs);
    if (!runs) return TSC_ERROR(ALLOCATION);
    size_t n = add_range(old, range, runs);
    out->deleted = 0;
    for (size_t k = 0; k < n; k++) out->deleted += runs[k].last - runs[k].first + 1;
    out->size = tsc_bitmap_size(runs, n);
    out->blob = s->allocator.alloc(s->allocator.opaque, out->size);
    if (out->blob) tsc_bitmap_write(out->blob, runs, n);
    s->allocator.free(s->allocator.opaque, runs);
    return out->blob ? 0 : TSC_ERROR(ALLOCATION);
}

static size_t put_entry(uint8_t *p, size_t chunk, const void *blob, size_t size)
{
    size_t n = tsc_put_uvarint(p, chunk);
    n += tsc_put_uvarint(p + n, size);
    memcpy(p + n, blob, size);
    return n + size;
}

/* The new tombstone section: old entries but where [begin, end) has new ones, by position. */
static uint8_t *encode_tombs(const tschunk_segment *s, size_t begin, size_t end, const new_tomb *gone, size_t *len)
{
    size_t cap = (size_t)s->footer.tomb_len;
    for (size_t i = begin; i < end; i++) cap += 20 + gone[i - begin].size;
    uint8_t *buf = s->allocator.alloc(s->allocator.opaque, cap + 1), *p = buf;
    if (!buf) return NULL;
    size_t t = 0;
    for (size_t i = 0; i < s->info.chunks; i++) {
        while (t < s->ntombs && s->tombs[t].chunk < i) t++;
        const tsc_seg_tomb *old = t < s->ntombs && s->tombs[t].chunk == i ? &s->tombs[t] : NULL;
        const new_tomb *now = i >= begin && i < end && gone[i - begin].blob ? &gone[i - begin] : NULL;
        if (now) p += put_entry(p, i, now->blob, now->size);
        else if (old) p += put_entry(p, i, old->blob, old->size);
        if (i >= end && t >= s->ntombs) break;
    }
    *len = (size_t)(p - buf);
    return buf;
}

/* The three parts through the caller's io, at their offsets. */
static size_t write_parts_io(const tschunk_segment_io *io, const tsc_span parts[3])
{
    uint64_t at = 0;
    for (int k = 0; k < 3; at += parts[k].size, k++)
        if (parts[k].size && io->write_at(io->ctx, parts[k].data, parts[k].size, at)) return TSC_ERROR(GENERIC);
    return 0;
}

/* Everything before the tombstones as it was, the new tombstones, a new footer: to path, or through io when path
 * is NULL. */
static size_t write_segment(const tschunk_segment *s, const char *path, const tschunk_segment_io *io,
                            const uint8_t *tombs, size_t tombs_len)
{
    tsc_seg_footer f = s->footer;
    f.tomb_len = tombs_len;
    tsc_span meta[2] = {{s->data + f.series_off, (size_t)(f.tomb_off - f.series_off)}, {tombs, tombs_len}};
    f.meta_hash = tsc_xxh3_spans(meta, 2);
    tsc_span lazy[2] = {{s->data + f.fence_off, (size_t)(f.tomb_off - f.fence_off)}, {tombs, tombs_len}};
    if (f.version > 1) f.lazy_hash = tsc_xxh3_spans(lazy, 2);
    uint8_t footer[TSC_SEG_FOOTER_SIZE];
    size_t footer_size = tsc_seg_encode_footer(&f, footer);
    if (!path) {
        const tsc_span parts[3] = {{s->data, (size_t)f.tomb_off}, {tombs, tombs_len}, {footer, footer_size}};
        return write_parts_io(io, parts);
    }
    size_t n = strlen(path) + TSC_TEMP_SUFFIX;
    char *tmp = s->allocator.alloc(s->allocator.opaque, n);
    if (!tmp) return TSC_ERROR(ALLOCATION);
    FILE *out = tsc_create_temp(path, path, tmp, n);
    int ok = out != NULL;
    ok = ok && fwrite(s->data, 1, (size_t)f.tomb_off, out) == (size_t)f.tomb_off;
    ok = ok && (!tombs_len || fwrite(tombs, 1, tombs_len, out) == tombs_len);
    ok = ok && fwrite(footer, 1, footer_size, out) == footer_size;
    if (out && !ok) {
        int failed = errno; /* the write's reason, for the caller (GENERIC) */
        fclose(out);
        remove(tmp);
        errno = failed;
    }
    ok = ok && tsc_commit_file(out, tmp, path) == 0;
    s->allocator.free(s->allocator.opaque, tmp);
    return ok ? 0 : TSC_ERROR(GENERIC);
}

static size_t delete_to(const tschunk_segment *s, const char *path, const tschunk_segment_io *io, uint32_t ordinal,
                        int64_t from, int64_t to, uint64_t *deleted)
{
    if (deleted) *deleted = 0;
    size_t begin = 0, end = 0, err;
    int target = path || (io && io->write_at);
    if (!s || !target || from > to || tschunk_segment_range(s, ordinal, from, to, &begin, &end))
        return TSC_ERROR(BAD_PARAMETER); /* an unknown series too */
    new_tomb *gone = s->allocator.alloc(s->allocator.opaque, (end - begin + 1) * sizeof *gone);
    if (!gone) return TSC_ERROR(ALLOCATION);
    uint64_t newly = 0;
    size_t made = 0;
    for (err = 0; begin + made < end && !err; made++) {
        err = chunk_tombstone(s, begin + made, from, to, &gone[made]);
        if (err) break;
        const tsc_seg_tomb *old = tsc_seg_find_tomb(s, begin + made);
        newly += gone[made].deleted - (old ? old->deleted : 0);
    }
    if (!err && newly) {
        size_t len = 0;
        uint8_t *tombs = encode_tombs(s, begin, end, gone, &len);
        err = tombs ? write_segment(s, path, io, tombs, len) : TSC_ERROR(ALLOCATION);
        if (tombs) s->allocator.free(s->allocator.opaque, tombs);
    }
    for (size_t i = 0; i < made; i++)
        if (gone[i].blob) s->allocator.free(s->allocator.opaque, gone[i].blob);
    s->allocator.free(s->allocator.opaque, gone);
    if (!err && deleted) *deleted = newly;
    return err;
}

size_t tschunk_segment_delete(const tschunk_segment *s, const char *path, uint32_t ordinal, int64_t from, int64_t to,
                              uint64_t *deleted)
{
    return delete_to(s, path, NULL, ordinal, from, to, deleted);
}

size_t tschunk_segment_delete_io(const tschunk_segment *s, const tschunk_segment_io *io, uint32_t ordinal,
                                 int64_t from, int64_t to, uint64_t *deleted)
{
    return delete_to(s, NULL, io, ordinal, from, to, deleted);
}
