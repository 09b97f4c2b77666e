/*
 * Segment reader over caller memory: header, footer and metadata checked at
 * open, the index parsed into arrays (sorted by series, then time), chunk
 * records checked when touched. Every size the file declares is checked
 * against the bytes that hold it before anything is allocated.
 */
#include <stdlib.h>

#include "bitmap.h"
#include "format.h"
#include "roaring_check.h"

static void *seg_alloc(tschunk_segment *s, size_t size) { return s->allocator.alloc(s->allocator.opaque, size); }

void tschunk_segment_close(tschunk_segment *s)
{
    if (!s) return;
    void *parts[] = {s->series_ids, (void *)s->names, s->name_lens, s->entries, s->max_last, s->tombs, s->blocks,
                     (void *)(uintptr_t)s->records_checked, s->hashes_at, (void *)(uintptr_t)s->block_max_last};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        if (parts[i]) s->allocator.free(s->allocator.opaque, parts[i]);
    if (s->mapping) tsc_seg_unmap(s->mapping, s->mapping_size);
    s->allocator.free(s->allocator.opaque, s);
}

static uint32_t load32_le(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }

static size_t check_header(tschunk_segment *s)
{
    const uint8_t *h = s->data;
    if (memcmp(h, TSC_SEG_MAGIC, 4) != 0) return TSC_ERROR(BAD_MAGIC);
    if (h[4] < 1 || h[4] > TSC_SEG_VERSION) return TSC_ERROR(BAD_VERSION);
    if (!TSC_SEG_CHECKSUM_OK(s->flags, tsc_load64_le(h + 40), tsc_xxh3(h, 40))) return TSC_ERROR(CORRUPT);
    s->group_shift = h[4] > 2 ? h[TSC_SEG_GROUP_AT] : 0; /* v1/v2: a reserved zero byte */
    if (h[5] || h[6] != TSCHUNK_CODEC_GORILLA || h[TSC_SEG_UNIT_AT] > TSCHUNK_UNIT_NS || tsc_load64_le(h + 32) >> 16 ||
        h[TSC_SEG_GROUP_AT] > (h[4] > 2 ? TSC_SEG_MAX_GROUP_SHIFT : 0))
        return TSC_ERROR(CORRUPT);
    s->footer.version = h[4];
    s->info.format_version = h[4];
    s->info.ts_unit = (tschunk_ts_unit)h[TSC_SEG_UNIT_AT];
    if (h[7] != TSC_SEG_NO_SUMMARY && h[7] > TSCHUNK_MAPPING_QUARTIC) return TSC_ERROR(CORRUPT);
    s->info.min_ts = (int64_t)tsc_load64_le(h + 8);
    s->info.has_summaries = h[7] != TSC_SEG_NO_SUMMARY;
    s->info.summary_mapping = s->info.has_summaries ? (tschunk_mapping_kind)h[7] : TSCHUNK_MAPPING_LOGARITHMIC;
    s->info.summary_gamma = tsc_double_of(tsc_load64_le(h + 16));
    s->info.summary_offset = tsc_double_of(tsc_load64_le(h + 24));
    return 0;
}

/* The footer's fields in f->version's layout; its own checksum and magic checked. */
static size_t read_footer(const tschunk_segment *s, tsc_seg_footer *f)
{
    size_t size = tsc_seg_footer_size(f->version);
    if (s->size < TSC_SEG_HEADER_SIZE + size) return TSC_ERROR(TRUNCATED);
    const uint8_t *p = s->data + s->size - size;
    int v1 = f->version == 1, pairs = v1 ? 8 : 12;
    const uint8_t *tail = p + 8 * pairs; /* counts, [samples,] hashes, magic, footer hash */
    const char *magic = v1 ? TSC_SEG_FOOTER_MAGIC_V1 : f->version == 2 ? TSC_SEG_FOOTER_MAGIC_V2 : TSC_SEG_FOOTER_MAGIC;
    if (memcmp(p + size - 16, magic, 8) != 0 ||
        !TSC_SEG_CHECKSUM_OK(s->flags, tsc_load64_le(p + size - 8), tsc_xxh3(p, size - 8)))
        return TSC_ERROR(CORRUPT);
    uint64_t *v1_fields[8] = {&f->series_off, &f->series_len, &f->index_off, &f->index_len,
                              &f->bitmap_off, &f->bitmap_len, &f->tomb_off, &f->tomb_len};
    uint64_t *v2_fields[12] = {&f->series_off, &f->series_len, &f->index_off,  &f->index_len,
                               &f->fence_off,  &f->fence_len,  &f->blocks_off, &f->blocks_len,
                               &f->bitmap_off, &f->bitmap_len, &f->tomb_off,   &f->tomb_len};
    for (int i = 0; i < pairs; i++) *(v1 ? v1_fields[i] : v2_fields[i]) = tsc_load64_le(p + 8 * i);
    f->chunks = load32_le(tail);
    f->series = load32_le(tail + 4);
    if (!v1) f->samples = tsc_load64_le(tail + 8);
    f->meta_hash = tsc_load64_le(tail + (v1 ? 8 : 16));
    if (!v1) f->lazy_hash = tsc_load64_le(tail + 24);
    if (v1) f->fence_off = f->blocks_off = f->bitmap_off; /* none in v1: empty sections keep one layout check */
    return 0;
}

/* Footer, section layout and the metadata checksum (a lazy open: the fences-to-tombstones one). */
static size_t check_footer(tschunk_segment *s, tsc_seg_footer *f)
{
    size_t err = read_footer(s, f);
    if (err) return err;
    uint64_t footer_at = s->size - tsc_seg_footer_size(f->version);
    /* Sections follow each other: records, series table, index, fences, block summaries, series bitmap,
     * tombstones, footer. */
    uint64_t at = f->series_off;
    const uint64_t sections[6][2] = {{f->series_off, f->series_len}, {f->index_off, f->index_len},
                                     {f->fence_off, f->fence_len},   {f->blocks_off, f->blocks_len},
                                     {f->bitmap_off, f->bitmap_len}, {f->tomb_off, f->tomb_len}};
    if (at < TSC_SEG_HEADER_SIZE) return TSC_ERROR(CORRUPT);
    for (int i = 0; i < 6; i++) { /* at <= footer_at first: footer_at - at must not wrap */
        if (sections[i][0] != at || at > footer_at || sections[i][1] > footer_at - at) return TSC_ERROR(CORRUPT);
        at += sections[i][1];
    }
    if (at != footer_at) return TSC_ERROR(CORRUPT);
    uint64_t hashed_from = s->lazy ? f->fence_off : f->series_off;
    uint64_t hash = tsc_xxh3(s->data + hashed_from, (size_t)(footer_at - hashed_from));
    if (!TSC_SEG_CHECKSUM_OK(s->flags, hash, s->lazy ? f->lazy_hash : f->meta_hash)) return TSC_ERROR(CORRUPT);
    /* Each series takes >= 2 bytes, each index entry >= 6 (v3: 2): a small file cannot claim a huge count. */
    if (f->series > f->series_len / 2 || f->chunks > f->index_len / (f->version > 2 ? 2 : 6)) return TSC_ERROR(CORRUPT);
    if (f->version > 1 &&
        f->fence_len != (tsc_seg_blocks(f->series) + tsc_seg_blocks(f->chunks)) * (uint64_t)TSC_SEG_FENCE_SIZE)
        return TSC_ERROR(CORRUPT);
    s->footer = *f;
    s->records_end = (size_t)f->series_off;
    if (f->version > 1) s->fences = s->data + f->fence_off;
    return 0;
}

size_t tsc_seg_parse_series(const tschunk_segment *s, const uint8_t *p, size_t size, size_t *pos_io,
                            tsc_seg_series *out, size_t n)
{
    int from_previous = s->footer.version > 2; /* v3: each id but a block's first from the previous one */
    size_t pos = *pos_io;
    uint64_t prev_id = 0;
    for (size_t k = 0; k < n; k++) {
        uint64_t id, len, base = from_previous ? prev_id : 0;
        if (tsc_take_uvarint(p, size, &pos, &id) || tsc_take_uvarint(p, size, &pos, &len) ||
            len > TSC_SEG_MAX_NAME || len > size - pos || id > UINT64_MAX - base)
            return TSC_ERROR(CORRUPT);
        id += base;
        if (k && id <= prev_id) return TSC_ERROR(CORRUPT); /* ascending ids */
        out[k] = (tsc_seg_series){id, (const char *)p + pos, (size_t)len};
        pos += (size_t)len;
        prev_id = id;
    }
    *pos_io = pos;
    return 0;
}

/* A v2 fence must agree with the first record of its block b, at byte pos (checked when the whole table is parsed;
 * v1 has no fences). */
static int fence_agrees(const tschunk_segment *s, int index_kind, size_t b, uint64_t key, size_t pos)
{
    if (!s->fences) return 1;
    const uint8_t *fence = tsc_seg_fence(s, index_kind, b);
    return tsc_load64_le(fence) == key && tsc_load64_le(fence + 8) == pos;
}

static size_t parse_series(tschunk_segment *s, const tsc_seg_footer *f)
{
    uint32_t n = f->series;
    s->series_ids = seg_alloc(s, (n + 1) * sizeof *s->series_ids);
    s->names = seg_alloc(s, (n + 1) * sizeof *s->names);
    s->name_lens = seg_alloc(s, (n + 1) * sizeof *s->name_lens);
    if (!s->series_ids || !s->names || !s->name_lens) return TSC_ERROR(ALLOCATION);
    const uint8_t *p = s->data + f->series_off;
    size_t pos = 0;
    for (size_t first = 0; first < n; first += TSC_SEG_BLOCK) { /* v3 codes ids within their 64-record block */
        size_t block_at = pos, in_block = n - first < TSC_SEG_BLOCK ? n - first : TSC_SEG_BLOCK;
        tsc_seg_series block[TSC_SEG_BLOCK];
        if (tsc_seg_parse_series(s, p, (size_t)f->series_len, &pos, block, in_block)) return TSC_ERROR(CORRUPT);
        if (first && block[0].id <= s->series_ids[first - 1]) return TSC_ERROR(CORRUPT); /* ascending ids */
        if (!fence_agrees(s, 0, first / TSC_SEG_BLOCK, block[0].id, block_at)) return TSC_ERROR(CORRUPT);
        for (size_t k = 0; k < in_block; k++) {
            s->series_ids[first + k] = block[k].id;
            s->names[first + k] = block[k].name;
            s->name_lens[first + k] = block[k].name_len;
        }
    }
    return pos == f->series_len ? 0 : TSC_ERROR(CORRUPT);
}

/* first = base + delta must stay an int64 at or after base. */
static int add_ts(int64_t base, uint64_t delta, int64_t *out)
{
    if (delta > (uint64_t)INT64_MAX - (uint64_t)base) return -1;
    *out = (int64_t)((uint64_t)base + delta);
    return 0;
}

/* The record bounds every index entry must keep. */
static int record_fits(const tschunk_segment *s, uint64_t offset, uint64_t length)
{
    uint64_t min_length = s->footer.version > 2 ? 2 : 16; /* v3: a chunk's first two bytes; v1/v2: head and hash */
    return offset >= TSC_SEG_HEADER_SIZE && length >= min_length && offset <= s->records_end &&
           length <= s->records_end - offset;
}

/* v1/v2 entry: six uvarints. */
static size_t parse_entry_v2(const tschunk_segment *s, const uint8_t *p, size_t size, size_t *pos, tsc_seg_entry *e)
{
    uint64_t ord, first_rel, span, count, offset, length;
    if (tsc_take_uvarint(p, size, pos, &ord) || tsc_take_uvarint(p, size, pos, &first_rel) ||
        tsc_take_uvarint(p, size, pos, &span) || tsc_take_uvarint(p, size, pos, &count) ||
        tsc_take_uvarint(p, size, pos, &offset) || tsc_take_uvarint(p, size, pos, &length))
        return TSC_ERROR(CORRUPT);
    if (ord >= s->footer.series || count == 0 || count > TSCHUNK_MAX_SAMPLES || !record_fits(s, offset, length))
        return TSC_ERROR(CORRUPT);
    *e = (tsc_seg_entry){(uint32_t)ord, (uint32_t)count, 0, 0, offset, length};
    if (add_ts(s->info.min_ts, first_rel, &e->first_ts) || add_ts(e->first_ts, span, &e->last_ts))
        return TSC_ERROR(CORRUPT);
    return 0;
}

/*
 * v3: the n entries of one index block (writer.c put_entry: a flag byte, the fields that differ from the previous
 * entry's, the record length). The previous entry's fields stay in locals, and its mean step is divided out only
 * for the next chunk of the same series, and only when the span or count changed: a lazy range walk parses whole
 * blocks of entries, and aligned series (an ordinal an entry) need no step at all.
 */
static size_t parse_entries_v3(const tschunk_segment *s, const uint8_t *p, size_t size, size_t *pos_io,
                               tsc_seg_entry *out, size_t n)
{
    size_t pos = *pos_io;
    /* What a block's first entry is coded from (README "Segment format v3") */
    uint64_t ord = 0, count = 0, span = 0, record_end = TSC_SEG_HEADER_SIZE;
    uint64_t prev_first = (uint64_t)s->info.min_ts, prev_last = prev_first, step = 0, step_span = 0, step_count = 0;
    for (size_t k = 0; k < n; k++) {
        uint64_t prev_ord = ord, field = 0, first_zz = 0, span_zz = 0, offset = record_end, length;
        if (pos >= size) return TSC_ERROR(CORRUPT);
        unsigned flags = p[pos++], ord_kind = flags & 3u;
        if (flags & 0x80u || ord_kind == 3u) return TSC_ERROR(CORRUPT);
        if (ord_kind == TSC_SEG_ORD_DELTA && (tsc_take_uvarint(p, size, &pos, &field) || field < 2))
            return TSC_ERROR(CORRUPT);
        ord += ord_kind == TSC_SEG_ORD_DELTA ? field : ord_kind; /* a wrap ends below prev_ord: refused */
        uint64_t first = prev_first; /* the aligned series' prediction; the next chunk of a series: */
        if (ord == prev_ord) {
            if (span != step_span || count != step_count) {
                step = tsc_seg_mean_step(span, count);
                step_span = span;
                step_count = count;
            }
            first = prev_last + step;
        }
        if (flags & TSC_SEG_SMALL_JITTER) {
            if (flags & (TSC_SEG_NEW_FIRST | TSC_SEG_NEW_SPAN) || pos >= size) return TSC_ERROR(CORRUPT);
            first_zz = p[pos] & 15u;
            span_zz = p[pos++] >> 4;
            if (!first_zz || !span_zz) return TSC_ERROR(CORRUPT); /* the byte is only for two non-zero differences */
        }
        if ((flags & TSC_SEG_NEW_FIRST) && tsc_take_uvarint(p, size, &pos, &first_zz)) return TSC_ERROR(CORRUPT);
        if ((flags & TSC_SEG_NEW_SPAN) && tsc_take_uvarint(p, size, &pos, &span_zz)) return TSC_ERROR(CORRUPT);
        first += (uint64_t)tsc_unzigzag(first_zz);
        span += (uint64_t)tsc_unzigzag(span_zz);
        if ((flags & TSC_SEG_NEW_COUNT) && tsc_take_uvarint(p, size, &pos, &count)) return TSC_ERROR(CORRUPT);
        if ((flags & TSC_SEG_NEW_AT) && tsc_take_uvarint(p, size, &pos, &field)) return TSC_ERROR(CORRUPT);
        if (flags & TSC_SEG_NEW_AT) offset += (uint64_t)tsc_unzigzag(field);
        if (tsc_take_uvarint(p, size, &pos, &length)) return TSC_ERROR(CORRUPT);
        int64_t last;
        if (ord < prev_ord || ord >= s->footer.series || count == 0 || count > TSCHUNK_MAX_SAMPLES ||
            (int64_t)first < s->info.min_ts || !record_fits(s, offset, length) || add_ts((int64_t)first, span, &last))
            return TSC_ERROR(CORRUPT);
        out[k] = (tsc_seg_entry){(uint32_t)ord, (uint32_t)count, (int64_t)first, last, offset, length};
        record_end = offset + length;
        prev_first = first;
        prev_last = (uint64_t)last;
    }
    *pos_io = pos;
    return 0;
}

size_t tsc_seg_parse_entries(const tschunk_segment *s, const uint8_t *p, size_t size, size_t *pos,
                             tsc_seg_entry *out, size_t n)
{
    if (s->footer.version > 2) return parse_entries_v3(s, p, size, pos, out, n);
    for (size_t k = 0; k < n; k++)
        if (parse_entry_v2(s, p, size, pos, &out[k])) return TSC_ERROR(CORRUPT);
    return 0;
}

static size_t parse_index(tschunk_segment *s, const tsc_seg_footer *f)
{
    uint32_t n = f->chunks;
    s->entries = seg_alloc(s, (n + 1) * sizeof *s->entries);
    s->max_last = seg_alloc(s, (n + 1) * sizeof *s->max_last);
    if (!s->entries || !s->max_last) return TSC_ERROR(ALLOCATION);
    if (f->version > 2 && !(s->hashes_at = seg_alloc(s, (tsc_seg_blocks(n) + 1) * sizeof *s->hashes_at)))
        return TSC_ERROR(ALLOCATION);
    const uint8_t *p = s->data + f->index_off;
    size_t pos = 0;
    for (size_t first = 0; first < n; first += TSC_SEG_BLOCK) { /* entries are coded within their 64-entry block */
        size_t block_at = pos, in_block = n - first < TSC_SEG_BLOCK ? n - first : TSC_SEG_BLOCK;
        tsc_seg_entry *block = &s->entries[first];
        if (tsc_seg_parse_entries(s, p, (size_t)f->index_len, &pos, block, in_block)) return TSC_ERROR(CORRUPT);
        if (!fence_agrees(s, 1, first / TSC_SEG_BLOCK, block[0].ordinal, block_at)) return TSC_ERROR(CORRUPT);
        for (size_t i = first; i < first + in_block; i++) {
            const tsc_seg_entry *e = &s->entries[i];
            if (i && !tsc_seg_entries_in_order(e - 1, e)) return TSC_ERROR(CORRUPT); /* by series, then time */
            int same_series = i && e[-1].ordinal == e->ordinal;
            s->max_last[i] = same_series && s->max_last[i - 1] > e->last_ts ? s->max_last[i - 1] : e->last_ts;
            s->info.samples += e->count;
        }
        if (f->version > 2 && /* the block's records hashes end it */
            tsc_seg_take_block_hashes(s, (size_t)f->index_len, &pos, in_block, &s->hashes_at[first / TSC_SEG_BLOCK]))
            return TSC_ERROR(CORRUPT);
    }
    if (f->version > 1 && s->info.samples != f->samples) return TSC_ERROR(CORRUPT);
    return pos == f->index_len ? 0 : TSC_ERROR(CORRUPT);
}

/* The series bitmap must hold exactly the ordinals that have chunks (checked by
 * cardinality and maximum here; tschunk_segment_verify compares every member).
 * A lazy open has no index to count them: it checks the bitmap fits the series. */
static size_t check_series_bitmap(const tschunk_segment *s)
{
    tsc_roaring_summary rs;
    const tsc_seg_footer *f = &s->footer;
    size_t err = tsc_roaring_check(s->data + f->bitmap_off, (size_t)f->bitmap_len, &rs);
    if (err || rs.bytes != f->bitmap_len) return TSC_ERROR(CORRUPT);
    if (s->lazy)
        return rs.cardinality <= f->series && (!rs.cardinality || rs.max_value < f->series) ? 0 : TSC_ERROR(CORRUPT);
    uint64_t with_chunks = 0;
    for (uint32_t i = 0; i < s->info.chunks; i++)
        with_chunks += i == 0 || s->entries[i].ordinal != s->entries[i - 1].ordinal;
    uint32_t top = s->info.chunks ? s->entries[s->info.chunks - 1].ordinal : 0;
    return rs.cardinality == with_chunks && rs.max_value == top ? 0 : TSC_ERROR(CORRUPT);
}

static size_t read_metadata(tschunk_segment *s)
{
    tsc_seg_footer f = s->footer;
    size_t err = check_footer(s, &f);
    if (err) return err;
    s->info.series = f.series;
    s->info.chunks = f.chunks;
    if (f.version > 2) {
        size_t words = tsc_seg_blocks(f.chunks >> s->group_shift) + 1;
        s->records_checked = seg_alloc(s, words * sizeof *s->records_checked);
        if (!s->records_checked) return TSC_ERROR(ALLOCATION);
        for (size_t k = 0; k < words; k++) atomic_init(&s->records_checked[k], 0);
    }
    if (s->lazy) {
        size_t blocks = tsc_seg_blocks(f.chunks);
        s->block_max_last = seg_alloc(s, (blocks + 1) * sizeof *s->block_max_last);
        if (!s->block_max_last) return TSC_ERROR(ALLOCATION);
        for (size_t b = 0; b < blocks; b++) atomic_init(&s->block_max_last[b], TSC_SEG_MAX_UNKNOWN);
        s->info.samples = f.samples;
        err = tsc_seg_check_fences(s);
    } else {
        err = parse_series(s, &f);
        if (!err) err = parse_index(s, &f);
    }
    if (!err) err = check_series_bitmap(s);
    if (!err) err = tsc_seg_parse_tombs(s);
    if (!err) err = tsc_seg_parse_blocks(s);
    return err;
}

size_t tschunk_segment_open(tschunk_segment **out, const void *data, size_t size, unsigned flags,
                            const tschunk_allocator *allocator)
{
    if (out) *out = NULL;
    if (!out || !data) return TSC_ERROR(BAD_PARAMETER);
    const uint8_t *d = (const uint8_t *)data;
    if (size >= 4 && memcmp(d, TSC_SEG_MAGIC, 4) != 0) return TSC_ERROR(BAD_MAGIC);
    if (size < TSC_SEG_HEADER_SIZE + TSC_SEG_FOOTER_V1_SIZE) return TSC_ERROR(TRUNCATED);
    tschunk_allocator a = tsc_allocator_or_default(allocator);
    tschunk_segment *s = a.alloc(a.opaque, sizeof *s);
    if (!s) return TSC_ERROR(ALLOCATION);
    memset(s, 0, sizeof *s);
    s->data = d;
    s->size = size;
    s->allocator = a;
    s->flags = flags;
    size_t err = check_header(s);
    s->lazy = !err && (flags & TSCHUNK_SEGMENT_LAZY) && s->footer.version > 1;
    if (!err) err = read_metadata(s);
    for (uint32_t i = 0; !err && (flags & TSCHUNK_SEGMENT_VERIFY) && i < s->info.chunks; i++) {
        tschunk_segment_chunk_info c;
        err = tschunk_segment_chunk(s, i, &c);
    }
    if (err) {
        tschunk_segment_close(s);
        return err;
    }
    *out = s;
    return 0;
}

void tschunk_segment_get_info(const tschunk_segment *s, tschunk_segment_info *info) { *info = s->info; }

void tschunk_segment_series_bitmap(const tschunk_segment *s, const void **blob, size_t *size)
{
    *blob = s->data + s->footer.bitmap_off;
    *size = (size_t)s->footer.bitmap_len;
}

/* Series `ordinal`, from the arrays or (lazy) from its block. */
static size_t series_at(const tschunk_segment *s, uint32_t ordinal, tsc_seg_series *out)
{
    if (!s->lazy) {
        *out = (tsc_seg_series){s->series_ids[ordinal], s->names[ordinal], s->name_lens[ordinal]};
        return 0;
    }
    tsc_seg_series block[TSC_SEG_BLOCK];
    size_t n, err = tsc_seg_series_block(s, ordinal / TSC_SEG_BLOCK, block, &n);
    if (!err) *out = block[ordinal % TSC_SEG_BLOCK];
    return err;
}

size_t tsc_seg_entry_at(const tschunk_segment *s, size_t i, tsc_seg_entry *out)
{
    if (!s->lazy) {
        *out = s->entries[i];
        return 0;
    }
    tsc_seg_entry block[TSC_SEG_BLOCK];
    size_t n, err = tsc_seg_index_block(s, i / TSC_SEG_BLOCK, block, &n, NULL);
    if (!err) *out = block[i % TSC_SEG_BLOCK];
    return err;
}

size_t tschunk_segment_series(const tschunk_segment *s, uint32_t ordinal, uint64_t *id, const char **name,
                              size_t *name_len)
{
    tsc_seg_series rec;
    if (!s || ordinal >= s->info.series) return TSC_ERROR(BAD_PARAMETER);
    size_t err = series_at(s, ordinal, &rec);
    if (err) return err;
    if (id) *id = rec.id;
    if (name) *name = rec.name;
    if (name_len) *name_len = rec.name_len;
    return 0;
}

/* Lazy: the one block whose first id is the last <= id, searched through the fences. */
static size_t find_series_lazy(const tschunk_segment *s, uint64_t id)
{
    size_t lo = 0, hi = tsc_seg_blocks(s->info.series);
    while (lo < hi) { /* lo: the first block whose first id is > id */
        size_t mid = lo + (hi - lo) / 2;
        if (tsc_load64_le(tsc_seg_fence(s, 0, mid)) <= id) lo = mid + 1;
        else hi = mid;
    }
    if (lo == 0) return TSC_ERROR(BAD_PARAMETER);
    tsc_seg_series block[TSC_SEG_BLOCK];
    size_t n, err = tsc_seg_series_block(s, lo - 1, block, &n);
    if (err) return err;
    for (size_t k = 0; k < n; k++)
        if (block[k].id == id) return (lo - 1) * TSC_SEG_BLOCK + k;
    return TSC_ERROR(BAD_PARAMETER);
}

size_t tschunk_segment_find_series(const tschunk_segment *s, uint64_t id)
{
    if (s->lazy) return find_series_lazy(s, id);
    size_t lo = 0, hi = s->info.series;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (s->series_ids[mid] < id) lo = mid + 1;
        else hi = mid;
    }
    return lo < s->info.series && s->series_ids[lo] == id ? lo : TSC_ERROR(BAD_PARAMETER);
}

size_t tschunk_segment_find_series_name(const tschunk_segment *s, const char *name, size_t len)
{
    tsc_seg_series block[TSC_SEG_BLOCK];
    size_t n = 0, err;
    for (uint32_t i = 0; i < s->info.series; i++) {
        const char *at = s->lazy ? NULL : s->names[i];
        size_t at_len = s->lazy ? 0 : s->name_lens[i];
        if (s->lazy) {
            if (i % TSC_SEG_BLOCK == 0 && (err = tsc_seg_series_block(s, i / TSC_SEG_BLOCK, block, &n))) return err;
            at = block[i % TSC_SEG_BLOCK].name;
            at_len = block[i % TSC_SEG_BLOCK].name_len;
        }
        if (at_len == len && memcmp(at, name, len) == 0) return i;
    }
    return TSC_ERROR(BAD_PARAMETER);
}

/* First index position in [lo, hi) where pred turns true (pred monotone). */
#define LOWER_BOUND(lo, hi, pred)                                                                  \
    do {                                                                                           \
        while (lo < hi) {                                                                          \
            size_t mid_ = lo + (hi - lo) / 2;                                                      \
            size_t i = mid_;                                                                       \
            if (pred) hi = mid_;                                                                   \
            else lo = mid_ + 1;                                                                    \
        }                                                                                          \
    } while (0)

/* Lazy: whether block b is known (from an earlier parse) to end before `from`: none of its chunks reaches it. */
static int block_ends_before(const tschunk_segment *s, size_t b, int64_t from)
{
    int64_t max_last = atomic_load_explicit(&s->block_max_last[b], memory_order_relaxed);
    return max_last != TSC_SEG_MAX_UNKNOWN && max_last < from;
}

/* Lazy: walk the series' entries from the block its first entry is in (found through the fences); the same
 * positions as the binary searches below over the arrays. Until the range's first chunk is found, a block
 * known to end before `from` is passed over: it would only raise the running maximum of last_ts to below
 * `from`. Not the series' last block, where the walk may stop at the next series' first entry. */
static size_t range_lazy(const tschunk_segment *s, uint32_t ordinal, int64_t from, int64_t to, size_t *begin,
                         size_t *end)
{
    size_t blocks = tsc_seg_blocks(s->info.chunks), lo = 0, hi = blocks;
    LOWER_BOUND(lo, hi, tsc_load64_le(tsc_seg_fence(s, 1, i)) >= ordinal);
    size_t b = lo ? lo - 1 : 0, past = lo, first = SIZE_MAX;
    hi = blocks;
    LOWER_BOUND(past, hi, tsc_load64_le(tsc_seg_fence(s, 1, i)) > ordinal); /* the first block after the series */
    int64_t max_last = INT64_MIN;
    for (; b < blocks; b++) {
        if (first == SIZE_MAX && b + 1 < past && block_ends_before(s, b, from)) continue;
        tsc_seg_entry block[TSC_SEG_BLOCK];
        size_t n, err = tsc_seg_index_block(s, b, block, &n, NULL);
        if (err) return err;
        for (size_t k = 0; k < n; k++) {
            const tsc_seg_entry *e = &block[k];
            size_t i = b * TSC_SEG_BLOCK + k;
            if (e->ordinal < ordinal) continue;
            if (e->ordinal > ordinal || (first != SIZE_MAX && e->first_ts > to)) {
                *begin = first == SIZE_MAX ? i : first;
                *end = i;
                return 0;
            }
            max_last = e->last_ts > max_last ? e->last_ts : max_last;
            if (first == SIZE_MAX && max_last >= from) first = i;
            if (first == i && e->first_ts > to) {
                *begin = *end = i;
                return 0;
            }
        }
    }
    *begin = first == SIZE_MAX ? s->info.chunks : first;
    *end = s->info.chunks;
    return 0;
}

static void range_full(const tschunk_segment *s, uint32_t ordinal, int64_t from, int64_t to, size_t *begin,
                       size_t *end)
{
    size_t lo = 0, hi = s->info.chunks;
    LOWER_BOUND(lo, hi, s->entries[i].ordinal >= ordinal);
    size_t block = lo;
    hi = s->info.chunks;
    LOWER_BOUND(lo, hi, s->entries[i].ordinal > ordinal);
    size_t block_end = lo;
    lo = block, hi = block_end;
    LOWER_BOUND(lo, hi, s->max_last[i] >= from); /* chunks before it end before from */
    *begin = lo;
    hi = block_end;
    LOWER_BOUND(lo, hi, s->entries[i].first_ts > to);
    *end = lo;
}

size_t tschunk_segment_range(const tschunk_segment *s, uint32_t ordinal, int64_t from, int64_t to, size_t *begin,
                             size_t *end)
{
    if (!s || !begin || !end || ordinal >= s->info.series) return TSC_ERROR(BAD_PARAMETER);
    size_t err = 0;
    if (s->lazy) err = range_lazy(s, ordinal, from, to, begin, end);
    else range_full(s, ordinal, from, to, begin, end);
    if (!err && from > to) *end = *begin; /* an empty range, which no chunk overlaps */
    return err;
}

/* Where a record's summary and chunk lie. */
typedef struct {
    const uint8_t *summary, *chunk;
    uint64_t summary_size, chunk_size;
} record_parts;

/* v1/v2 record: head, summary, chunk, XXH3; the head must say what the index says. */
static size_t record_v2(const tschunk_segment *s, const tsc_seg_entry *e, record_parts *r)
{
    tsc_seg_series series;
    size_t err = series_at(s, e->ordinal, &series);
    if (err) return err;
    const uint8_t *rec = s->data + e->offset;
    size_t body = (size_t)e->length - 8, pos = 0;
    if (!TSC_SEG_CHECKSUM_OK(s->flags, tsc_xxh3(rec, body), tsc_load64_le(rec + body))) return TSC_ERROR(CORRUPT);
    uint64_t id, first_rel, span, count;
    if (tsc_take_uvarint(rec, body, &pos, &id) || tsc_take_uvarint(rec, body, &pos, &first_rel) ||
        tsc_take_uvarint(rec, body, &pos, &span) || tsc_take_uvarint(rec, body, &pos, &count) || pos >= body)
        return TSC_ERROR(CORRUPT);
    uint8_t codec = rec[pos++];
    if (tsc_take_uvarint(rec, body, &pos, &r->summary_size) || r->summary_size > body - pos) return TSC_ERROR(CORRUPT);
    r->summary = rec + pos;
    pos += (size_t)r->summary_size;
    if (tsc_take_uvarint(rec, body, &pos, &r->chunk_size) || r->chunk_size != body - pos) return TSC_ERROR(CORRUPT);
    r->chunk = rec + pos;
    int64_t first, last;
    if (id != series.id || add_ts(s->info.min_ts, first_rel, &first) || first != e->first_ts ||
        add_ts(first, span, &last) || last != e->last_ts || count != e->count || r->chunk_size < 2 ||
        codec != (r->chunk[1] & 0x0f))
        return TSC_ERROR(CORRUPT);
    return 0;
}

/* v3 record: [uvarint summary length, summary,] chunk; checked by its group's records hash (locate). */
static size_t record_v3(const tschunk_segment *s, const tsc_seg_entry *e, record_parts *r)
{
    const uint8_t *rec = s->data + e->offset;
    size_t size = (size_t)e->length, pos = 0;
    r->summary_size = 0;
    if (s->info.has_summaries && (tsc_take_uvarint(rec, size, &pos, &r->summary_size) || r->summary_size == 0 ||
                                  r->summary_size > size - pos))
        return TSC_ERROR(CORRUPT);
    r->summary = rec + pos;
    pos += (size_t)r->summary_size;
    r->chunk = rec + pos;
    r->chunk_size = size - pos;
    return r->chunk_size < 2 ? TSC_ERROR(CORRUPT) : 0;
}

/* v3: the group of records chunk i belongs to (2^group_shift entries of its block, from `entries`, the
 * block's first) against its stored hash; checked once (records_checked). */
static size_t check_group(const tschunk_segment *s, size_t i, const tsc_seg_entry *entries, size_t n,
                          const uint8_t *hashes)
{
    size_t group = i >> s->group_shift, size = (size_t)1 << s->group_shift;
    _Atomic uint64_t *word = &s->records_checked[group / 64];
    uint64_t bit = UINT64_C(1) << (group % 64);
    if (atomic_load_explicit(word, memory_order_relaxed) & bit) return 0;
    size_t first = (i % TSC_SEG_BLOCK) >> s->group_shift << s->group_shift;
    size = n - first < size ? n - first : size;
    uint64_t record_hashes[TSC_SEG_BLOCK];
    for (size_t k = 0; k < size; k++) {
        const tsc_seg_entry *e = &entries[first + k];
        record_hashes[k] = tsc_xxh3(s->data + e->offset, (size_t)e->length);
    }
    uint64_t want = tsc_load64_le(hashes + 8 * (first >> s->group_shift));
    if (!TSC_SEG_CHECKSUM_OK(s->flags, tsc_seg_records_hash(record_hashes, size), want)) return TSC_ERROR(CORRUPT);
    atomic_fetch_or_explicit(word, bit, memory_order_relaxed);
    return 0;
}

/* Index block b: its entries (in the index, or parsed into `parsed` by a lazy open), how many, and (v3) where its
 * record groups' hashes lie. */
typedef struct {
    const tsc_seg_entry *entries;
    size_t n;
    const uint8_t *hashes;
} index_block;

static size_t read_index_block(const tschunk_segment *s, size_t b, tsc_seg_entry parsed[TSC_SEG_BLOCK], index_block *ib)
{
    size_t n = s->info.chunks - b * TSC_SEG_BLOCK, err = 0;
    ib->entries = s->lazy ? parsed : s->entries + b * TSC_SEG_BLOCK;
    ib->hashes = s->hashes_at ? s->data + s->footer.index_off + s->hashes_at[b] : NULL;
    if (s->lazy) err = tsc_seg_index_block(s, b, parsed, &n, &ib->hashes);
    ib->n = n < TSC_SEG_BLOCK ? n : TSC_SEG_BLOCK;
    return err;
}

/* Index entry i of its block, (v3) the records of its group checked. */
static size_t locate_in(const tschunk_segment *s, const index_block *ib, size_t i, const tsc_seg_entry **e)
{
    *e = &ib->entries[i % TSC_SEG_BLOCK];
    return s->footer.version > 2 ? check_group(s, i, ib->entries, ib->n, ib->hashes) : 0;
}

/* A record's parts, its checksum verified (v1/v2: its own; v3: its group's, by locate_in). */
static size_t record_parts_of(const tschunk_segment *s, const tsc_seg_entry *e, record_parts *r)
{
    return s->footer.version > 2 ? record_v3(s, e, r) : record_v2(s, e, r);
}

/* Index entry i and its record's parts, the record's checksum verified. */
static size_t read_record(const tschunk_segment *s, size_t i, tsc_seg_entry *entry, record_parts *r)
{
    tsc_seg_entry parsed[TSC_SEG_BLOCK];
    index_block ib;
    const tsc_seg_entry *e;
    size_t err = read_index_block(s, i / TSC_SEG_BLOCK, parsed, &ib);
    if (!err) err = locate_in(s, &ib, i, &e);
    if (err) return err;
    *entry = *e;
    return record_parts_of(s, entry, r);
}

/* Chunk i's info from its (located) index entry. */
static size_t chunk_info(const tschunk_segment *s, size_t i, const tsc_seg_entry *e, tschunk_segment_chunk_info *out)
{
    record_parts r;
    size_t err = record_parts_of(s, e, &r);
    if (err) return err;
    uint8_t codec = r.chunk[1] & 0x0f;
    if ((codec != TSCHUNK_CODEC_GORILLA && codec != TSCHUNK_CODEC_TSC2) || (s->info.has_summaries && !r.summary_size))
        return TSC_ERROR(CORRUPT);
    const tsc_seg_tomb *tomb = tsc_seg_find_tomb(s, i);
    if (tomb && tomb->last >= e->count) return TSC_ERROR(CORRUPT); /* a lazy open could not check it */
    out->ordinal = e->ordinal;
    out->count = e->count;
    out->deleted = tomb ? tomb->deleted : 0;
    if (tomb) r.summary_size = 0; /* the summary still counts the deleted samples */
    out->first_ts = e->first_ts;
    out->last_ts = e->last_ts;
    out->ref = (tschunk_chunk_ref){r.chunk, (size_t)r.chunk_size, r.summary_size ? r.summary : NULL,
                                   (size_t)r.summary_size};
    return 0;
}

size_t tschunk_segment_chunks(const tschunk_segment *s, size_t first, size_t count, tschunk_segment_chunk_info *out)
{
    if (!s || (!out && count) || first > s->info.chunks || count > s->info.chunks - first)
        return TSC_ERROR(BAD_PARAMETER);
    tsc_seg_entry parsed[TSC_SEG_BLOCK];
    index_block ib;
    size_t err = 0;
    for (size_t i = first; i < first + count && !err; i++) {
        const tsc_seg_entry *e;
        if (i == first || i % TSC_SEG_BLOCK == 0) err = read_index_block(s, i / TSC_SEG_BLOCK, parsed, &ib);
        if (!err) err = locate_in(s, &ib, i, &e);
        if (!err) err = chunk_info(s, i, e, &out[i - first]);
    }
    return err;
}

size_t tschunk_segment_chunk(const tschunk_segment *s, size_t i, tschunk_segment_chunk_info *out)
{
    if (!s || !out || i >= s->info.chunks) return TSC_ERROR(BAD_PARAMETER);
    return tschunk_segment_chunks(s, i, 1, out);
}

/* Every ordinal with chunks is in the series bitmap (open checked it and its cardinality and maximum; the
 * entries are in ordinal order). */
static size_t check_bitmap_members(const tschunk_segment *s)
{
    tsc_bitmap_iter it;
    tsc_bitmap_iter_init(&it, s->data + s->footer.bitmap_off);
    tsc_run run = {1, 0}; /* none yet */
    for (uint32_t i = 0; i < s->info.chunks; i++) {
        uint32_t ordinal = s->entries[i].ordinal;
        while (run.last < ordinal || run.first > run.last)
            if (!tsc_bitmap_next_run(&it, &run)) return TSC_ERROR(CORRUPT);
        if (ordinal < run.first) return TSC_ERROR(CORRUPT);
    }
    return 0;
}

/* verify: the chunk holds the count and time range its index entry says (v3 records repeat none of them). */
static size_t chunk_matches_index(const tschunk_segment_chunk_info *c)
{
    uint32_t count;
    int64_t first, last;
    size_t err = tsc_seg_scan_chunk(c->ref.chunk, c->ref.chunk_size, &count, &first, &last);
    return !err && count == c->count && first == c->first_ts && last == c->last_ts ? 0 : TSC_ERROR(CORRUPT);
}

/* verify: a record's summary, deleted samples or not, is its chunk's: the count and time range of its index
 * entry, and a sketch of the segment's mapping (merged into scratch, which only proves that it decodes). */
static size_t summary_matches_index(const tschunk_segment *s, size_t i, tschunk_sketch *scratch)
{
    tsc_seg_entry e;
    record_parts r;
    size_t err = read_record(s, i, &e, &r);
    if (err || !s->info.has_summaries) return err;
    tschunk_summary_info si;
    if (tschunk_summary_parse(r.summary, (size_t)r.summary_size, &si) || si.count != e.count ||
        si.first_ts != e.first_ts || si.last_ts != e.last_ts ||
        tschunk_summary_merge(scratch, r.summary, (size_t)r.summary_size))
        return TSC_ERROR(CORRUPT);
    return 0;
}

size_t tschunk_segment_verify(const void *data, size_t size, size_t *bad_offset)
{
    tschunk_segment *s;
    size_t err = tschunk_segment_open(&s, data, size, 0, NULL);
    if (err) {
        if (bad_offset) *bad_offset = 0;
        return err;
    }
    err = check_bitmap_members(s);
    if (err && bad_offset) *bad_offset = (size_t)s->footer.bitmap_off;
    if (!err && s->fences && (err = tsc_seg_check_block_hashes(s)) && bad_offset) *bad_offset = (size_t)s->footer.fence_off;
    if (!err && (err = tsc_seg_check_blocks(s)) && bad_offset) *bad_offset = (size_t)s->footer.blocks_off;
    tschunk_sketch *scratch = NULL;
    tschunk_sketch_options so = {s->info.summary_mapping, 0, 0, 0, s->allocator, 0};
    if (!err && s->info.has_summaries)
        err = tschunk_sketch_create_mapping(&scratch, s->info.summary_mapping, s->info.summary_gamma,
                                            s->info.summary_offset, &so);
    for (uint32_t i = 0; i < s->info.chunks && !err; i++) {
        tschunk_segment_chunk_info c;
        err = tschunk_segment_chunk(s, i, &c);
        if (!err) err = tschunk_validate(c.ref.chunk, c.ref.chunk_size);
        if (!err) err = chunk_matches_index(&c);
        if (!err) err = summary_matches_index(s, i, scratch);
        if (err && bad_offset) *bad_offset = (size_t)s->entries[i].offset;
    }
    tschunk_sketch_free(scratch);
    tschunk_segment_close(s);
    return err;
}
