/*
 * Validator of CRoaring's portable serialization (32-bit bitmaps), run before
 * any blob reaches roaring: Debian's CRoaring 0.2.66 trusts the counts inside
 * a blob, and a crafted one makes later calls read or write out of bounds.
 *
 * Layout (github.com/RoaringBitmap/RoaringFormatSpec):
 *   cookie u32: 12346 (no run containers), then u32 container count; or
 *               12347 | (count - 1) << 16, then a bitset of ceil(count/8)
 *               bytes flagging run containers
 *   count x (u16 key, u16 cardinality - 1)
 *   count x u32 offsets (from the blob's start), unless the run cookie is
 *               used with fewer than 4 containers
 *   containers: run (u16 n, n x (u16 start, u16 length - 1)), array
 *               (cardinality <= 4096: sorted u16 values) or bitset (8 KiB)
 * Accepted only when the run flags' padding bits are 0, keys and values are strictly increasing, runs do not
 * overlap or pass 65535, every declared cardinality is the real one, and every
 * offset points where its container is.
 */
#include "roaring_check.h"

#define COOKIE_NO_RUNS 12346u
#define COOKIE_RUNS 12347u
#define NO_OFFSET_THRESHOLD 4u
#define ARRAY_MAX 4096u
#define BITSET_BYTES 8192u

static uint32_t get16(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t get32(const uint8_t *p) { return get16(p) | get16(p + 2) << 16; }

/* One container at data[*pos]; advances *pos. Returns 0 or an error code. */
static size_t check_container(const uint8_t *data, size_t size, size_t *pos, int is_run, uint32_t card,
                              uint32_t *last_value)
{
    const uint8_t *p = data + *pos;
    size_t room = size - *pos;
    if (is_run) {
        if (room < 2) return TSC_ERROR(TRUNCATED);
        uint32_t runs = get16(p), total = 0;
        if (room < 2 + 4 * (size_t)runs) return TSC_ERROR(TRUNCATED);
        int64_t prev_end = -1;
        for (uint32_t r = 0; r < runs; r++) {
            uint32_t start = get16(p + 2 + 4 * r), len = get16(p + 4 + 4 * r);
            if ((int64_t)start <= prev_end || start + len > 0xffffu) return TSC_ERROR(CORRUPT);
            prev_end = start + len;
            total += len + 1;
        }
        if (total != card) return TSC_ERROR(CORRUPT);
        *last_value = (uint32_t)prev_end;
        *pos += 2 + 4 * (size_t)runs;
    } else if (card <= ARRAY_MAX) {
        if (room < 2 * (size_t)card) return TSC_ERROR(TRUNCATED);
        for (uint32_t i = 1; i < card; i++)
            if (get16(p + 2 * i) <= get16(p + 2 * (i - 1))) return TSC_ERROR(CORRUPT);
        *last_value = get16(p + 2 * (card - 1));
        *pos += 2 * (size_t)card;
    } else {
        if (room < BITSET_BYTES) return TSC_ERROR(TRUNCATED);
        uint32_t total = 0, last = 0;
        for (uint32_t w = 0; w < BITSET_BYTES / 8; w++) {
            uint64_t word = tsc_load64_le(p + 8 * w);
            total += tsc_popcount64(word);
            if (word) last = 64 * w + 63 - tsc_clz64(word);
        }
        if (total != card) return TSC_ERROR(CORRUPT);
        *last_value = last;
        *pos += BITSET_BYTES;
    }
    return 0;
}

size_t tsc_roaring_check(const void *blob, size_t size, tsc_roaring_summary *out)
{
    const uint8_t *data = (const uint8_t *)blob;
    if (size < 4) return TSC_ERROR(TRUNCATED);
    uint32_t cookie = get32(data), count;
    size_t pos = 4;
    const uint8_t *run_flags = NULL;
    if (cookie == COOKIE_NO_RUNS) {
        if (size < 8) return TSC_ERROR(TRUNCATED);
        count = get32(data + 4);
        if (count > 65536u) return TSC_ERROR(CORRUPT);
        pos = 8;
    } else if ((cookie & 0xffffu) == COOKIE_RUNS) {
        count = (cookie >> 16) + 1;
        run_flags = data + pos;
        if (size - pos < (count + 7) / 8) return TSC_ERROR(TRUNCATED);
        if (count % 8 && run_flags[count / 8] >> (count % 8)) return TSC_ERROR(CORRUPT); /* padding bits are 0 */
        pos += (count + 7) / 8;
    } else {
        return TSC_ERROR(BAD_MAGIC);
    }
    const uint8_t *header = data + pos;
    if (size - pos < 4 * (size_t)count) return TSC_ERROR(TRUNCATED);
    pos += 4 * (size_t)count;
    const uint8_t *offsets = NULL;
    if (!run_flags || count >= NO_OFFSET_THRESHOLD) {
        if (size - pos < 4 * (size_t)count) return TSC_ERROR(TRUNCATED);
        offsets = data + pos;
        pos += 4 * (size_t)count;
    }
    tsc_roaring_summary sum = {0, 0, 0};
    for (uint32_t i = 0; i < count; i++) {
        uint32_t key = get16(header + 4 * i), card = get16(header + 4 * i + 2) + 1, last;
        if (i && key <= get16(header + 4 * (i - 1))) return TSC_ERROR(CORRUPT);
        if (offsets && get32(offsets + 4 * i) != pos) return TSC_ERROR(CORRUPT);
        int is_run = run_flags && (run_flags[i / 8] >> (i % 8) & 1);
        size_t err = check_container(data, size, &pos, is_run, card, &last);
        if (err) return err;
        sum.cardinality += card;
        sum.max_value = key << 16 | last;
    }
    sum.bytes = pos;
    if (out) *out = sum;
    return 0;
}
