/* The bit writer and reader against a naive bit-at-a-time reference. */
#include "test_util.h"
#include "codec/bitstream.h"
#include "codec/xor.h"

static void naive_put(uint8_t *buf, uint64_t *pos, uint64_t v, unsigned n)
{
    for (unsigned i = 0; i < n; i++, (*pos)++) {
        unsigned bit = (unsigned)(v >> (n - 1 - i)) & 1;
        if (bit) buf[*pos >> 3] |= (uint8_t)(0x80 >> (*pos & 7));
    }
}

static uint64_t naive_get(const uint8_t *buf, uint64_t *pos, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++, (*pos)++) v = (v << 1) | ((buf[*pos >> 3] >> (7 - (*pos & 7))) & 1);
    return v;
}

static uint64_t mask(unsigned n) { return n == 64 ? ~UINT64_C(0) : (UINT64_C(1) << n) - 1; }

/* Random widths 0..64 biased towards the small fields codecs write most. */
static unsigned random_width(uint64_t *rng)
{
    uint64_t r = wl_rng(rng);
    return (r & 3) ? (unsigned)((r >> 8) % 20) : (unsigned)((r >> 8) % 65);
}

Test(bitstream, matches_naive_reference_millions_of_fields)
{
    const size_t fields = 2000000, per_round = 50000;
    uint64_t rng = 42, total = 0;
    size_t cap = per_round * 8 + 16;
    uint8_t *ours = calloc(cap, 1), *ref = calloc(cap, 1);
    uint64_t *vals = malloc(per_round * sizeof *vals);
    unsigned *widths = malloc(per_round * sizeof *widths);
    for (size_t round = 0; round < fields / per_round; round++) {
        memset(ours, 0xa5, cap); /* the writer must not rely on zeroed memory */
        memset(ref, 0, cap);
        tschunk_bit_writer w;
        tsc_bw_init(&w, ours, (uint64_t)cap * 8);
        uint64_t ref_pos = 0;
        for (size_t i = 0; i < per_round; i++) {
            widths[i] = random_width(&rng);
            vals[i] = wl_rng(&rng) & mask(widths[i]);
            tsc_bw_put64(&w, vals[i], widths[i]);
            naive_put(ref, &ref_pos, vals[i], widths[i]);
        }
        cr_assert_eq(w.bit_count, ref_pos);
        size_t bytes = tsc_bw_bytes(&w);
        cr_assert(memcmp(ours, ref, bytes) == 0, "round %zu: writer differs from reference", round);
        tschunk_bit_reader r;
        tsc_br_init(&r, ref, bytes);
        uint64_t naive_pos = 0;
        for (size_t i = 0; i < per_round; i++) {
            uint64_t got = tsc_br_get64(&r, widths[i]);
            cr_assert_eq(got, vals[i], "round %zu field %zu width %u", round, i, widths[i]);
            cr_assert_eq(naive_get(ref, &naive_pos, widths[i]), vals[i]);
        }
        cr_assert(!tsc_br_overrun(&r));
        total += per_round;
    }
    cr_assert_eq(total, fields);
    free(ours); free(ref); free(vals); free(widths);
}

/* tsc_bw_put_long (a head of 1-31 bits and a tail that together pass one put) at every alignment, between
 * ordinary fields: the same bits as the reference writes them one by one. */
Test(bitstream, put_long_matches_naive_reference)
{
    const size_t per_round = 20000;
    uint64_t rng = 7;
    size_t cap = per_round * 24 + 16;
    uint8_t *ours = calloc(cap, 1), *ref = calloc(cap, 1);
    for (int round = 0; round < 20; round++) {
        memset(ours, 0x5a, cap);
        memset(ref, 0, cap);
        tschunk_bit_writer w;
        tsc_bw_init(&w, ours, (uint64_t)cap * 8);
        uint64_t ref_pos = 0;
        for (size_t i = 0; i < per_round; i++) {
            unsigned n = random_width(&rng), hl = 1 + (unsigned)(wl_rng(&rng) % 31);
            unsigned tl = TSC_BITS_MAX_FIELD + 1 - hl + (unsigned)(wl_rng(&rng) % (hl + 64 - TSC_BITS_MAX_FIELD));
            uint64_t v = wl_rng(&rng) & mask(n), head = wl_rng(&rng) & mask(hl), tail = wl_rng(&rng) & mask(tl);
            tsc_bw_put64(&w, v, n);
            naive_put(ref, &ref_pos, v, n);
            tsc_bw_put_long(&w, head, hl, tail, tl);
            naive_put(ref, &ref_pos, head, hl);
            naive_put(ref, &ref_pos, tail, tl);
        }
        cr_assert_eq(w.bit_count, ref_pos);
        cr_assert(memcmp(ours, ref, tsc_bw_bytes(&w)) == 0, "round %d: put_long differs from the reference", round);
    }
    free(ours); free(ref);
}

Test(bitstream, reader_never_reads_outside_and_reports_overrun)
{
    /* A 3-byte stream in an exactly-sized heap block: ASan catches any over-read. */
    uint8_t *buf = malloc(3);
    buf[0] = 0xff; buf[1] = 0x00; buf[2] = 0x81;
    tschunk_bit_reader r;
    tsc_br_init(&r, buf, 3);
    cr_assert_eq(tsc_br_get(&r, 4), 0xf);
    cr_assert_eq(tsc_br_get(&r, 20), 0xf0081);
    cr_assert(!tsc_br_overrun(&r));
    cr_assert_eq(tsc_br_get(&r, 1), 0); /* past the end reads zeros ... */
    cr_assert(tsc_br_overrun(&r));      /* ... and is reported */
    free(buf);
}

Test(bitstream, writer_keeps_partial_byte_in_memory)
{
    uint8_t buf[32];
    memset(buf, 0xee, sizeof buf);
    tschunk_bit_writer w;
    tsc_bw_init(&w, buf, 24 * 8);
    tsc_bw_put(&w, 0x5, 3); /* 101 */
    cr_assert_eq(buf[0], 0xa0);
    tsc_bw_put(&w, 0x1ff, 9); /* 1 1111 1111 */
    cr_assert_eq(buf[0], 0xbf);
    cr_assert_eq(buf[1], 0xf0);
    tsc_bw_put64(&w, ~UINT64_C(0), 64);
    cr_assert_eq(w.bit_count, 76);
    cr_assert_eq(buf[9], 0xf0);
}

/* The reference: LEB128 byte by byte, canonical (no trailing zero group), at most 64 bits. */
static size_t reference_uvarint(const uint8_t *p, size_t avail, uint64_t *out)
{
    uint64_t v = 0;
    for (size_t i = 0; i < 10; i++) {
        if (i == avail) return 0;
        if (i == 9 && p[i] > 1) return 0;
        v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
        if (p[i] < 0x80) {
            if (i > 0 && p[i] == 0) return 0;
            *out = v;
            return i + 1;
        }
    }
    return 0;
}

/* tsc_get_uvarint (a fast path when 10 bytes are readable, a checked loop otherwise) against the reference. */
Test(bitstream, uvarints_decode_as_the_reference_does)
{
    uint64_t rng = 17;
    uint8_t buf[16];
    for (int round_no = 0; round_no < 200000; round_no++) {
        uint64_t r = wl_rng(&rng);
        size_t len = 1 + r % 11;
        for (size_t i = 0; i < len; i++) buf[i] = (uint8_t)wl_rng(&rng) | (i + 1 < len ? 0x80 : 0);
        if (r >> 60 == 0) buf[len - 1] = 0;                 /* non-canonical ending */
        if (r >> 60 == 1 && len >= 10) buf[9] = (uint8_t)(r >> 8); /* 10th byte: overflow or not */
        if (r >> 60 == 2) buf[len - 1] &= 0x7f;             /* small last group */
        for (size_t i = len; i < sizeof buf; i++) buf[i] = (uint8_t)wl_rng(&rng);
        size_t avail = (r >> 56 & 1) ? sizeof buf : 1 + (r >> 32) % 12;
        uint64_t want = 0, got = 0;
        size_t want_len = reference_uvarint(buf, avail, &want), got_len = tsc_get_uvarint(buf, avail, &got);
        cr_assert_eq(got_len, want_len, "round %d: length %zu, expected %zu", round_no, got_len, want_len);
        if (want_len) cr_assert_eq(got, want, "round %d", round_no);
    }
}

/* tsc_uvarint_len (arithmetic, no loop) is the length tsc_put_uvarint writes and the reference reads back,
 * at every width's edges (2^b - 1, 2^b) and between them. */
Test(bitstream, uvarint_lengths_are_the_written_lengths)
{
    uint64_t rng = 29;
    uint8_t buf[16];
    for (unsigned b = 0; b <= 64; b++) {
        uint64_t top = b == 64 ? UINT64_MAX : (UINT64_C(1) << b) - 1;
        uint64_t values[4] = {top, top + 1, top >> 1, wl_rng(&rng) & top};
        for (size_t j = 0; j < 4; j++) {
            size_t written = tsc_put_uvarint(buf, values[j]);
            uint64_t back = 0;
            cr_assert_eq(tsc_uvarint_len(values[j]), written, "width %u, value %zu: %zu bytes, written %zu", b, j,
                         tsc_uvarint_len(values[j]), written);
            cr_assert_eq(reference_uvarint(buf, sizeof buf, &back), written);
            cr_assert_eq(back, values[j]);
        }
    }
}

/* Sizing an XOR stream (tsc_xor_size_step, for choosing a form before writing it) gives exactly the bits
 * tsc_xor_put writes, and leaves the window where the writer leaves it, over values that repeat, move in
 * a few low bits, or change completely. */
Test(bitstream, xor_sizing_matches_the_writer)
{
    static uint8_t buf[200000 * 10 + 8];
    tschunk_bit_writer w;
    tsc_bw_init(&w, buf, (sizeof buf - 8) * 8);
    uint64_t rng = 41, prev = 0, sized = 0;
    uint8_t put_lead = TSC_XOR_NO_WINDOW, put_trail = TSC_XOR_NO_WINDOW;
    uint8_t size_lead = TSC_XOR_NO_WINDOW, size_trail = TSC_XOR_NO_WINDOW;
    for (int i = 0; i < 200000; i++) {
        uint64_t r = wl_rng(&rng), v = prev;
        switch (r & 3) {
        case 0: break;
        case 1: v = prev ^ (wl_rng(&rng) & mask((unsigned)(r >> 8) % 64) << ((r >> 16) % 8)); break;
        case 2: v = prev ^ (wl_rng(&rng) >> ((r >> 8) % 64)); break;
        default: v = wl_rng(&rng); break;
        }
        uint64_t before = w.bit_count;
        tsc_xor_put(&w, v ^ prev, &put_lead, &put_trail);
        unsigned bits = tsc_xor_size_step(v ^ prev, &size_lead, &size_trail);
        cr_assert_eq(w.bit_count - before, bits, "value %d", i);
        cr_assert(put_lead == size_lead && put_trail == size_trail, "value %d: window", i);
        sized += bits;
        prev = v;
    }
    cr_assert_eq(sized, w.bit_count);
}
