/*
 * Appending chunk encoder (codec 1, Gorilla-style).
 *
 * While appending, the caller's buffer holds, in this order: room for the
 * largest header, the value stream, slack, the timestamp stream, slack. The
 * two streams are kept apart so that a decoder can run their two serial
 * dependency chains in parallel. finish() writes the real header and slides
 * both streams down behind it (two left moves, no overlap hazards).
 *
 * Every append first works out exactly how many bits the sample costs, checks
 * every limit, and only then writes: a refused sample changes nothing.
 */
#include "format.h"
#include "../codec/bitstream.h"

enum { STAGE_NONE = 0, STAGE_ACTIVE = 0x5a, STAGE_FINISHED = 0xa5 };

#define SLACK 8u
#define NO_WINDOW 0xffu

/* One value's XOR field, as at most two writes. */
typedef struct {
    uint64_t head;      /* control bits (+ lead and size for a new window) */
    uint64_t payload;   /* significant bits */
    unsigned head_len;
    unsigned payload_len;
    uint8_t new_lead;   /* window after this value */
    uint8_t new_trail;
} value_field;

/* One timestamp's dod field. */
typedef struct {
    uint64_t code;      /* prefix and payload, when they fit one write */
    uint64_t dod;
    unsigned len;
    unsigned escape;
} dod_field;

size_t tschunk_bound(size_t n)
{
    return n > TSCHUNK_MAX_SAMPLES ? 0 : TSCHUNK_BOUND(n);
}

TSC_INLINE value_field plan_value(const tschunk_encoder *enc, uint64_t bits)
{
    value_field f;
    uint64_t x = bits ^ enc->prev_bits;
    f.new_lead = enc->window_lead;
    f.new_trail = enc->window_trail;
    f.payload = 0;
    f.payload_len = 0;
    if (x == 0) {
        f.head = 0;
        f.head_len = 1;
        return f;
    }
    unsigned lead = tsc_clz64(x);
    unsigned trail = tsc_ctz64(x);
    if (lead > TSC_LEAD_MAX) lead = TSC_LEAD_MAX;
    unsigned wlead = enc->window_lead, wtrail = enc->window_trail;
    /* NO_WINDOW (255) fails the first test, so no separate "open" flag. */
    if (lead >= wlead && trail >= wtrail &&
        (lead + trail) - (wlead + wtrail) < TSC_WINDOW_RESET_BITS) {
        f.head = 0x2;
        f.head_len = 2;
        f.payload = x >> wtrail;
        f.payload_len = 64 - wlead - wtrail;
        return f;
    }
    unsigned size = 64 - lead - trail; /* 1..64 */
    f.head = (UINT64_C(0x3) << 11) | ((uint64_t)lead << 6) | (size - 1);
    f.head_len = 13;
    f.payload = x >> trail;
    f.payload_len = size;
    f.new_lead = (uint8_t)lead;
    f.new_trail = (uint8_t)trail;
    return f;
}

TSC_INLINE dod_field plan_dod(int64_t dod)
{
    /* Bits of a two's complement field that holds dod: 1..64. */
    unsigned width = 65 - tsc_clz64((uint64_t)(dod ^ (dod >> 63)));
    unsigned bucket = dod == 0 ? 0 : width <= 5 ? 1 : width <= 8 ? 2 : width <= 16 ? 3 : 4;
    const tsc_dod_bucket *b = &tsc_dod_table[bucket];
    dod_field f;
    f.dod = (uint64_t)dod;
    f.len = (unsigned)b->prefix_len + b->payload_len;
    f.escape = bucket == TSC_DOD_ESCAPE;
    uint64_t mask = (UINT64_C(1) << (b->payload_len & 63)) - 1; /* escape never uses it */
    f.code = ((uint64_t)b->prefix << b->payload_len % 64) | ((uint64_t)dod & mask);
    return f;
}

TSC_INLINE void write_value(tschunk_bit_writer *restrict w, const value_field *f)
{
    unsigned total = f->head_len + f->payload_len;
    if (TSC_LIKELY(total <= TSC_BITS_MAX_FIELD)) {
        tsc_bw_put(w, (f->head << f->payload_len) | f->payload, total);
    } else {
        tsc_bw_put(w, f->head, f->head_len);
        tsc_bw_put64(w, f->payload, f->payload_len);
    }
}

TSC_INLINE void write_dod(tschunk_bit_writer *restrict w, const dod_field *f)
{
    if (TSC_LIKELY(!f->escape)) {
        tsc_bw_put(w, f->code, f->len);
    } else {
        tsc_bw_put(w, tsc_dod_table[TSC_DOD_ESCAPE].prefix, tsc_dod_table[TSC_DOD_ESCAPE].prefix_len);
        tsc_bw_put64(w, f->dod, 64);
    }
}

/* Exact header size of a chunk with these fields. */
static size_t header_size(uint32_t count, int64_t first_ts, uint64_t first_delta, size_t value_bytes,
                          int value_const)
{
    size_t n = 3 + tsc_uvarint_len(count);
    if (count >= 1) n += tsc_uvarint_len(tsc_zigzag(first_ts)) + 8;
    if (count >= 2) {
        n += tsc_uvarint_len(first_delta);
        if (!value_const) n += tsc_uvarint_len(value_bytes);
    }
    return n;
}

/* Exact finished size (streams not elided) after adding the given bits. */
static size_t size_after(const tschunk_encoder *enc, uint32_t count, uint64_t first_delta,
                         unsigned ts_bits, unsigned value_bits)
{
    size_t vbytes = (size_t)((enc->val_out.bit_count + value_bits + 7) >> 3);
    size_t tbytes = (size_t)((enc->ts_out.bit_count + ts_bits + 7) >> 3);
    return header_size(count, enc->first_ts, first_delta, vbytes, 0) + vbytes + tbytes;
}

/* A fast, conservative bound on stream bits: worst-case header, worst-case padding. */
static void update_budget(tschunk_encoder *enc)
{
    size_t worst_header = 3 + 3 + tsc_uvarint_len(tsc_zigzag(enc->first_ts)) + 8 +
                          tsc_uvarint_len(enc->first_delta) + 5;
    size_t room = enc->capacity - TSCHUNK_ENCODER_OVERHEAD;
    if (enc->byte_limit) {
        size_t limited = enc->byte_limit > worst_header ? enc->byte_limit - worst_header : 0;
        if (limited < room) room = limited;
    }
    /* Each stream may end with up to 7 padding bits. */
    enc->budget_bits = room > 2 ? (uint64_t)room * 8 - 14 : 0;
}

static void set_stream_regions(tschunk_encoder *enc, size_t ts_base)
{
    enc->val_out.bit_limit = (uint64_t)(ts_base - TSCHUNK_HEADER_MAX - SLACK) * 8;
    enc->ts_out.base = enc->dst + ts_base;
    enc->ts_out.bit_limit = (uint64_t)(enc->capacity - ts_base - SLACK) * 8;
}

size_t tschunk_encoder_init(tschunk_encoder *enc, void *dst, size_t capacity,
                            const tschunk_encoder_options *opts)
{
    if (!enc || !dst) return TSC_ERROR(BAD_PARAMETER);
    tschunk_encoder_options o = {0, 0, 0, 0};
    if (opts) o = *opts;
    if (o.codec == 0) o.codec = TSCHUNK_CODEC_GORILLA;
    if (o.codec != TSCHUNK_CODEC_GORILLA || o.reserved != 0 || o.max_samples > TSCHUNK_MAX_SAMPLES)
        return TSC_ERROR(BAD_PARAMETER);
    if (capacity < TSCHUNK_BOUND(1)) return TSC_ERROR(DST_TOO_SMALL);
    memset(enc, 0, sizeof(*enc));
    enc->dst = (uint8_t *)dst;
    enc->capacity = capacity;
    enc->codec = o.codec;
    enc->max_samples = o.max_samples ? o.max_samples : TSCHUNK_MAX_SAMPLES;
    enc->byte_limit = o.max_bytes;
    enc->window_lead = NO_WINDOW;
    enc->window_trail = NO_WINDOW;
    /* Split the stream room in the worst-case ratio, 77 value : 68 timestamp bits. */
    size_t room = capacity - TSCHUNK_ENCODER_OVERHEAD;
    size_t ts_base = TSCHUNK_HEADER_MAX + SLACK + room * 77 / 145;
    tsc_bw_init(&enc->val_out, enc->dst + TSCHUNK_HEADER_MAX, 0);
    tsc_bw_init(&enc->ts_out, enc->dst + ts_base, 0);
    set_stream_regions(enc, ts_base);
    enc->stage = STAGE_ACTIVE;
    return 0;
}

/*
 * Give each stream room in proportion to its size, moving the timestamp
 * stream. Called only when the whole chunk is known to fit.
 */
static void rebalance(tschunk_encoder *enc, unsigned ts_bits, unsigned value_bits)
{
    size_t vneed = (size_t)((enc->val_out.bit_count + value_bits + 7) >> 3);
    size_t tneed = (size_t)((enc->ts_out.bit_count + ts_bits + 7) >> 3);
    size_t free_room = enc->capacity - TSCHUNK_ENCODER_OVERHEAD - vneed - tneed;
    size_t value_share = (size_t)((double)free_room * (double)(vneed + 1) / (double)(vneed + tneed + 2));
    size_t ts_base = TSCHUNK_HEADER_MAX + vneed + SLACK + value_share;
    size_t old_base = (size_t)(enc->ts_out.base - enc->dst);
    memmove(enc->dst + ts_base, enc->dst + old_base, tsc_bw_bytes(&enc->ts_out));
    set_stream_regions(enc, ts_base);
}

/* Limits for a sample costing these bits; rebalances the streams if needed. */
static size_t admit(tschunk_encoder *enc, uint32_t count, uint64_t first_delta, unsigned ts_bits,
                    unsigned value_bits)
{
    if (count >= enc->max_samples) return TSC_ERROR(CHUNK_FULL);
    size_t vneed = (size_t)((enc->val_out.bit_count + value_bits + 7) >> 3);
    size_t tneed = (size_t)((enc->ts_out.bit_count + ts_bits + 7) >> 3);
    if (vneed + tneed > enc->capacity - TSCHUNK_ENCODER_OVERHEAD) return TSC_ERROR(DST_TOO_SMALL);
    if (enc->byte_limit && size_after(enc, count + 1, first_delta, ts_bits, value_bits) > enc->byte_limit)
        return TSC_ERROR(CHUNK_FULL);
    if (enc->val_out.bit_count + value_bits > enc->val_out.bit_limit ||
        enc->ts_out.bit_count + ts_bits > enc->ts_out.bit_limit)
        rebalance(enc, ts_bits, value_bits);
    return 0;
}

static size_t append_first(tschunk_encoder *enc, int64_t ts, uint64_t bits)
{
    if (enc->count >= enc->max_samples) return TSC_ERROR(CHUNK_FULL);
    if (enc->byte_limit && header_size(1, ts, 0, 0, 1) > enc->byte_limit) return TSC_ERROR(CHUNK_FULL);
    enc->first_ts = enc->prev_ts = ts;
    enc->first_bits = enc->prev_bits = bits;
    enc->count = 1;
    return 0;
}

static size_t append_second(tschunk_encoder *enc, int64_t ts, uint64_t bits)
{
    uint64_t delta = (uint64_t)ts - (uint64_t)enc->prev_ts;
    value_field vf = plan_value(enc, bits);
    size_t err = admit(enc, 1, delta, 0, vf.head_len + vf.payload_len);
    if (err) return err;
    write_value(&enc->val_out, &vf);
    enc->window_lead = vf.new_lead;
    enc->window_trail = vf.new_trail;
    enc->first_delta = enc->prev_delta = delta;
    enc->prev_ts = ts;
    enc->prev_bits = bits;
    enc->count = 2;
    update_budget(enc);
    return 0;
}

size_t tschunk_append_bits(tschunk_encoder *restrict enc, int64_t ts, uint64_t bits)
{
    if (TSC_UNLIKELY(enc->stage != STAGE_ACTIVE)) return TSC_ERROR(STAGE);
    if (TSC_UNLIKELY(ts < enc->prev_ts) && enc->count) return TSC_ERROR(OUT_OF_ORDER);
    if (TSC_UNLIKELY(enc->count < 2))
        return enc->count == 0 ? append_first(enc, ts, bits) : append_second(enc, ts, bits);

    uint64_t delta = (uint64_t)ts - (uint64_t)enc->prev_ts;
    dod_field df = plan_dod((int64_t)(delta - enc->prev_delta));
    value_field vf = plan_value(enc, bits);
    unsigned value_bits = vf.head_len + vf.payload_len;
    if (TSC_UNLIKELY(enc->count >= enc->max_samples ||
                     enc->ts_out.bit_count + enc->val_out.bit_count + df.len + value_bits > enc->budget_bits ||
                     enc->val_out.bit_count + value_bits > enc->val_out.bit_limit ||
                     enc->ts_out.bit_count + df.len > enc->ts_out.bit_limit)) {
        size_t err = admit(enc, enc->count, enc->first_delta, df.len, value_bits);
        if (err) return err;
    }
    write_dod(&enc->ts_out, &df);
    write_value(&enc->val_out, &vf);
    enc->window_lead = vf.new_lead;
    enc->window_trail = vf.new_trail;
    enc->prev_delta = delta;
    enc->prev_ts = ts;
    enc->prev_bits = bits;
    enc->count++;
    return 0;
}

size_t tschunk_append(tschunk_encoder *enc, int64_t ts, double value)
{
    uint64_t bits;
    memcpy(&bits, &value, sizeof bits);
    return tschunk_append_bits(enc, ts, bits);
}

size_t tschunk_encoder_count(const tschunk_encoder *enc) { return enc ? enc->count : 0; }

size_t tschunk_encoder_finish(tschunk_encoder *enc)
{
    if (!enc || enc->stage != STAGE_ACTIVE) return TSC_ERROR(STAGE);
    uint32_t n = enc->count;
    /* An all-zero stream (every dod 0, every XOR 0) costs 1 bit a sample: drop it. */
    int ts_const = n >= 2 && enc->ts_out.bit_count == (uint64_t)(n - 2);
    int value_const = n >= 2 && enc->val_out.bit_count == (uint64_t)(n - 1);
    size_t vbytes = value_const ? 0 : tsc_bw_bytes(&enc->val_out);
    size_t tbytes = ts_const ? 0 : tsc_bw_bytes(&enc->ts_out);

    uint8_t header[TSCHUNK_HEADER_MAX];
    size_t h = 0;
    header[h++] = TSC_MAGIC;
    header[h++] = (uint8_t)(TSC_FORMAT_VERSION << 4 | enc->codec);
    header[h++] = (uint8_t)((ts_const ? TSCHUNK_FLAG_TS_CONST : 0) | (value_const ? TSCHUNK_FLAG_VAL_CONST : 0));
    h += tsc_put_uvarint(header + h, n);
    if (n >= 1) {
        h += tsc_put_uvarint(header + h, tsc_zigzag(enc->first_ts));
        tsc_store64_le(header + h, enc->first_bits);
        h += 8;
    }
    if (n >= 2) {
        h += tsc_put_uvarint(header + h, enc->first_delta);
        if (!value_const) h += tsc_put_uvarint(header + h, vbytes);
    }
    memmove(enc->dst + h, enc->val_out.base, vbytes);
    memmove(enc->dst + h + vbytes, enc->ts_out.base, tbytes);
    memcpy(enc->dst, header, h);
    enc->stage = STAGE_FINISHED;
    return h + vbytes + tbytes;
}

size_t tschunk_encode(void *dst, size_t capacity, const int64_t *ts, const double *values, size_t n,
                      const tschunk_encoder_options *opts)
{
    if ((!ts || !values) && n) return TSC_ERROR(BAD_PARAMETER);
    if (n > TSCHUNK_MAX_SAMPLES) return TSC_ERROR(TOO_MANY_SAMPLES);
    tschunk_encoder enc;
    size_t r = tschunk_encoder_init(&enc, dst, capacity, opts);
    if (tschunk_is_error(r)) return r;
    for (size_t i = 0; i < n; i++) {
        r = tschunk_append(&enc, ts[i], values[i]);
        if (tschunk_is_error(r)) return r;
    }
    return tschunk_encoder_finish(&enc);
}
