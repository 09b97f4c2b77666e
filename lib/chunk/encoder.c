/*
 * Appending chunk encoder (codec 1, Gorilla-style).
 *
 * While appending, the caller's buffer holds, in this order: room for the
 * largest header, the timestamp stream, slack, the value stream, slack. The
 * two streams are kept apart so that a decoder can run their two serial
 * dependency chains in parallel. finish() writes the real header and slides
 * both streams down behind it (two left moves, no overlap hazards).
 *
 * Every append first works out exactly how many bits the sample costs, checks
 * every limit, and only then writes: a refused sample changes nothing.
 */
#define TSCHUNK_STATIC_LINKING_ONLY /* tschunk_append_bits_layout2 */
#include "format.h"
#include "../codec/xor.h"
#include "../codec2/format.h"
#include "../sketch/sketch.h"

enum { STAGE_NONE = 0, STAGE_ACTIVE = 0x5a, STAGE_FINISHED = 0xa5 };

/* lib/sketch/summary.c: add values, in order, to the attached summary sketch. */
void tsc_summary_push_group(tschunk_encoder *enc, const uint64_t *bits, uint32_t n);

/* Codec 1's held summary values into the sketch (its batch add). */
static void hand_held_values(tschunk_encoder *enc)
{
    if (enc->held) tsc_summary_push_group(enc, enc->summary->staged, enc->held);
    enc->held = 0;
}

/*
 * Codec 1 holds its summary's values in the sketch's stage and hands them over TSC_SKETCH_STAGE (128) at a time:
 * the sketch's add one value at a time (its Kahan sum and bin counts through memory between calls) cost a push
 * 9 ns more, and each batch add call has fixed work that 128 values share better than the encoder's room for 16
 * did. The batch add takes the same values in the same order and builds the same sketch (lib/sketch/summary.c).
 */
TSC_INLINE void hold_for_summary(tschunk_encoder *enc, uint64_t bits)
{
    enc->summary->staged[enc->held] = bits;
    if (++enc->held == TSC_SKETCH_STAGE) hand_held_values(enc);
}

#define SLACK 8u

/* Worst-case bits of one sample in each stream, and in both. */
#define WORST_TS_BITS TSC_DOD_MAX_BITS

/* Non-escape dod buckets by index (see format.h): total length, prefix already
 * shifted above the payload, payload mask. */
typedef struct {
    uint64_t prefix_shifted;
    uint64_t mask;
    unsigned len;
} dod_code;

static const dod_code dod_codes[TSC_DOD_ESCAPE] = {
    {0x0, 0x0, 1},
    {UINT64_C(0x2) << 5, 0x1f, 7},
    {UINT64_C(0x6) << 8, 0xff, 11},
    {UINT64_C(0xe) << 11, 0x7ff, 15},
    {UINT64_C(0x1e) << 20, 0xfffff, 25},
};

/* Bucket by the bit width of a dod's zigzag form: 0 (width 0), 5, 8, 11 and 20 payload bits, escape. */
static const uint8_t bucket_of_width[65] = {
    0, 1, 1, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 4, 4, 4, 4, 4, 4, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5,
    5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5,
};

/* Bucket of a dod: 0 for 0, then by the bit width of its zigzag form (one load, not five compares). */
TSC_INLINE unsigned dod_bucket(int64_t dod)
{
    uint64_t z = tsc_zigzag(dod);
    unsigned width = z ? 64u - (unsigned)__builtin_clzll(z) : 0u;
    return bucket_of_width[width];
}

TSC_INLINE unsigned dod_bits(int64_t dod)
{
    unsigned b = dod_bucket(dod);
    return b == TSC_DOD_ESCAPE ? TSC_DOD_MAX_BITS : dod_codes[b].len;
}

TSC_INLINE void write_dod(tschunk_bit_writer *restrict w, int64_t dod)
{
    unsigned b = dod_bucket(dod);
    if (TSC_LIKELY(b != TSC_DOD_ESCAPE)) {
        const dod_code *c = &dod_codes[b];
        tsc_bw_put(w, c->prefix_shifted | ((uint64_t)dod & c->mask), c->len);
    } else {
        tsc_bw_put(w, tsc_dod_table[TSC_DOD_ESCAPE].prefix, tsc_dod_table[TSC_DOD_ESCAPE].prefix_len);
        tsc_bw_put64(w, (uint64_t)dod, 64);
    }
}

/* Bits the XOR field of `bits` costs, without writing it. */
TSC_INLINE unsigned value_bits(const tschunk_encoder *enc, uint64_t bits)
{
    return tsc_xor_field_bits(bits ^ enc->prev_bits, enc->window_lead, enc->window_trail);
}

/* Write the XOR field of `bits` and move the window. */
TSC_INLINE void write_value(tschunk_encoder *restrict enc, uint64_t bits)
{
    tsc_xor_put(&enc->val_out, bits ^ enc->prev_bits, &enc->window_lead, &enc->window_trail);
}

size_t tschunk_bound(size_t n)
{
    return n > TSCHUNK_MAX_SAMPLES ? 0 : TSCHUNK_BOUND(n);
}

/* Exact header size of a chunk with these fields. */
static size_t header_size(uint32_t count, int64_t first_ts, uint64_t first_delta, size_t ts_bytes, int ts_const)
{
    size_t n = 2 + tsc_uvarint_len(count);
    if (count >= 1) n += tsc_uvarint_len(tsc_zigzag(first_ts)) + 8;
    if (count >= 2) {
        n += tsc_uvarint_len(first_delta);
        if (!ts_const) n += tsc_uvarint_len(ts_bytes);
    }
    return n;
}

/* A conservative bound on stream bits: worst-case header, worst-case padding. */
static void update_budget(tschunk_encoder *enc)
{
    size_t worst_header = 2 + 3 + tsc_uvarint_len(tsc_zigzag(enc->first_ts)) + 8 +
                          tsc_uvarint_len(enc->first_delta) + 5;
    size_t room = enc->capacity - TSCHUNK_ENCODER_OVERHEAD;
    if (enc->byte_limit) {
        size_t limited = enc->byte_limit > worst_header ? enc->byte_limit - worst_header : 0;
        if (limited < room) room = limited;
    }
    /* Each stream may end with up to 7 padding bits. */
    enc->budget_bits = room > 2 ? (uint64_t)room * 8 - 14 : 0;
}

static uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }

/* How many worst-case samples fit every limit: the hot path only counts down. */
static void refresh_safe_left(tschunk_encoder *enc)
{
    if (enc->stage != STAGE_ACTIVE || enc->count < 2) {
        enc->safe_left = 0;
        return;
    }
    uint64_t used = enc->ts_out.bit_count + enc->val_out.bit_count;
    uint64_t n = enc->max_samples - enc->count;
    n = min_u64(n, enc->budget_bits > used ? (enc->budget_bits - used) / (WORST_TS_BITS + TSC_XOR_WORST_BITS) : 0);
    n = min_u64(n, (enc->val_out.bit_limit - enc->val_out.bit_count) / TSC_XOR_WORST_BITS);
    n = min_u64(n, (enc->ts_out.bit_limit - enc->ts_out.bit_count) / WORST_TS_BITS);
    enc->safe_left = (uint32_t)n;
}

/* The timestamp stream starts after the header room; the value stream at val_base. */
static void set_stream_regions(tschunk_encoder *enc, size_t val_base)
{
    enc->ts_out.bit_limit = (uint64_t)(val_base - TSCHUNK_HEADER_MAX - SLACK) * 8;
    enc->val_out.base = enc->dst + val_base;
    enc->val_out.bit_limit = (uint64_t)(enc->capacity - val_base - SLACK) * 8;
}

size_t tschunk_encoder_init(tschunk_encoder *enc, void *dst, size_t capacity,
                            const tschunk_encoder_options *opts)
{
    if (!enc || !dst) return TSC_ERROR(BAD_PARAMETER);
    tschunk_encoder_options o = {0, 0, 0, 0};
    if (opts) o = *opts;
    if (o.codec == 0) o.codec = TSCHUNK_CODEC_TSC2; /* the default codec since 0.2 */
    if ((o.codec != TSCHUNK_CODEC_GORILLA && o.codec != TSCHUNK_CODEC_TSC2) || o.reserved != 0 ||
        o.max_samples > TSCHUNK_MAX_SAMPLES || (o.max_bytes && o.max_bytes < TSC_EMPTY_CHUNK_BYTES))
        return TSC_ERROR(BAD_PARAMETER); /* no finished chunk keeps a max_bytes under the empty one */
    if (capacity < TSCHUNK_BOUND(0)) return TSC_ERROR(DST_TOO_SMALL);
    memset(enc, 0, sizeof(*enc));
    enc->dst = (uint8_t *)dst;
    enc->capacity = capacity;
    enc->codec = o.codec;
    enc->max_samples = o.max_samples ? o.max_samples : TSCHUNK_MAX_SAMPLES;
    enc->byte_limit = o.max_bytes;
    enc->window_lead = TSC_XOR_NO_WINDOW;
    enc->window_trail = TSC_XOR_NO_WINDOW;
    /* Split the stream room in the worst-case ratio of timestamp to value bits. */
    size_t room = capacity - TSCHUNK_ENCODER_OVERHEAD;
    size_t val_base = TSCHUNK_HEADER_MAX + SLACK + room * WORST_TS_BITS / (WORST_TS_BITS + TSC_XOR_WORST_BITS);
    tsc_bw_init(&enc->ts_out, enc->dst + TSCHUNK_HEADER_MAX, 0);
    tsc_bw_init(&enc->val_out, enc->dst + val_base, 0);
    set_stream_regions(enc, val_base);
    enc->stage = STAGE_ACTIVE;
    if (enc->codec == TSCHUNK_CODEC_TSC2) tsc_codec2_refresh_fast(enc); /* the first sample takes the fast path */
    else enc->isa = (uint8_t)tsc_bmi_here();
    return 0;
}

size_t tschunk_encoder_restart(tschunk_encoder *enc, void *dst, size_t capacity)
{
    if (!enc || !dst) return TSC_ERROR(BAD_PARAMETER);
    if (enc->stage != STAGE_ACTIVE && enc->stage != STAGE_FINISHED) return TSC_ERROR(STAGE);
    tschunk_encoder_options o = {enc->codec, enc->max_samples, (uint32_t)enc->byte_limit, 0};
    /* What the next chunk learns, copied out before init clears the encoder (the codec-2 state and the summary
     * only: the whole encoder's copy was a third of a restart's instructions) */
    tschunk_codec2_state learned = enc->c2;
    struct tschunk_sketch *summary = enc->summary;
    size_t err = tschunk_encoder_init(enc, dst, capacity, &o); /* changes nothing when it fails */
    if (err) return err;
    if (enc->codec == TSCHUNK_CODEC_TSC2) { /* codec 1 has no use for these */
        enc->c2.hint_usable = learned.hint_usable;
        enc->c2.hint_exponent = learned.hint_exponent;
        enc->c2.hint_float = learned.hint_float;
        enc->c2.last_form = learned.last_form;
        enc->c2.last_ts_form = learned.last_ts_form;
        enc->c2.last_ts_width = learned.last_ts_width;
        enc->c2.last_split_left = learned.last_split_left;
        if (!enc->byte_limit) { /* else the bytes are the bound's */
            enc->c2.last_split = learned.last_split;
            enc->c2.last_packing = learned.last_packing;
        }
        enc->c2.last_challenger = learned.last_challenger;
        enc->c2.reuse_left = learned.reuse_left;
        /* A series whose last chunk scaled its timestamps starts the next one scaled, without the first group's
         * check (unused scales are dropped at finish); else the first group checks again. */
        enc->c2.ts_scaled = learned.ts_scaled == TSC2_SCALE_USED ? TSC2_SCALE_ON : TSC2_SCALE_OFF;
    }
    if (summary) tschunk_encoder_set_summary(enc, summary);
    return 0;
}

/*
 * Give each stream room in proportion to its size, moving the value stream.
 * Called only when the whole chunk is known to fit.
 */
static void rebalance(tschunk_encoder *enc, unsigned ts_bits, unsigned val_bits)
{
    size_t vneed = (size_t)((enc->val_out.bit_count + val_bits + 7) >> 3);
    size_t tneed = (size_t)((enc->ts_out.bit_count + ts_bits + 7) >> 3);
    size_t free_room = enc->capacity - TSCHUNK_ENCODER_OVERHEAD - vneed - tneed;
    size_t ts_share = (size_t)((double)free_room * (double)(tneed + 1) / (double)(vneed + tneed + 2));
    size_t val_base = TSCHUNK_HEADER_MAX + tneed + SLACK + ts_share;
    size_t old_base = (size_t)(enc->val_out.base - enc->dst);
    memmove(enc->dst + val_base, enc->dst + old_base, tsc_bw_bytes(&enc->val_out));
    set_stream_regions(enc, val_base);
}

/* Every limit, exactly, for a sample costing these bits; rebalances the streams if needed. */
static size_t admit(tschunk_encoder *enc, uint64_t first_delta, unsigned ts_bits, unsigned val_bits)
{
    if (enc->count >= enc->max_samples) return TSC_ERROR(CHUNK_FULL);
    size_t vneed = (size_t)((enc->val_out.bit_count + val_bits + 7) >> 3);
    size_t tneed = (size_t)((enc->ts_out.bit_count + ts_bits + 7) >> 3);
    if (vneed + tneed > enc->capacity - TSCHUNK_ENCODER_OVERHEAD) return TSC_ERROR(DST_TOO_SMALL);
    if (enc->byte_limit &&
        header_size(enc->count + 1, enc->first_ts, first_delta, tneed, 0) + vneed + tneed > enc->byte_limit)
        return TSC_ERROR(CHUNK_FULL);
    if (enc->val_out.bit_count + val_bits > enc->val_out.bit_limit ||
        enc->ts_out.bit_count + ts_bits > enc->ts_out.bit_limit)
        rebalance(enc, ts_bits, val_bits);
    return 0;
}

/* Every append that the hot path does not take: first samples, limits near, errors. */
static size_t append_checked(tschunk_encoder *enc, int64_t ts, uint64_t bits)
{
    if (enc->stage != STAGE_ACTIVE) return TSC_ERROR(STAGE);
    if (enc->codec == TSCHUNK_CODEC_TSC2) return tsc_codec2_append(enc, ts, bits);
    if (enc->count && ts < enc->prev_ts) return TSC_ERROR(OUT_OF_ORDER);
    if (enc->count == 0) {
        if (enc->max_samples == 0) return TSC_ERROR(CHUNK_FULL);
        if (enc->byte_limit && header_size(1, ts, 0, 0, 1) > enc->byte_limit) return TSC_ERROR(CHUNK_FULL);
        enc->first_ts = enc->prev_ts = ts;
        enc->first_bits = enc->prev_bits = bits;
        enc->count = 1;
        if (enc->summary) hold_for_summary(enc, bits);
        return 0;
    }
    uint64_t delta = (uint64_t)ts - (uint64_t)enc->prev_ts;
    int64_t dod = (int64_t)(delta - enc->prev_delta);
    int second = enc->count == 1;
    unsigned ts_bits = second ? 0 : dod_bits(dod);
    size_t err = admit(enc, second ? delta : enc->first_delta, ts_bits, value_bits(enc, bits));
    if (err) return err;
    if (second) enc->first_delta = delta;
    else write_dod(&enc->ts_out, dod);
    write_value(enc, bits);
    enc->prev_delta = delta;
    enc->prev_ts = ts;
    enc->prev_bits = bits;
    enc->count++;
    if (second) update_budget(enc);
    refresh_safe_left(enc);
    if (enc->summary) hold_for_summary(enc, bits);
    return 0;
}

/*
 * Codec 2's fast path: the sample joins the open group raw, and only pending
 * and prev_ts move (lib/codec2/format.h, tsc_codec2_sync: count, safe_left
 * and prev_bits catch up off this path). Inlined into the two public appends,
 * so that a sample costs one call and its return and no taken branch between
 * them (a jump to it from each entry point cost 0.3-0.4 ns a sample);
 * everything else is called.
 */
TSC_INLINE size_t append_grouped(tschunk_encoder *restrict enc, int64_t ts, uint64_t bits)
{
    uint32_t pending = enc->c2.pending; /* read once: the slot's byte stores may alias the encoder */
    if (TSC_UNLIKELY(pending >= enc->c2.fast_end || ts < enc->prev_ts)) return append_checked(enc, ts, bits);
    uint8_t *slot = tsc_codec2_raw_slot(enc, pending);
    tsc_store64_le(slot, (uint64_t)ts);
    tsc_store64_le(slot + 8, bits);
    enc->prev_ts = ts;
    enc->c2.pending = ++pending;
    if (TSC_UNLIKELY(pending == TSCHUNK_GROUP_SAMPLES)) tsc_codec2_flush(enc); /* summary included */
    return 0;
}

/* The hot path's sample: the state is advanced before the writes, so that only the fields stay live. */
TSC_INLINE void append_unchecked(tschunk_encoder *restrict enc, int64_t ts, uint64_t bits)
{
    uint64_t delta = (uint64_t)ts - (uint64_t)enc->prev_ts;
    int64_t dod = (int64_t)(delta - enc->prev_delta);
    uint64_t x = bits ^ enc->prev_bits;
    enc->prev_delta = delta;
    enc->prev_ts = ts;
    enc->prev_bits = bits;
    enc->count++;
    enc->safe_left--;
    write_dod(&enc->ts_out, dod);
    tsc_xor_put(&enc->val_out, x, &enc->window_lead, &enc->window_trail);
}

/* The hand-over at the end of a summarized push, reached by a tail call. */
__attribute__((noinline)) static size_t hand_over_and_accept(tschunk_encoder *enc)
{
    hand_held_values(enc);
    return 0;
}

/* With a summary attached: its call would make the plain hot path save registers, so it lives here. The
 * hand-over is a tail call: a call inside made this function save six registers a push (14 instructions;
 * inlined into append_gorilla, even as a tail call, it made the plain path save them). */
TSC_INLINE size_t append_summarized_body(tschunk_encoder *restrict enc, int64_t ts, uint64_t bits)
{
    append_unchecked(enc, ts, bits);
    enc->summary->staged[enc->held] = bits;
    if (TSC_UNLIKELY(++enc->held == TSC_SKETCH_STAGE)) return hand_over_and_accept(enc);
    return 0;
}

__attribute__((noinline)) static size_t append_summarized(tschunk_encoder *restrict enc, int64_t ts, uint64_t bits)
{
    return append_summarized_body(enc, ts, bits);
}

#ifdef TSC_BMI_TARGET
/* The BMI build's own (through the baseline one, a summary gave back most of that build's gain). */
TSC_BMI_TARGET __attribute__((noinline)) static size_t append_summarized_bmi(tschunk_encoder *restrict enc, int64_t ts,
                                                                            uint64_t bits)
{
    return append_summarized_body(enc, ts, bits);
}
#  define APPEND_SUMMARIZED_BMI append_summarized_bmi
#else
#  define APPEND_SUMMARIZED_BMI append_summarized
#endif

/* bmi: the build this is inlined into (a constant), whose append_summarized it calls. */
TSC_INLINE size_t append_gorilla_body(tschunk_encoder *restrict enc, int64_t ts, uint64_t bits, const int bmi)
{
    /* safe_left > 0 means: active, two samples in, room for a worst-case sample. */
    if (TSC_UNLIKELY(enc->safe_left == 0 || ts < enc->prev_ts)) return append_checked(enc, ts, bits);
    if (TSC_UNLIKELY(enc->summary != NULL)) /* off: one branch */
        return bmi ? APPEND_SUMMARIZED_BMI(enc, ts, bits) : append_summarized(enc, ts, bits);
    append_unchecked(enc, ts, bits);
    return 0;
}

/* Codec 1's append. Its own function, so that the dispatch before it stays two instructions (inlined, its
 * register moves were hoisted above the dispatch and cost codec 2's appends 3-4%). */
TSC_HOT_ENTRY __attribute__((noinline)) static size_t append_gorilla(tschunk_encoder *restrict enc, int64_t ts,
                                                                    uint64_t bits)
{
    return append_gorilla_body(enc, ts, bits, 0);
}

#ifdef TSC_BMI_TARGET
/* The same built with BMI1/2, LZCNT and MOVBE (tsc_bmi_here), which init chose. */
TSC_BMI_TARGET TSC_HOT_ENTRY __attribute__((noinline)) static size_t append_gorilla_bmi(tschunk_encoder *restrict enc,
                                                                                       int64_t ts, uint64_t bits)
{
    return append_gorilla_body(enc, ts, bits, 1);
}
#endif

/* Codec 2, the default, falls through; codec 1 jumps to its own function. */
TSC_INLINE size_t append_one(tschunk_encoder *restrict enc, int64_t ts, uint64_t bits)
{
    if (TSC_LIKELY(enc->codec == TSCHUNK_CODEC_TSC2)) return append_grouped(enc, ts, bits);
    return TSC_BMI_CHOOSE(enc, append_gorilla_bmi(enc, ts, bits), append_gorilla(enc, ts, bits));
}

TSC_HOT_ENTRY size_t tschunk_append_bits(tschunk_encoder *restrict enc, int64_t ts, uint64_t bits)
{
    return append_one(enc, ts, bits);
}

/* tschunk_append_inline's slow path: its name says which encoder fields that inline code relies on. */
_Static_assert(TSCHUNK_ENCODER_LAYOUT == 2, "a new encoder layout renames tschunk_append_bits_layout2");
TSC_HOT_ENTRY size_t tschunk_append_bits_layout2(tschunk_encoder *enc, int64_t ts, uint64_t value_bits)
{
    return append_one(enc, ts, value_bits);
}

/*
 * The dods of up to `limit` samples into the timestamp stream, stopping
 * before a timestamp that goes back; its writer and the previous sample in
 * locals. A run of unchanged steps is one write of zero bits (at most
 * TSC_BITS_MAX_FIELD). @return the samples written.
 */
TSC_INLINE size_t append_dods(tschunk_encoder *restrict enc, const int64_t *restrict ts, size_t limit)
{
    tschunk_bit_writer w = enc->ts_out;
    int64_t prev_ts = enc->prev_ts;
    uint64_t prev_delta = enc->prev_delta;
    size_t i = 0;
    while (i < limit && ts[i] >= prev_ts) {
        uint64_t delta = (uint64_t)ts[i] - (uint64_t)prev_ts;
        if (delta == prev_delta) {
            /* Equal steps modulo 2^64 can still go back (past INT64_MAX): the order is checked too. */
            size_t run = 1, most = limit - i < TSC_BITS_MAX_FIELD ? limit - i : TSC_BITS_MAX_FIELD;
            while (run < most && ts[i + run] >= ts[i + run - 1] &&
                   (uint64_t)ts[i + run] - (uint64_t)ts[i + run - 1] == delta)
                run++;
            tsc_bw_put(&w, 0, (unsigned)run);
            i += run;
            prev_ts = ts[i - 1];
            continue;
        }
        write_dod(&w, (int64_t)(delta - prev_delta));
        prev_delta = delta;
        prev_ts = ts[i++];
    }
    enc->ts_out = w;
    enc->prev_ts = prev_ts;
    enc->prev_delta = prev_delta;
    return i;
}

/* The XOR fields of values [0, m) into the value stream; a run of repeats is one write of zero bits. */
TSC_INLINE void append_xors(tschunk_encoder *restrict enc, const double *restrict values, size_t m)
{
    tschunk_bit_writer w = enc->val_out;
    uint64_t prev_bits = enc->prev_bits;
    uint8_t window_lead = enc->window_lead, window_trail = enc->window_trail;
    for (size_t i = 0; i < m;) {
        uint64_t bits;
        memcpy(&bits, &values[i], sizeof bits);
        if (bits == prev_bits) {
            size_t run = 1, most = m - i < TSC_BITS_MAX_FIELD ? m - i : TSC_BITS_MAX_FIELD;
            while (run < most && memcmp(&values[i + run], &bits, sizeof bits) == 0) run++;
            tsc_bw_put(&w, 0, (unsigned)run);
            i += run;
            continue;
        }
        tsc_xor_put(&w, bits ^ prev_bits, &window_lead, &window_trail);
        prev_bits = bits;
        i++;
    }
    enc->val_out = w;
    enc->prev_bits = prev_bits;
    enc->window_lead = window_lead;
    enc->window_trail = window_trail;
}

/*
 * Up to `limit` samples (limit <= safe_left, codec 1), stopping before a
 * timestamp that goes back. The two streams are independent, so each is
 * written by its own loop: half the state live in each (no spills), and a
 * stream's runs (steady steps, repeated values) found whatever the other
 * stream does. @return the samples written.
 */
TSC_INLINE size_t append_run(tschunk_encoder *restrict enc, const int64_t *restrict ts, const double *restrict values,
                             size_t limit)
{
    size_t m = append_dods(enc, ts, limit);
    append_xors(enc, values, m);
    enc->count += (uint32_t)m;
    enc->safe_left -= (uint32_t)m;
    return m;
}

#ifdef TSC_BMI_TARGET
TSC_BMI_TARGET static size_t append_run_bmi(tschunk_encoder *restrict enc, const int64_t *restrict ts,
                                            const double *restrict values, size_t limit)
{
    return append_run(enc, ts, values, limit);
}
#endif

static size_t append_run_chosen(tschunk_encoder *enc, const int64_t *ts, const double *values, size_t limit)
{
    return TSC_BMI_CHOOSE(enc, append_run_bmi(enc, ts, values, limit), append_run(enc, ts, values, limit));
}

/*
 * Codec 2's bulk path: of the n samples, those that certainly fit (safe_left,
 * so within the open group) join the group raw, as append_grouped's; a full
 * group is flushed (its summary values added there). Stops before a timestamp
 * that goes back. @return the samples taken.
 */
static size_t append_grouped_run(tschunk_encoder *restrict enc, const int64_t *restrict ts,
                                 const double *restrict values, size_t n)
{
    size_t room = tsc_codec2_safe_left(enc), limit = n < room ? n : room;
    uint8_t *slot = tsc_codec2_raw_slot(enc, enc->c2.pending);
    int64_t prev_ts = enc->prev_ts;
    size_t i = 0;
    for (; i < limit && ts[i] >= prev_ts; i++) {
        uint64_t bits;
        memcpy(&bits, &values[i], sizeof bits);
        tsc_store64_le(slot + 16 * i, (uint64_t)ts[i]);
        tsc_store64_le(slot + 16 * i + 8, bits);
        prev_ts = ts[i];
    }
    if (i == 0) return 0;
    enc->prev_ts = prev_ts;
    enc->c2.pending += (uint32_t)i; /* as the fast path: count, safe_left and prev_bits lag */
    if (enc->c2.pending == TSCHUNK_GROUP_SAMPLES) tsc_codec2_flush(enc);
    return i;
}

/* Codec 1's summary takes a run's values after the run, in order: the sketch that value-by-value pushes
 * build (the batch add is the same adds, in the same order, Kahan sum included). */
static void summarize_run(tschunk_encoder *enc, const double *values, size_t n)
{
    hand_held_values(enc); /* appended before the run */
    uint64_t bits[TSCHUNK_GROUP_SAMPLES];
    for (size_t done = 0; done < n;) {
        size_t k = n - done < TSCHUNK_GROUP_SAMPLES ? n - done : TSCHUNK_GROUP_SAMPLES;
        memcpy(bits, values + done, k * sizeof bits[0]); /* the caller's doubles, read as bits */
        tsc_summary_push_group(enc, bits, (uint32_t)k);
        done += k;
    }
}

size_t tschunk_append_many(tschunk_encoder *enc, const int64_t *ts, const double *values, size_t n,
                           size_t *appended)
{
    size_t done = 0, err = 0;
    if (!enc || ((!ts || !values) && n)) err = TSC_ERROR(BAD_PARAMETER);
    while (!err && done < n) {
        /* A run while the limits certainly hold; one checked sample (which refreshes safe_left) between runs. */
        if (enc->codec == TSCHUNK_CODEC_TSC2) {
            size_t taken = tsc_codec2_append_groups(enc, ts + done, values + done, n - done);
            if (!taken) taken = append_grouped_run(enc, ts + done, values + done, n - done);
            done += taken;
            if (taken) continue;
        } else if (enc->safe_left > 0) {
            size_t limit = n - done < enc->safe_left ? n - done : enc->safe_left;
            size_t run = append_run_chosen(enc, ts + done, values + done, limit);
            if (enc->summary) summarize_run(enc, values + done, run);
            done += run;
            if (run == limit) continue;
        }
        err = tschunk_append(enc, ts[done], values[done]);
        done += !err;
    }
    if (appended) *appended = done;
    return err;
}

TSC_HOT_ENTRY size_t tschunk_append(tschunk_encoder *enc, int64_t ts, double value)
{
    uint64_t bits;
    memcpy(&bits, &value, sizeof bits);
    return append_one(enc, ts, bits);
}

size_t tschunk_encoder_count(const tschunk_encoder *enc)
{
    if (!enc) return 0;
    return enc->codec == TSCHUNK_CODEC_TSC2 ? tsc_codec2_count(enc) : enc->count;
}

/*
 * Lay codec 1's chunk out at `out`: the encoder's own buffer at finish (the
 * streams move down behind the header, left moves only), or another buffer
 * for a snapshot. The encoder is not changed.
 */
static size_t lay_out(const tschunk_encoder *enc, uint8_t *out, size_t capacity)
{
    uint32_t n = enc->count;
    /* An all-zero stream (every dod 0, every XOR 0) costs 1 bit a sample: drop it. */
    int ts_const = n >= 2 && enc->ts_out.bit_count == (uint64_t)(n - 2);
    int value_const = n >= 2 && enc->val_out.bit_count == (uint64_t)(n - 1);
    size_t vbytes = value_const ? 0 : tsc_bw_bytes(&enc->val_out);
    size_t tbytes = ts_const ? 0 : tsc_bw_bytes(&enc->ts_out);

    uint8_t header[TSCHUNK_HEADER_MAX];
    size_t h = 0;
    unsigned flags = (ts_const ? TSCHUNK_FLAG_TS_CONST : 0) | (value_const ? TSCHUNK_FLAG_VAL_CONST : 0);
    header[h++] = (uint8_t)(TSC_MAGIC_NIBBLE << 4 | TSC_FORMAT_VERSION);
    header[h++] = (uint8_t)(flags << 4 | enc->codec);
    h += tsc_put_uvarint(header + h, n);
    if (n >= 1) {
        h += tsc_put_uvarint(header + h, tsc_zigzag(enc->first_ts));
        tsc_store64_le(header + h, enc->first_bits);
        h += 8;
    }
    if (n >= 2) {
        h += tsc_put_uvarint(header + h, enc->first_delta);
        if (!ts_const) h += tsc_put_uvarint(header + h, tbytes);
    }
    if (h + tbytes + vbytes > capacity) return TSC_ERROR(DST_TOO_SMALL);
    memmove(out + h, enc->ts_out.base, tbytes);
    memmove(out + h + tbytes, enc->val_out.base, vbytes);
    memcpy(out, header, h);
    return h + vbytes + tbytes;
}

size_t tschunk_encoder_finish(tschunk_encoder *enc)
{
    if (!enc) return TSC_ERROR(BAD_PARAMETER);
    if (enc->stage != STAGE_ACTIVE) return TSC_ERROR(STAGE);
    enc->stage = STAGE_FINISHED;
    if (enc->codec == TSCHUNK_CODEC_TSC2) return tsc_codec2_finish(enc); /* its safe_left too */
    enc->safe_left = 0;
    hand_held_values(enc);
    return lay_out(enc, enc->dst, enc->capacity);
}

size_t tschunk_encoder_snapshot(const tschunk_encoder *enc, void *dst, size_t capacity)
{
    if (!enc || !dst) return TSC_ERROR(BAD_PARAMETER);
    if (enc->stage != STAGE_ACTIVE) return TSC_ERROR(STAGE);
    if (enc->codec == TSCHUNK_CODEC_TSC2) return tsc_codec2_snapshot(enc, (uint8_t *)dst, capacity);
    return lay_out(enc, (uint8_t *)dst, capacity);
}

size_t tschunk_encode(void *dst, size_t capacity, const int64_t *ts, const double *values, size_t n,
                      const tschunk_encoder_options *opts)
{
    if ((!ts || !values) && n) return TSC_ERROR(BAD_PARAMETER);
    if (n > TSCHUNK_MAX_SAMPLES) return TSC_ERROR(TOO_MANY_SAMPLES);
    tschunk_encoder enc;
    size_t r = tschunk_encoder_init(&enc, dst, capacity, opts);
    if (tsc_is_error(r)) return r;
    r = tschunk_append_many(&enc, ts, values, n, NULL);
    return r ? r : tschunk_encoder_finish(&enc);
}
