/*
 * A segment reader written from README "Segment format v3" alone (versions 3, 2 and 1, as its table gives them):
 * every section parsed, every checksum and every rule the section states checked, nothing shared with
 * lib/segment. Chunks are read with the README chunk decoders (spec_decoders.h) and CRoaring's portable blobs by
 * their published layout (RoaringFormatSpec), summary blobs' fields by "Summary blob v1". Two things are taken
 * from the library because the README defines them through it: a summary's sketch (the DDSketch compact encoding,
 * held to sketches-java and sketches-go by their own vectors) must merge into a sketch of the header's mapping,
 * and a stored block summary must be tschunk_summary_combine of its chunks' summaries.
 * tests/test_spec_segment.c holds it against tschunk_segment_verify and the reader (full and lazy opens),
 * fuzz/fuzz_spec_segment.c on arbitrary bytes. No Criterion here.
 */
#ifndef TSCHUNK_SPEC_SEGMENT_H
#define TSCHUNK_SPEC_SEGMENT_H

#include <stdlib.h>

#include "spec_decoders.h"
#include "sketch/sketch.h" /* tsc_summary_combine_as: a block summary of either kind (below) */
#include "tschunk.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

typedef struct {
    uint64_t id;
    const uint8_t *name;
    size_t name_len;
} specseg_series;

typedef struct {
    uint32_t ordinal, count, deleted;
    int64_t first_ts, last_ts;
    uint64_t offset, length; /* the record */
    const uint8_t *summary, *chunk;
    size_t summary_size, chunk_size;
    uint8_t *gone; /* deleted sample positions, one byte per sample; NULL when none */
} specseg_entry;

typedef struct {
    int64_t min_ts;
    unsigned version, mapping, unit, group_shift;
    double gamma, offset;
    uint32_t n_series, n_chunks, n_blocks;
    uint64_t samples, deleted;
    specseg_series *series;
    specseg_entry *entries;
    uint8_t *in_bitmap; /* per ordinal: in the series bitmap */
    const uint8_t *bitmap;
    size_t bitmap_size;
    int check_hashes;   /* SPECSEG_CHECK_HASHES, _SKIP_ (the fuzz harness, beside the library's switch), _FIX_ */
    unsigned fixed;     /* checksums rewritten by SPECSEG_FIX_HASHES */
    tschunk_sketch *scratch; /* what the records' summaries merge into, to prove that they decode */
} specseg;

enum { SPECSEG_SKIP_HASHES, SPECSEG_CHECK_HASHES, SPECSEG_FIX_HASHES };

/* Fails with the line of the rule, so that a disagreement names it. */
#define SPECSEG_FAIL() return -(int)__LINE__
#define SPECSEG_PART() return (int)__LINE__
#define SPECSEG_TRY(x) do { int specseg_rc_ = (x); if (specseg_rc_) return specseg_rc_; } while (0)

static inline uint64_t specseg_u64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

static inline uint32_t specseg_u32(const uint8_t *p)
{
    return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline unsigned specseg_u16(const uint8_t *p) { return p[0] | (unsigned)p[1] << 8; }

/* Little-endian whatever the host (a native memcpy reads and writes the wrong bytes on big-endian hosts). */
static inline void specseg_put_u64(uint8_t *p, uint64_t v)
{
    for (int b = 0; b < 8; b++) p[b] = (uint8_t)(v >> (8 * b));
}

static inline double specseg_f64(const uint8_t *p)
{
    uint64_t bits = specseg_u64(p);
    double v;
    memcpy(&v, &bits, 8);
    return v;
}

/* A stored XXH3 against its bytes. SPECSEG_FIX_HASHES writes it instead (into the caller's buffer): a test
 * damages a field, then makes every checksum right again, so that the structure rules alone decide. */
static inline int specseg_hash_ok(specseg *s, const void *data, size_t size, const uint8_t *stored)
{
    if (s->check_hashes == SPECSEG_SKIP_HASHES) return 1;
    uint64_t hash = XXH3_64bits(data, size);
    if (s->check_hashes == SPECSEG_CHECK_HASHES) return hash == specseg_u64(stored);
    if (hash != specseg_u64(stored)) s->fixed++;
    specseg_put_u64((uint8_t *)(uintptr_t)stored, hash);
    return 1;
}

/* A zigzag varint: the uvarint of (v << 1) ^ (v >> 63), two's complement. */
static inline int specseg_zigzag(const uint8_t *p, size_t size, size_t *pos, uint64_t *out)
{
    uint64_t z;
    if (spec_uvarint(p, size, pos, &z)) return -1;
    *out = (z >> 1) ^ (0 - (z & 1));
    return 0;
}

/* ---- CRoaring portable serialization: values < limit, each marked in marks[]; *card their number ---- */

static inline int specseg_mark(uint8_t *marks, uint32_t limit, uint32_t value, uint64_t *card)
{
    if (value >= limit || marks[value]) return -1;
    marks[value] = 1;
    ++*card;
    return 0;
}

static inline int specseg_container(const uint8_t *p, size_t size, size_t *pos, int is_run, uint32_t card,
                                    uint32_t key, uint32_t limit, uint8_t *marks, uint64_t *total)
{
    uint64_t before = *total;
    if (is_run) {
        if (size - *pos < 2) SPECSEG_FAIL();
        unsigned runs = specseg_u16(p + *pos);
        *pos += 2;
        if (runs == 0 || (size - *pos) / 4 < runs) SPECSEG_FAIL();
        long prev_end = -1;
        for (unsigned r = 0; r < runs; r++, *pos += 4) {
            unsigned start = specseg_u16(p + *pos), len = specseg_u16(p + *pos + 2);
            if ((long)start <= prev_end || start + len > 0xffffu) SPECSEG_FAIL();
            for (unsigned v = start; v <= start + len; v++)
                if (specseg_mark(marks, limit, key << 16 | v, total)) SPECSEG_FAIL();
            prev_end = (long)(start + len);
        }
    } else if (card > 4096) {
        if (size - *pos < 8192) SPECSEG_FAIL();
        for (unsigned v = 0; v < 65536; v++)
            if (p[*pos + v / 8] >> (v % 8) & 1)
                if (specseg_mark(marks, limit, key << 16 | v, total)) SPECSEG_FAIL();
        *pos += 8192;
    } else {
        if ((size - *pos) / 2 < card) SPECSEG_FAIL();
        long prev = -1;
        for (uint32_t i = 0; i < card; i++, *pos += 2) {
            unsigned v = specseg_u16(p + *pos);
            if ((long)v <= prev || specseg_mark(marks, limit, key << 16 | v, total)) SPECSEG_FAIL();
            prev = v;
        }
    }
    return *total - before == card ? 0 : -(int)__LINE__;
}

static inline int specseg_roaring(const uint8_t *p, size_t size, uint32_t limit, uint8_t *marks, uint64_t *card)
{
    if (size < 4) SPECSEG_FAIL();
    uint32_t cookie = specseg_u32(p), n;
    size_t pos = 4;
    const uint8_t *run_flags = NULL;
    if ((cookie & 0xffff) == 12347) {
        n = (cookie >> 16) + 1;
        run_flags = p + pos;
        pos += (n + 7) / 8;
        if (pos > size || (n % 8 && run_flags[n / 8] >> (n % 8))) SPECSEG_FAIL(); /* README: padding bits 0 */
    } else if (cookie == 12346) {
        if (size < 8) SPECSEG_FAIL();
        n = specseg_u32(p + 4);
        pos = 8;
    } else {
        SPECSEG_FAIL();
    }
    if (n > 65536 || pos > size || (size - pos) / 4 < n) SPECSEG_FAIL();
    const uint8_t *keys = p + pos;
    pos += 4 * (size_t)n;
    const uint8_t *offsets = NULL;
    if (!run_flags || n >= 4) {
        if ((size - pos) / 4 < n) SPECSEG_FAIL();
        offsets = p + pos;
        pos += 4 * (size_t)n;
    }
    *card = 0;
    for (uint32_t c = 0; c < n; c++) {
        unsigned key = specseg_u16(keys + 4 * c);
        if (c > 0 && key <= specseg_u16(keys + 4 * (c - 1))) SPECSEG_FAIL();
        if (offsets && specseg_u32(offsets + 4 * c) != pos) SPECSEG_FAIL();
        int is_run = run_flags && (run_flags[c / 8] >> (c % 8) & 1);
        SPECSEG_TRY(specseg_container(p, size, &pos, is_run, specseg_u16(keys + 4 * c + 2) + 1u, key, limit,
                                      marks, card));
    }
    return pos == size ? 0 : -(int)__LINE__;
}

/* ---- the sections ---- */

typedef struct {
    uint64_t off, len;
} specseg_section;

enum { SPECSEG_SERIES, SPECSEG_INDEX, SPECSEG_FENCES, SPECSEG_BLOCKS, SPECSEG_BITMAP, SPECSEG_TOMBS };

static inline int specseg_header(specseg *s, const uint8_t *p, size_t size)
{
    if (size < 48 + 96 || memcmp(p, "TSEG", 4)) SPECSEG_FAIL();
    s->version = p[4];
    if (s->version < 1 || s->version > 3 || p[5] != 0 || p[6] != 1) SPECSEG_FAIL();
    if (size < 48 + (s->version == 1 ? 96u : 144u)) SPECSEG_FAIL();
    s->mapping = p[7];
    if (s->mapping > 4 && s->mapping != 0xff) SPECSEG_FAIL();
    s->min_ts = (int64_t)specseg_u64(p + 8);
    s->gamma = specseg_f64(p + 16);
    s->offset = specseg_f64(p + 24);
    s->unit = p[32];
    s->group_shift = s->version == 3 ? p[33] : 0; /* v1/v2: a reserved byte */
    if (s->unit > 4 || s->group_shift > 6) SPECSEG_FAIL();
    for (int i = s->version == 3 ? 34 : 33; i < 40; i++)
        if (p[i]) SPECSEG_FAIL();
    return specseg_hash_ok(s, p, 40, p + 40) ? 0 : -(int)__LINE__;
}

/* The six sections follow one another, from the records' end to the footer: the checksums' spans ("from the
 * series table to the end of the tombstones") read so. */
static inline int specseg_sections_in_order(const specseg_section sec[6], uint64_t footer_at)
{
    uint64_t at = 0;
    for (int i = 0; i < 6; i++) {
        if (i > 0 && sec[i].off != at) SPECSEG_FAIL();
        if (sec[i].off < 48 || sec[i].off > footer_at || sec[i].len > footer_at - sec[i].off) SPECSEG_FAIL();
        at = sec[i].off + sec[i].len;
    }
    return at == footer_at ? 0 : -(int)__LINE__;
}

/* v1's footer (96 bytes): four sections (no fences, no block summaries), the counts, the metadata hash,
 * TSEGEND1, its own hash. */
static inline int specseg_footer_v1(specseg *s, const uint8_t *p, size_t size, specseg_section sec[6])
{
    const uint8_t *f = p + size - 96;
    static const int at[4] = {SPECSEG_SERIES, SPECSEG_INDEX, SPECSEG_BITMAP, SPECSEG_TOMBS};
    if (memcmp(f + 80, "TSEGEND1", 8)) SPECSEG_FAIL();
    for (int i = 0; i < 4; i++) sec[at[i]] = (specseg_section){specseg_u64(f + 16 * i), specseg_u64(f + 16 * i + 8)};
    sec[SPECSEG_FENCES] = sec[SPECSEG_BLOCKS] = (specseg_section){sec[SPECSEG_INDEX].off + sec[SPECSEG_INDEX].len, 0};
    SPECSEG_TRY(specseg_sections_in_order(sec, size - 96));
    s->n_chunks = specseg_u32(f + 64);
    s->n_series = specseg_u32(f + 68);
    if (!specseg_hash_ok(s, p + sec[SPECSEG_SERIES].off, (size_t)(size - 96 - sec[SPECSEG_SERIES].off), f + 72) ||
        !specseg_hash_ok(s, f, 88, f + 88))
        SPECSEG_FAIL();
    /* Each series takes at least 2 bytes, each v1 index entry 6: a count the bytes cannot hold is refused before
     * anything is allocated for it. */
    return s->n_series <= sec[SPECSEG_SERIES].len / 2 && s->n_chunks <= sec[SPECSEG_INDEX].len / 6 ? 0
                                                                                              : -(int)__LINE__;
}

/* v2/v3's footer (144 bytes). */
static inline int specseg_footer(specseg *s, const uint8_t *p, size_t size, specseg_section sec[6])
{
    if (s->version == 1) return specseg_footer_v1(s, p, size, sec);
    const uint8_t *f = p + size - 144;
    if (memcmp(f + 128, s->version == 3 ? "TSEGEND3" : "TSEGEND2", 8)) SPECSEG_FAIL();
    for (int i = 0; i < 6; i++) sec[i] = (specseg_section){specseg_u64(f + 16 * i), specseg_u64(f + 16 * i + 8)};
    SPECSEG_TRY(specseg_sections_in_order(sec, size - 144));
    s->n_chunks = specseg_u32(f + 96);
    s->n_series = specseg_u32(f + 100);
    s->samples = specseg_u64(f + 104);
    const uint8_t *meta = p + sec[SPECSEG_SERIES].off, *lazy = p + sec[SPECSEG_FENCES].off;
    if (!specseg_hash_ok(s, meta, (size_t)(size - 144 - sec[SPECSEG_SERIES].off), f + 112) ||
        !specseg_hash_ok(s, lazy, (size_t)(size - 144 - sec[SPECSEG_FENCES].off), f + 120) ||
        !specseg_hash_ok(s, f, 136, f + 136))
        SPECSEG_FAIL();
    /* Each series takes at least 2 bytes, each index entry 2 (v2: 6): a count the bytes cannot hold is refused
     * before anything is allocated for it. */
    if (s->n_series > sec[SPECSEG_SERIES].len / 2 || s->n_chunks > sec[SPECSEG_INDEX].len / (s->version == 3 ? 2 : 6))
        SPECSEG_FAIL();
    uint64_t fences = (s->n_series + 63) / 64 + (s->n_chunks + 63) / 64;
    return sec[SPECSEG_FENCES].len == 24 * fences ? 0 : -(int)__LINE__;
}

/* The fence of block b of a section (0: series table, 1: index): key, offset, hash; the block's bytes checked. */
static inline int specseg_fence(specseg *s, const uint8_t *p, const specseg_section sec[6], int of_index,
                                size_t b, uint64_t *key, uint64_t *start)
{
    size_t blocks = of_index ? (s->n_chunks + 63) / 64 : (s->n_series + 63) / 64;
    const uint8_t *f = p + sec[SPECSEG_FENCES].off + 24 * ((of_index ? (s->n_series + 63) / 64 : 0) + b);
    uint64_t len = sec[of_index ? SPECSEG_INDEX : SPECSEG_SERIES].len;
    uint64_t end = b + 1 < blocks ? specseg_u64(f + 24 + 8) : len;
    *key = specseg_u64(f);
    *start = specseg_u64(f + 8);
    if ((b == 0 && *start != 0) || *start >= end || end > len) SPECSEG_FAIL();
    const uint8_t *block = p + sec[of_index ? SPECSEG_INDEX : SPECSEG_SERIES].off + *start;
    return specseg_hash_ok(s, block, (size_t)(end - *start), f + 16) ? 0 : -(int)__LINE__;
}

static inline int specseg_series_table(specseg *s, const uint8_t *p, const specseg_section sec[6])
{
    const uint8_t *t = p + sec[SPECSEG_SERIES].off;
    size_t size = (size_t)sec[SPECSEG_SERIES].len, pos = 0;
    for (uint32_t i = 0; i < s->n_series; i++) {
        uint64_t id, len, key = 0, start = 0;
        if (i % 64 == 0 && s->version > 1) {
            SPECSEG_TRY(specseg_fence(s, p, sec, 0, i / 64, &key, &start));
            if (start != pos) SPECSEG_FAIL();
        }
        if (spec_uvarint(t, size, &pos, &id)) SPECSEG_FAIL();
        if (s->version < 3) { /* the id itself, ascending */
            if (i > 0 && id <= s->series[i - 1].id) SPECSEG_FAIL();
            if (i % 64 == 0 && s->version == 2 && id != key) SPECSEG_FAIL();
        } else if (i % 64) {
            id += s->series[i - 1].id;
            if (id <= s->series[i - 1].id) SPECSEG_FAIL();
        } else if (id != key || (i > 0 && id <= s->series[i - 1].id)) {
            SPECSEG_FAIL();
        }
        if (spec_uvarint(t, size, &pos, &len) || len > 4096 || len > size - pos) SPECSEG_FAIL();
        s->series[i] = (specseg_series){id, t + pos, (size_t)len};
        pos += (size_t)len;
    }
    return pos == size ? 0 : -(int)__LINE__;
}

/* One index entry after prev (a block's first after the README's virtual entry). */
static inline int specseg_entry_read(specseg *s, const uint8_t *t, size_t size, size_t *pos,
                                     const specseg_entry *prev, uint64_t prev_end, specseg_entry *e)
{
    if (*pos >= size) SPECSEG_FAIL();
    unsigned flags = t[(*pos)++];
    uint64_t v, ordinal = prev->ordinal, first = (uint64_t)prev->first_ts;
    uint64_t prev_span = (uint64_t)prev->last_ts - (uint64_t)prev->first_ts, span = prev_span;
    if ((flags & 3) == 3 || (flags & 0x80) || ((flags & 0x40) && (flags & 0x0c))) SPECSEG_FAIL();
    if ((flags & 3) == 1) ordinal++;
    if ((flags & 3) == 2) {
        if (spec_uvarint(t, size, pos, &v) || v < 2) SPECSEG_FAIL();
        ordinal += v;
    }
    if (ordinal >= s->n_series) SPECSEG_FAIL();
    if (ordinal == prev->ordinal) /* the next chunk of a series: its last timestamp plus its mean step */
        first = (uint64_t)prev->last_ts + (prev->count > 1 ? prev_span / (prev->count - 1) : 0);
    if (flags & 0x40) {
        if (*pos >= size) SPECSEG_FAIL();
        unsigned both = t[(*pos)++];
        if (!(both & 15) || !(both >> 4)) SPECSEG_FAIL();
        first += ((both & 15) >> 1) ^ (0 - (uint64_t)(both & 1));
        span += ((both >> 4) >> 1) ^ (0 - (uint64_t)(both >> 4 & 1));
    }
    if (flags & 0x04) {
        if (specseg_zigzag(t, size, pos, &v)) SPECSEG_FAIL();
        first += v;
    }
    if (flags & 0x08) {
        if (specseg_zigzag(t, size, pos, &v)) SPECSEG_FAIL();
        span += v;
    }
    uint64_t count = prev->count, offset = prev_end, length;
    if ((flags & 0x10) && spec_uvarint(t, size, pos, &count)) SPECSEG_FAIL();
    if (flags & 0x20) {
        if (specseg_zigzag(t, size, pos, &v)) SPECSEG_FAIL();
        offset += v;
    }
    if (spec_uvarint(t, size, pos, &length)) SPECSEG_FAIL();
    *e = (specseg_entry){.ordinal = (uint32_t)ordinal, .count = (uint32_t)count, .first_ts = (int64_t)first,
                         .last_ts = (int64_t)(first + span), .offset = offset, .length = length};
    return count >= 1 && count <= 65535 ? 0 : -(int)__LINE__;
}

/* first + delta as an int64, or -1 when it is not one. */
static inline int specseg_add_ts(int64_t first, uint64_t delta, int64_t *out)
{
    if (delta > (uint64_t)INT64_MAX - (uint64_t)first) return -1;
    *out = (int64_t)((uint64_t)first + delta);
    return 0;
}

/* README "Summary blob v1": the fields before the sketch. */
typedef struct {
    uint64_t count, nan_count, inf_count;
    int64_t first_ts, last_ts;
    const uint8_t *sketch;
    size_t sketch_size;
} specseg_summary;

/* @return 0, or minus the line of the rule the blob breaks (a version other than 1 included). */
static inline int specseg_summary_parse(const uint8_t *b, size_t size, specseg_summary *out)
{
    size_t pos = 1;
    uint64_t span = 0;
    memset(out, 0, sizeof *out);
    if (size < 1 || b[0] != 0xd1) SPECSEG_FAIL();
    if (spec_uvarint(b, size, &pos, &out->count) || out->count > 65535) SPECSEG_FAIL();
    if (out->count >= 1) {
        uint64_t first;
        if (specseg_zigzag(b, size, &pos, &first) || spec_uvarint(b, size, &pos, &span)) SPECSEG_FAIL();
        out->first_ts = (int64_t)first;
        if (specseg_add_ts(out->first_ts, span, &out->last_ts)) SPECSEG_FAIL();
    }
    if (spec_uvarint(b, size, &pos, &out->nan_count) || out->nan_count > out->count ||
        spec_uvarint(b, size, &pos, &out->inf_count) || out->inf_count > out->count - out->nan_count)
        SPECSEG_FAIL();
    out->sketch = b + pos;
    out->sketch_size = size - pos;
    return 0;
}

/* A v1/v2 record: it repeats its entry (series id, times, count, codec) and ends with its own XXH3. */
static inline int specseg_record_v2(specseg *s, const uint8_t *r, size_t size, specseg_entry *e)
{
    if (size < 8 || !specseg_hash_ok(s, r, size - 8, r + size - 8)) SPECSEG_FAIL();
    size -= 8;
    size_t pos = 0;
    uint64_t id, first_rel, span, count, summary_size, chunk_size;
    int64_t first, last;
    if (spec_uvarint(r, size, &pos, &id) || spec_uvarint(r, size, &pos, &first_rel) ||
        spec_uvarint(r, size, &pos, &span) || spec_uvarint(r, size, &pos, &count) || pos >= size)
        SPECSEG_FAIL();
    unsigned codec = r[pos++];
    if (spec_uvarint(r, size, &pos, &summary_size) || summary_size > size - pos) SPECSEG_FAIL();
    if (summary_size) e->summary = r + pos, e->summary_size = (size_t)summary_size;
    pos += (size_t)summary_size;
    if (spec_uvarint(r, size, &pos, &chunk_size) || chunk_size != size - pos || chunk_size < 2) SPECSEG_FAIL();
    e->chunk = r + pos;
    e->chunk_size = (size_t)chunk_size;
    if (id != s->series[e->ordinal].id || specseg_add_ts(s->min_ts, first_rel, &first) || first != e->first_ts ||
        specseg_add_ts(first, span, &last) || last != e->last_ts || count != e->count || codec != (e->chunk[1] & 15u))
        SPECSEG_FAIL();
    return s->mapping != 0xff && !e->summary ? -(int)__LINE__ : 0;
}

/* A v3 record: [uvarint summary length, summary,] the chunk. */
static inline int specseg_record_v3(const specseg *s, const uint8_t *r, size_t size, specseg_entry *e)
{
    size_t pos = 0;
    if (s->mapping != 0xff) {
        uint64_t summary_size;
        if (spec_uvarint(r, size, &pos, &summary_size) || summary_size == 0 || summary_size > size - pos)
            SPECSEG_FAIL();
        e->summary = r + pos;
        e->summary_size = (size_t)summary_size;
        pos += (size_t)summary_size;
    }
    e->chunk = r + pos;
    e->chunk_size = size - pos;
    return 0;
}

/* Whether an entry's record lies inside the records' region [48, series table), not empty. */
static inline int specseg_record_inside(const specseg_entry *e, uint64_t records_end)
{
    return e->offset >= 48 && e->offset <= records_end && e->length <= records_end - e->offset && e->length != 0;
}

/* The record of an entry: inside the records' region; its summary, its chunk, and the chunk's count and time range
 * equal to the entry's (what verify reads from the chunk). */
static inline int specseg_record(specseg *s, const uint8_t *p, uint64_t records_end, specseg_entry *e)
{
    static int64_t ts[SPEC_MAX];
    static uint64_t bits[SPEC_MAX];
    if (!specseg_record_inside(e, records_end)) SPECSEG_FAIL();
    const uint8_t *r = p + e->offset;
    SPECSEG_TRY(s->version == 3 ? specseg_record_v3(s, r, (size_t)e->length, e)
                                : specseg_record_v2(s, r, (size_t)e->length, e));
    long n = spec_decode(e->chunk, e->chunk_size, ts, bits, SPEC_MAX);
    if (n == -2) n = spec2_decode(e->chunk, e->chunk_size, ts, bits, SPEC_MAX);
    if (n <= 0 || (uint64_t)n != e->count || ts[0] != e->first_ts || ts[n - 1] != e->last_ts) SPECSEG_FAIL();
    if (e->summary && s->mapping != 0xff) { /* v2 could store one without them: not read */
        /* "Summary blob": its count and time range are the chunk's, its sketch one of the header's mapping. */
        specseg_summary info;
        if (specseg_summary_parse(e->summary, e->summary_size, &info) || info.count != e->count ||
            info.first_ts != e->first_ts || info.last_ts != e->last_ts)
            SPECSEG_FAIL();
        tschunk_sketch_options so = {(tschunk_mapping_kind)s->mapping, 0, 0, 0, {NULL, NULL, NULL}, 0};
        if (!s->scratch && tschunk_sketch_create_mapping(&s->scratch, (tschunk_mapping_kind)s->mapping, s->gamma,
                                                         s->offset, &so))
            SPECSEG_FAIL();
        if (tschunk_summary_merge(s->scratch, e->summary, e->summary_size)) SPECSEG_FAIL();
    }
    return 0;
}

/* A v1/v2 index entry: six uvarints. */
static inline int specseg_entry_v2(const specseg *s, const uint8_t *t, size_t size, size_t *pos, specseg_entry *e)
{
    uint64_t ordinal, first_rel, span, count, offset, length;
    if (spec_uvarint(t, size, pos, &ordinal) || spec_uvarint(t, size, pos, &first_rel) ||
        spec_uvarint(t, size, pos, &span) || spec_uvarint(t, size, pos, &count) ||
        spec_uvarint(t, size, pos, &offset) || spec_uvarint(t, size, pos, &length))
        SPECSEG_FAIL();
    *e = (specseg_entry){.ordinal = (uint32_t)ordinal, .count = (uint32_t)count, .offset = offset, .length = length};
    if (ordinal >= s->n_series || count == 0 || count > 65535 || specseg_add_ts(s->min_ts, first_rel, &e->first_ts) ||
        specseg_add_ts(e->first_ts, span, &e->last_ts))
        SPECSEG_FAIL();
    return 0;
}

static inline int specseg_index(specseg *s, const uint8_t *p, const specseg_section sec[6])
{
    const uint8_t *t = p + sec[SPECSEG_INDEX].off;
    size_t size = (size_t)sec[SPECSEG_INDEX].len, pos = 0;
    uint64_t hashes[64];
    for (uint32_t block = 0; block * 64u < s->n_chunks; block++) {
        uint64_t key = 0, start = 0, prev_end = 48;
        if (s->version > 1) SPECSEG_TRY(specseg_fence(s, p, sec, 1, block, &key, &start));
        if (s->version > 1 && start != pos) SPECSEG_FAIL();
        specseg_entry prev = {.first_ts = s->min_ts, .last_ts = s->min_ts};
        uint32_t first = block * 64, n = s->n_chunks - first < 64 ? s->n_chunks - first : 64;
        for (uint32_t i = first; i < first + n; i++) {
            specseg_entry *e = &s->entries[i];
            SPECSEG_TRY(s->version == 3 ? specseg_entry_read(s, t, size, &pos, &prev, prev_end, e)
                                        : specseg_entry_v2(s, t, size, &pos, e));
            if (e->first_ts < s->min_ts) SPECSEG_FAIL(); /* the header's min_ts: "the segment's minimum" */
            if (i == first && s->version > 1 && e->ordinal != key) SPECSEG_FAIL();
            if (i > 0 && (e->ordinal < s->entries[i - 1].ordinal ||
                          (e->ordinal == s->entries[i - 1].ordinal && e->first_ts < s->entries[i - 1].first_ts)))
                SPECSEG_FAIL();
            int bad_record = specseg_record(s, p, sec[SPECSEG_SERIES].off, e);
            /* Fixing checksums goes past a record that breaks a rule once its bytes are known (inside the region,
             * its parts parsed or not): its group's hash and the hashes after it are made right too, so that the
             * rule alone decides. */
            if (bad_record &&
                (s->check_hashes != SPECSEG_FIX_HASHES || !specseg_record_inside(e, sec[SPECSEG_SERIES].off)))
                return bad_record;
            hashes[i - first] = XXH3_64bits(p + e->offset, (size_t)e->length);
            prev = *e;
            prev_end = e->offset + e->length;
        }
        for (uint32_t g = 0; g < n && s->version == 3; g += 1u << s->group_shift, pos += 8) {
            uint32_t in_group = n - g < (1u << s->group_shift) ? n - g : 1u << s->group_shift;
            uint8_t le[64 * 8];
            for (uint32_t k = 0; k < in_group; k++)
                for (int b = 0; b < 8; b++) le[8 * k + b] = (uint8_t)(hashes[g + k] >> (8 * b));
            if (size - pos < 8 || !specseg_hash_ok(s, le, 8 * in_group, t + pos)) SPECSEG_FAIL();
        }
    }
    uint64_t samples = 0;
    for (uint32_t i = 0; i < s->n_chunks; i++) samples += s->entries[i].count;
    if (s->version == 1) s->samples = samples; /* v1's footer has no samples field */
    return pos == size && samples == s->samples ? 0 : -(int)__LINE__;
}

static inline int specseg_tombstones(specseg *s, const uint8_t *p, const specseg_section sec[6])
{
    const uint8_t *t = p + sec[SPECSEG_TOMBS].off;
    size_t size = (size_t)sec[SPECSEG_TOMBS].len, pos = 0;
    long prev = -1;
    while (pos < size) {
        uint64_t at, len, card;
        if (spec_uvarint(t, size, &pos, &at) || (long long)at <= prev || at >= s->n_chunks) SPECSEG_FAIL();
        if (spec_uvarint(t, size, &pos, &len) || len > size - pos) SPECSEG_FAIL();
        specseg_entry *e = &s->entries[at];
        e->gone = calloc(e->count, 1);
        if (!e->gone || specseg_roaring(t + pos, (size_t)len, e->count, e->gone, &card) || card == 0) SPECSEG_FAIL();
        e->deleted = (uint32_t)card;
        s->deleted += card;
        pos += (size_t)len;
        prev = (long)at;
    }
    return 0;
}

static inline int specseg_block_summaries(specseg *s, const uint8_t *p, const specseg_section sec[6])
{
    const uint8_t *t = p + sec[SPECSEG_BLOCKS].off;
    size_t size = (size_t)sec[SPECSEG_BLOCKS].len, pos = 0;
    if (size && s->mapping == 0xff) SPECSEG_FAIL();
    uint64_t next_free = 0;
    tschunk_sketch *scratch = NULL;
    static uint8_t blob[1 << 20];
    static tschunk_chunk_ref refs[65536];
    int rc = 0;
    while (pos < size && !rc) {
        uint64_t first, count, len;
        if (spec_uvarint(t, size, &pos, &first) || spec_uvarint(t, size, &pos, &count) ||
            spec_uvarint(t, size, &pos, &len) || len == 0 || len > size - pos || first < next_free || count < 2 ||
            count > 4096 ||
            count > s->n_chunks || first > s->n_chunks - count) {
            rc = -(int)__LINE__;
            break;
        }
        int untouched = 1;
        for (uint64_t i = first; i < first + count; i++) {
            const specseg_entry *e = &s->entries[i];
            if (e->ordinal != s->entries[first].ordinal) rc = -(int)__LINE__;
            untouched &= !e->gone;
            refs[i - first] = (tschunk_chunk_ref){e->chunk, e->chunk_size, e->summary, e->summary_size};
        }
        /* "verify recomputes every block summary that a query could take": one whose chunks have no deletions. */
        if (!rc && untouched) {
            if (!scratch) {
                tschunk_sketch_options so = {(tschunk_mapping_kind)s->mapping, 0, 0, 0, {NULL, NULL, NULL}, 0};
                if (tschunk_sketch_create_mapping(&scratch, (tschunk_mapping_kind)s->mapping, s->gamma, s->offset,
                                                  &so)) {
                    rc = -(int)__LINE__;
                    break;
                }
            }
            /* Or, "as releases before 0.55.0 wrote it", with the SUM of Kahan's sum alone. */
            int same = 0;
            for (int sum_alone = 0; sum_alone < 2 && !same; sum_alone++) {
                size_t got = tsc_summary_combine_as(scratch, refs, (size_t)count, blob, sizeof blob, sum_alone);
                same = !tschunk_is_error(got) && got == len && !memcmp(blob, t + pos, got);
            }
            if (!same) rc = -(int)__LINE__;
        }
        s->n_blocks++;
        pos += (size_t)len;
        next_free = first + count;
    }
    tschunk_sketch_free(scratch);
    return rc;
}

static inline void specseg_free(specseg *s)
{
    if (s->entries)
        for (uint32_t i = 0; i < s->n_chunks; i++) free(s->entries[i].gone);
    free(s->series);
    free(s->entries);
    free(s->in_bitmap);
    tschunk_sketch_free(s->scratch);
    memset(s, 0, sizeof *s);
}

/* Read a whole segment (format 1, 2 or 3) as `verify` would. @return 0, else minus the line of the
 * rule it breaks. specseg_free(s) after any answer. */
static inline int specseg_read(specseg *s, const uint8_t *p, size_t size, int check_hashes)
{
    specseg_section sec[6];
    memset(s, 0, sizeof *s);
    s->check_hashes = check_hashes;
    SPECSEG_TRY(specseg_header(s, p, size));
    SPECSEG_TRY(specseg_footer(s, p, size, sec));
    s->series = calloc((size_t)s->n_series + 1, sizeof *s->series);
    s->entries = calloc((size_t)s->n_chunks + 1, sizeof *s->entries);
    s->in_bitmap = calloc((size_t)s->n_series + 1, 1);
    if (!s->series || !s->entries || !s->in_bitmap) SPECSEG_FAIL();
    SPECSEG_TRY(specseg_series_table(s, p, sec));
    SPECSEG_TRY(specseg_index(s, p, sec));
    SPECSEG_TRY(specseg_tombstones(s, p, sec));
    SPECSEG_TRY(specseg_block_summaries(s, p, sec));
    uint64_t card;
    s->bitmap = p + sec[SPECSEG_BITMAP].off;
    s->bitmap_size = (size_t)sec[SPECSEG_BITMAP].len;
    SPECSEG_TRY(specseg_roaring(s->bitmap, s->bitmap_size, s->n_series, s->in_bitmap, &card));
    /* The bitmap holds exactly the ordinals that have a chunk. */
    uint8_t *has_chunk = calloc((size_t)s->n_series + 1, 1);
    if (!has_chunk) SPECSEG_FAIL();
    for (uint32_t i = 0; i < s->n_chunks; i++) has_chunk[s->entries[i].ordinal] = 1;
    int same = memcmp(has_chunk, s->in_bitmap, s->n_series) == 0;
    free(has_chunk);
    return same ? 0 : -(int)__LINE__;
}

/* The library's reader, opened with `flags`, answers as the README reader read s from p: info, series, every
 * chunk's entry, bytes and samples without the deleted ones, the series bitmap. @return 0, or the line where they
 * part. */
static inline int specseg_same_as_reader(const specseg *s, const uint8_t *p, size_t size, unsigned flags)
{
    static int64_t lib_ts[SPEC_MAX], spec_ts[SPEC_MAX];
    static double lib_values[SPEC_MAX];
    static uint64_t spec_bits[SPEC_MAX];
    tschunk_segment *seg;
    if (tschunk_segment_open(&seg, p, size, flags, NULL)) SPECSEG_PART();
    int line = 0;
    tschunk_segment_info info;
    tschunk_segment_get_info(seg, &info);
    if (info.format_version != s->version || info.series != s->n_series || info.chunks != s->n_chunks ||
        info.samples != s->samples || info.deleted != s->deleted || info.min_ts != s->min_ts ||
        (unsigned)info.ts_unit != s->unit || info.has_summaries != (s->mapping != 0xff) ||
        info.summary_blocks != s->n_blocks)
        line = __LINE__;
    if (info.has_summaries &&
        ((unsigned)info.summary_mapping != s->mapping || memcmp(&info.summary_gamma, &s->gamma, 8) ||
         memcmp(&info.summary_offset, &s->offset, 8)))
        line = __LINE__;
    for (uint32_t o = 0; o < s->n_series && !line; o++) {
        uint64_t id;
        const char *name;
        size_t len;
        if (tschunk_segment_series(seg, o, &id, &name, &len) || id != s->series[o].id ||
            (const uint8_t *)name != s->series[o].name || len != s->series[o].name_len)
            line = __LINE__;
    }
    for (uint32_t i = 0; i < s->n_chunks && !line; i++) {
        const specseg_entry *e = &s->entries[i];
        tschunk_segment_chunk_info c;
        if (tschunk_segment_chunk(seg, i, &c) || c.ordinal != e->ordinal || c.count != e->count ||
            c.deleted != e->deleted || c.first_ts != e->first_ts || c.last_ts != e->last_ts ||
            c.ref.chunk != e->chunk || c.ref.chunk_size != e->chunk_size ||
            c.ref.summary != (e->deleted ? NULL : e->summary) ||
            (!e->deleted && c.ref.summary_size != e->summary_size)) {
            line = __LINE__;
            break;
        }
        long n = spec_decode(e->chunk, e->chunk_size, spec_ts, spec_bits, SPEC_MAX);
        if (n == -2) n = spec2_decode(e->chunk, e->chunk_size, spec_ts, spec_bits, SPEC_MAX);
        size_t live = tschunk_segment_decode(seg, i, lib_ts, lib_values, SPEC_MAX), kept = 0;
        if (tschunk_is_error(live) || n != (long)e->count) line = __LINE__;
        for (long k = 0; k < n && !line; k++) {
            if (e->gone && e->gone[k]) continue;
            if (kept >= live || lib_ts[kept] != spec_ts[k] || memcmp(&lib_values[kept], &spec_bits[k], 8))
                line = __LINE__;
            kept++;
        }
        if (!line && kept != live) line = __LINE__;
    }
    const void *bitmap;
    size_t bitmap_size;
    tschunk_segment_series_bitmap(seg, &bitmap, &bitmap_size);
    if (!line && (bitmap != s->bitmap || bitmap_size != s->bitmap_size)) line = __LINE__;
    tschunk_segment_close(seg);
    return line;
}

/* Both ways of opening (a full open, a lazy one: version 1 has no lazy form and opens fully). */
static inline int specseg_same_as_library(const specseg *s, const uint8_t *p, size_t size)
{
    int line = specseg_same_as_reader(s, p, size, 0);
    return line ? line : specseg_same_as_reader(s, p, size, TSCHUNK_SEGMENT_LAZY);
}

/* Make every checksum of a damaged segment right again, as far as its structure parses (a checksum covers
 * others: a few passes). */
static inline void specseg_rehash(uint8_t *p, size_t size)
{
    for (int pass = 0; pass < 8; pass++) {
        specseg s;
        specseg_read(&s, p, size, SPECSEG_FIX_HASHES);
        unsigned fixed = s.fixed;
        specseg_free(&s);
        if (!fixed) break;
    }
}

#endif
