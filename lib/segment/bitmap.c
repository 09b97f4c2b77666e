/*
 * Portable roaring blobs written from runs and read back as runs, without an allocation (bitmap.h says why
 * not through CRoaring). A container holds the values with one 16-bit key (value >> 16); its forms:
 *   array:  cardinality <= 4096 sorted u16 values                   2c bytes
 *   bitset: 1024 u64 words, value v at bit v % 64 of word v / 64    8192 bytes
 *   run:    u16 n, n x (u16 start, u16 length - 1)                  2 + 4n bytes
 * A bitmap built by adding values holds arrays up to 4096 values, bitsets past; CRoaring's run_optimize then
 * turns a container into a run one when 2 + 4n is below the array's 2c + 2 (its measure counts a cardinality
 * the portable form does not write) or, past 4096 values, below the bitset's 8192.
 */
#include "bitmap.h"

#define COOKIE_NO_RUNS 12346u
#define COOKIE_RUNS 12347u
#define NO_OFFSET_THRESHOLD 4u
#define ARRAY_MAX 4096u
#define BITSET_BYTES 8192u

enum { FORM_ARRAY, FORM_BITSET, FORM_RUN };

static void put16(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
    put16(p, v & 0xffffu);
    put16(p + 2, v >> 16);
}

static uint32_t get16(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t get32(const uint8_t *p) { return get16(p) | get16(p + 2) << 16; }

/* One container: its key, its runs' span in the list, its values and runs once clipped to the key. */
typedef struct {
    uint32_t key;
    size_t first_run, end_run;
    uint32_t card, nruns;
    int form;
} container;

static uint32_t clip_lo(const tsc_run *r, uint32_t key) { return r->first >> 16 < key ? 0 : r->first & 0xffffu; }
static uint32_t clip_hi(const tsc_run *r, uint32_t key) { return r->last >> 16 > key ? 0xffffu : r->last & 0xffffu; }

/* The container of `key`, from run *at (the first that reaches it); *at moves to the first run that reaches the
 * next container (the last of this one when it goes on into it). */
static container next_container(const tsc_run *runs, size_t n, size_t *at, uint32_t key)
{
    container c = {key, *at, *at, 0, 0, FORM_ARRAY};
    while (c.end_run < n && runs[c.end_run].first >> 16 <= key) {
        const tsc_run *r = &runs[c.end_run++];
        c.card += clip_hi(r, key) - clip_lo(r, key) + 1;
        c.nruns++;
    }
    *at = runs[c.end_run - 1].last >> 16 > key ? c.end_run - 1 : c.end_run;
    size_t as_run = 2 + 4 * (size_t)c.nruns, as_array = 2 * (size_t)c.card + 2; /* run_optimize's measures */
    if (c.card > ARRAY_MAX) c.form = as_run < BITSET_BYTES ? FORM_RUN : FORM_BITSET;
    else c.form = as_run < as_array ? FORM_RUN : FORM_ARRAY;
    return c;
}

static size_t container_bytes(const container *c)
{
    return c->form == FORM_RUN ? 2 + 4 * (size_t)c->nruns : c->form == FORM_ARRAY ? 2 * (size_t)c->card : BITSET_BYTES;
}

static void write_container(uint8_t *p, const tsc_run *runs, const container *c)
{
    if (c->form == FORM_BITSET) memset(p, 0, BITSET_BYTES);
    if (c->form == FORM_RUN) {
        put16(p, c->nruns);
        p += 2;
    }
    for (size_t i = c->first_run; i < c->end_run; i++) {
        uint32_t lo = clip_lo(&runs[i], c->key), hi = clip_hi(&runs[i], c->key);
        if (c->form == FORM_RUN) {
            put16(p, lo);
            put16(p + 2, hi - lo);
            p += 4;
        } else if (c->form == FORM_ARRAY) {
            for (uint32_t v = lo; v <= hi; v++, p += 2) put16(p, v);
        } else {
            for (uint32_t v = lo; v <= hi; v++) p[v / 8] |= (uint8_t)(1u << (v % 8));
        }
    }
}

/* Walk the containers: count them and whether any is a run one; with out, write the blob. @return its length. */
static size_t walk(uint8_t *out, const tsc_run *runs, size_t n)
{
    uint32_t count = 0, any_run = 0;
    size_t data = 0, at = 0;
    for (uint32_t key = 0; at < n; count++) {
        key = key > runs[at].first >> 16 ? key : runs[at].first >> 16;
        container c = next_container(runs, n, &at, key);
        any_run |= c.form == FORM_RUN;
        data += container_bytes(&c);
        key++;
    }
    int offsets = !any_run || count >= NO_OFFSET_THRESHOLD;
    size_t head = (any_run ? 4 + (count + 7) / 8 : 8) + 4 * (size_t)count + (offsets ? 4 * (size_t)count : 0);
    if (!out) return head + data;
    uint8_t *flags = out + 4, *keys = out + (any_run ? 4 + (count + 7) / 8 : 8), *offs = keys + 4 * (size_t)count;
    if (any_run) {
        put32(out, COOKIE_RUNS | (count - 1) << 16);
        memset(flags, 0, (count + 7) / 8);
    } else {
        put32(out, COOKIE_NO_RUNS);
        put32(out + 4, count);
    }
    size_t pos = head;
    at = 0;
    for (uint32_t i = 0, key = 0; i < count; i++, key++) {
        key = key > runs[at].first >> 16 ? key : runs[at].first >> 16;
        container c = next_container(runs, n, &at, key);
        if (c.form == FORM_RUN) flags[i / 8] |= (uint8_t)(1u << (i % 8));
        put16(keys + 4 * i, key);
        put16(keys + 4 * i + 2, c.card - 1);
        if (offsets) put32(offs + 4 * i, (uint32_t)pos);
        write_container(out + pos, runs, &c);
        pos += container_bytes(&c);
    }
    return pos;
}

size_t tsc_bitmap_size(const tsc_run *runs, size_t n) { return walk(NULL, runs, n); }

size_t tsc_bitmap_write(uint8_t *out, const tsc_run *runs, size_t n) { return walk(out, runs, n); }

/* ---- reading ------------------------------------------------------------------------------------------ */

void tsc_bitmap_iter_init(tsc_bitmap_iter *it, const uint8_t *blob)
{
    uint32_t cookie = get32(blob);
    it->data = blob;
    it->index = it->within = 0;
    if (cookie == COOKIE_NO_RUNS) {
        it->count = get32(blob + 4);
        it->run_flags = NULL;
        it->header = blob + 8;
    } else {
        it->count = (cookie >> 16) + 1;
        it->run_flags = blob + 4;
        it->header = blob + 4 + (it->count + 7) / 8;
    }
    int offsets = !it->run_flags || it->count >= NO_OFFSET_THRESHOLD;
    it->pos = (size_t)(it->header - blob) + 4 * (size_t)it->count * (offsets ? 2 : 1);
}

/* The current container's length in the blob. */
static size_t current_bytes(const tsc_bitmap_iter *it, int is_run, uint32_t card)
{
    if (is_run) return 2 + 4 * (size_t)get16(it->data + it->pos);
    return card <= ARRAY_MAX ? 2 * (size_t)card : BITSET_BYTES;
}

/* The next run of set bits at or after bit `from` of a bitset container: @return 0 when there is none. */
static int bitset_run(const uint8_t *bits, uint32_t from, uint32_t *lo, uint32_t *hi)
{
    uint32_t w = from / 64;
    uint64_t word = w < 1024 ? tsc_load64_le(bits + 8 * w) & (~UINT64_C(0) << (from % 64)) : 0;
    while (!word && ++w < 1024) word = tsc_load64_le(bits + 8 * w);
    if (w >= 1024) return 0;
    *lo = 64 * w + (uint32_t)__builtin_ctzll(word);
    uint64_t clear = ~tsc_load64_le(bits + 8 * w) & (~UINT64_C(0) << (*lo % 64));
    while (!clear && ++w < 1024) clear = ~tsc_load64_le(bits + 8 * w);
    *hi = w >= 1024 ? 0xffffu : 64 * w + (uint32_t)__builtin_ctzll(clear) - 1;
    return 1;
}

int tsc_bitmap_next_run(tsc_bitmap_iter *it, tsc_run *run)
{
    for (; it->index < it->count; it->index++, it->within = 0) {
        uint32_t key = get16(it->header + 4 * it->index), card = get16(it->header + 4 * it->index + 2) + 1;
        int is_run = it->run_flags && (it->run_flags[it->index / 8] >> (it->index % 8) & 1);
        const uint8_t *p = it->data + it->pos;
        uint32_t lo = 0, hi = 0;
        int found;
        if (is_run) {
            found = it->within < get16(p);
            if (found) {
                lo = get16(p + 2 + 4 * it->within);
                hi = lo + get16(p + 4 + 4 * it->within);
            }
            it->within++;
        } else if (card <= ARRAY_MAX) {
            found = it->within < card;
            if (found) lo = hi = get16(p + 2 * it->within);
            it->within++;
        } else {
            found = it->within <= 0xffffu && bitset_run(p, it->within, &lo, &hi);
            it->within = hi + 1;
        }
        if (found) {
            *run = (tsc_run){key << 16 | lo, key << 16 | hi};
            return 1;
        }
        it->pos += current_bytes(it, is_run, card);
    }
    return 0;
}
