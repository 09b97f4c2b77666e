/*
 * Codec 2 appending: samples are kept raw (16 bytes each) behind the finished
 * groups in the caller's buffer until a group of 128 fills, then encoded in
 * place. Nothing is allocated. Every limit is checked before anything is
 * written, so a refused sample changes nothing.
 *
 * max_bytes is checked against a bound of the open group's encoded size,
 * updated in O(1) per append: exact for its timestamps (the DELTA form; GRID
 * is written only when smaller), and for its values the smallest of their
 * XOR size, RAW size and size as decimals in a "hint" reading (the previous
 * group's, or the first value's smallest). The group coder also tries the
 * hint, so it never writes more than the bound. The bound is kept only when
 * max_bytes is set.
 */
#include "format.h"
#include "../chunk/format.h"
#include "../codec/xor.h"

/* lib/sketch/summary.c */
void tsc_summary_push_group(tschunk_encoder *enc, const uint64_t *bits, uint32_t n);

TSC_INLINE uint8_t *group_area(const tschunk_encoder *enc) { return enc->dst + TSCHUNK_HEADER_MAX; }

static size_t chunk_header_bytes(uint32_t count) { return 2 + tsc_uvarint_len(count); }

static tsc_codec2_decimal hint_of(const tschunk_encoder *enc)
{
    return (tsc_codec2_decimal){enc->c2.hint_exponent, enc->c2.hint_float, enc->c2.hint_usable};
}

static void set_hint(tschunk_encoder *enc, tsc_codec2_decimal d)
{
    enc->c2.hint_usable = (uint8_t)d.usable;
    enc->c2.hint_exponent = (uint8_t)d.exponent;
    enc->c2.hint_float = (uint8_t)d.as_float;
}

/*
 * Whether the chunk so far keeps one delta (TS_CONST) and one value
 * (VAL_CONST), for finish. The chunk's first delta is taken when its second
 * sample arrives. Both checks run on every group until they fail, so on each
 * chunk's first group at least: eight lanes a step where the CPU has AVX-512.
 */
static void track_constants(tschunk_encoder *enc, const int64_t *ts, const uint64_t *bits, uint32_t n)
{
    uint32_t before = enc->count - n; /* samples in earlier groups */
    if (before <= 1 && before + n >= 2)
        enc->first_delta = (uint64_t)ts[1 - before] - (uint64_t)(before ? enc->c2.flushed_ts : ts[0]);
    uint32_t from = before >= 2 ? 0 : 2 - before; /* the first sample whose delta is compared */
    /* Once known, neither flag needs another look. The group's last step and value are looked at first: on a
     * jittered or changing series they settle it without the pass (the passes were 4% of the instructions of a
     * 120-sample chunk's one-at-a-time appends on gauge-2dp, callgrind running the AVX2 kernels). */
    if (!enc->c2.irregular && n >= 2 && n - 1 >= from)
        enc->c2.irregular = (uint64_t)ts[n - 1] - (uint64_t)ts[n - 2] != enc->first_delta;
    if (!enc->c2.irregular)
        enc->c2.irregular = tsc_codec2_odd_deltas(ts, n, enc->c2.flushed_ts, from, enc->first_delta) != 0;
    if (!enc->c2.varied) enc->c2.varied = n && bits[n - 1] != enc->first_bits;
    if (!enc->c2.varied) enc->c2.varied = tsc_codec2_odd_values(bits, n, enc->first_bits) != 0;
}

/* The open group's raw samples, out of the caller's buffer. */
static void load_open_group(const tschunk_encoder *enc, int64_t *ts, uint64_t *bits)
{
    tsc_codec2_deinterleave(tsc_codec2_raw_slot(enc, 0), enc->c2.pending, ts, bits);
}

/* Encode the open group's `pending` samples, given as arrays, behind the finished groups. */
static void encode_open_group(tschunk_encoder *enc, const int64_t *ts, const uint64_t *bits)
{
    uint8_t *at = group_area(enc) + enc->c2.group_end;
    track_constants(enc, ts, bits, enc->c2.pending);
    /* The first group decides whether the chunk's timestamp blocks carry a scale: when its steps differ by
     * multiples of a divisor (seconds or minutes in milliseconds) that makes them smaller. Never under max_bytes,
     * whose bound counts no scale, nor for a regular group (irregular not set yet): nothing to divide. A restart
     * after a scaled chunk starts scaled (tschunk_encoder_restart); after another, only a group that searches
     * all forms (every 8th) checks again, as a series cut into short chunks would pay the check each time. */
    if (enc->count == enc->c2.pending && !enc->byte_limit && enc->c2.irregular && enc->c2.ts_scaled == TSC2_SCALE_OFF &&
        enc->c2.reuse_left == 0)
        enc->c2.ts_scaled = (uint8_t)tsc_codec2_scaled_chunk(ts, enc->c2.pending);
    if (enc->summary) tsc_summary_push_group(enc, bits, enc->c2.pending); /* the summary takes groups whole */
    /*
     * After a clear DECIMAL, MASKED or SPLIT win that form is tried first, and
     * the timestamp form is reused too (never under max_bytes: its bound counts
     * DELTA); every 8th group, and the first after init, tries them all again.
     */
    unsigned last = enc->c2.last_form;
    int reusable = last == TSC2_FORM_DECIMAL || last == TSC2_FORM_MASKED || last == TSC2_FORM_SPLIT;
    int search = enc->byte_limit || enc->c2.reuse_left == 0;
    int effort = enc->byte_limit ? TSC2_EFFORT_BOUND : reusable && !search ? TSC2_EFFORT_REUSE : TSC2_EFFORT_FULL;
    enc->c2.reuse_left = (uint8_t)(search ? 7 : enc->c2.reuse_left - 1);
    /* track_constants above has checked every step inside the group against the chunk's first one */
    tsc_codec2_choice choice = {hint_of(enc), last, search ? TSC2_TS_SEARCH : enc->c2.last_ts_form,
                                enc->c2.last_ts_width, enc->c2.last_split_left, enc->c2.last_challenger,
                                !enc->c2.irregular, enc->first_delta, enc->c2.ts_scaled,
                                enc->byte_limit ? NULL : &enc->c2.last_split,
                                enc->byte_limit ? 0 : enc->c2.last_packing, 0};
    size_t bytes = tsc_codec2_encode_group(at, ts, bits, enc->c2.pending, enc->c2.flushed_ts, enc->c2.flushed_bits,
                                           effort, &choice);
    size_t index = (enc->count - enc->c2.pending) / TSC2_GROUP; /* a group is under 2.2 KB */
    if (!enc->byte_limit && index < TSC2_KNOWN_GROUPS) {
        enc->c2.group_bytes[index] = (uint16_t)bytes;
        enc->c2.group_ts_bytes[index] = (uint16_t)choice.ts_bytes;
    }
    enc->c2.group_end += bytes;
    enc->c2.last_form = (uint8_t)choice.value_form;
    enc->c2.last_ts_form = (uint8_t)choice.ts_form;
    enc->c2.last_ts_width = (uint8_t)choice.ts_width;
    enc->c2.last_split_left = (uint8_t)choice.split_left;
    enc->c2.last_challenger = (uint8_t)choice.challenger;
    enc->c2.ts_scaled = (uint8_t)choice.ts_scaled;
    if (!enc->byte_limit) enc->c2.last_packing = (uint16_t)choice.packing; /* else the bound's bytes */
    set_hint(enc, choice.reading);
    enc->c2.flushed_ts = ts[enc->c2.pending - 1];
    enc->c2.flushed_bits = bits[enc->c2.pending - 1];
    enc->c2.pending = enc->c2.synced = 0;
}

static void flush_group(tschunk_encoder *enc)
{
    int64_t ts[TSC2_GROUP];
    uint64_t bits[TSC2_GROUP];
    load_open_group(enc, ts, bits);
    encode_open_group(enc, ts, bits);
}

/* The open group's values as decimals in the hint reading: bytes, SIZE_MAX when none reads. */
static size_t decimal_bytes(const tschunk_group_bound *b, uint32_t samples)
{
    if (!b->decimals) return SIZE_MAX;
    size_t for_bytes = tsc_uvarint_len(tsc_zigzag(b->k_min)) +
                       tsc_codec2_packed_bytes(samples, tsc_codec2_width((uint64_t)b->k_max - (uint64_t)b->k_min));
    size_t best = for_bytes;
    if (samples >= 2) {
        /* Exception slots repeat a neighbour's k: a step of 0 (lib/codec2/encoder.c). */
        int64_t lo = b->step_min, hi = b->step_max;
        if (b->exceptions) lo = lo < 0 ? lo : 0, hi = hi > 0 ? hi : 0;
        size_t delta_bytes = tsc_uvarint_len(tsc_zigzag(b->k_first)) + tsc_uvarint_len(tsc_zigzag(lo)) +
                             tsc_codec2_packed_bytes(samples - 1, tsc_codec2_width((uint64_t)hi - (uint64_t)lo));
        best = delta_bytes < best ? delta_bytes : best;
    }
    return 1 + best + 1 + tsc_uvarint_len(b->exceptions) + b->exception_bytes;
}

/*
 * Count one value in the bound's decimal fields as the group coder would
 * (lib/codec2/encoder.c, plan_decimal). @return 0 when the hint does not read it exactly.
 */
static int decimal_add(tschunk_group_bound *b, uint64_t bits, tsc_codec2_decimal hint)
{
    int64_t k = 0, diff = 0;
    int reading = hint.usable ? tsc_codec2_read(bits, hint.exponent, hint.as_float, &k, &diff) : TSC2_FAR;
    if (reading != TSC2_EXACT) {
        b->exceptions++;
        b->exception_bytes += (uint32_t)tsc_codec2_exception_bytes(reading, diff);
        if (reading == TSC2_FAR) return 0;
    }
    if (b->decimals == 0) {
        b->k_min = b->k_max = b->k_first = k;
    } else {
        int64_t step = k - b->k_last;
        b->step_min = step < b->step_min ? step : b->step_min;
        b->step_max = step > b->step_max ? step : b->step_max;
        b->k_min = k < b->k_min ? k : b->k_min;
        b->k_max = k > b->k_max ? k : b->k_max;
    }
    b->k_last = k;
    b->decimals++;
    return reading == TSC2_EXACT;
}

static void decimal_reset(tschunk_group_bound *b)
{
    b->decimals = b->exceptions = b->exception_bytes = 0;
    b->step_min = INT64_MAX;
    b->step_max = INT64_MIN;
}

/* Add a sample to a copy of the bound (pending samples before it: `before`). @return decimal_add's result. */
static int bound_add(tschunk_group_bound *b, const tschunk_encoder *enc, uint32_t before, int64_t ts,
                     uint64_t bits, tsc_codec2_decimal hint)
{
    if (before == 0) {
        memset(b, 0, sizeof *b);
        b->wlead = b->wtrail = TSC_XOR_NO_WINDOW;
        decimal_reset(b);
    } else {
        uint64_t delta = (uint64_t)ts - (uint64_t)enc->prev_ts;
        b->min_delta = before == 1 || delta < b->min_delta ? delta : b->min_delta;
        b->max_delta = before == 1 || delta > b->max_delta ? delta : b->max_delta;
    }
    uint64_t x = bits ^ (before ? enc->prev_bits : enc->c2.flushed_bits);
    b->xor_bits += tsc_xor_size_step(x, &b->wlead, &b->wtrail);
    return decimal_add(b, bits, hint);
}

/*
 * A value the hint cannot read that a larger exponent can: move the hint up
 * and count the open group again (at most 15 times a group, as the exponent
 * only grows).
 */
static void widen_hint(tschunk_group_bound *b, const tschunk_encoder *enc, uint64_t bits, tsc_codec2_decimal *hint)
{
    int e = tsc_codec2_smallest_exponent(bits, hint->as_float);
    if (e <= (int)hint->exponent) return;
    hint->exponent = (unsigned)e;
    decimal_reset(b);
    for (uint32_t i = 0; i < enc->c2.pending; i++)
        decimal_add(b, tsc_load64_le(tsc_codec2_raw_slot(enc, i) + 8), *hint);
    decimal_add(b, bits, *hint);
}

static size_t open_group_bound(const tschunk_group_bound *b, uint32_t samples, int64_t first_ts, int64_t flushed_ts)
{
    uint64_t lead = (uint64_t)first_ts - (uint64_t)flushed_ts;
    size_t bytes = tsc_uvarint_len(tsc_zigzag((int64_t)(lead - (samples >= 2 ? b->min_delta : 0))));
    if (samples >= 2)
        bytes += 1 + tsc_uvarint_len(b->min_delta) +
                 tsc_codec2_packed_bytes(samples - 1, tsc_codec2_width(b->max_delta - b->min_delta));
    size_t xor_stream = (size_t)((b->xor_bits + 7) / 8), raw = 1 + 8 * (size_t)samples;
    size_t values = 1 + tsc_uvarint_len(xor_stream) + xor_stream;
    values = raw < values ? raw : values;
    size_t decimal = decimal_bytes(b, samples);
    return bytes + (decimal < values ? decimal : values);
}

/* The max_bytes check, and the bound's update when the sample is admitted. */
static size_t admit_bytes(tschunk_encoder *enc, int64_t ts, uint64_t bits)
{
    tsc_codec2_decimal hint = hint_of(enc);
    if (enc->c2.pending == 0 && !hint.usable) {
        /* No reading yet: the first value's own (doubles first, then float32). */
        int e = tsc_codec2_smallest_exponent(bits, 0);
        int as_float = e < 0;
        if (e < 0) e = tsc_codec2_smallest_exponent(bits, 1);
        hint = (tsc_codec2_decimal){e < 0 ? 0u : (unsigned)e, as_float, e >= 0};
    }
    tschunk_group_bound b = enc->c2.bound;
    if (!bound_add(&b, enc, enc->c2.pending, ts, bits, hint) && hint.usable) widen_hint(&b, enc, bits, &hint);
    int64_t first_ts = enc->c2.pending ? (int64_t)tsc_load64_le(tsc_codec2_raw_slot(enc, 0)) : ts;
    size_t total = chunk_header_bytes(enc->count + 1) + enc->c2.group_end +
                   open_group_bound(&b, enc->c2.pending + 1, first_ts, enc->c2.flushed_ts);
    if (total > enc->byte_limit) return TSC_ERROR(CHUNK_FULL);
    enc->c2.bound = b;
    set_hint(enc, hint);
    return 0;
}

/*
 * Appends that certainly fit every limit, for the fast path: within the open
 * group, under max_samples, and in the buffer even if the group ends RAW.
 * None under max_bytes, whose bound is updated on every append. The chunk's
 * first sample too (since 0.35.0): tsc_codec2_sync takes first_ts and
 * first_bits from its raw slot, so a restarted chunk costs no checked append.
 */
void tsc_codec2_refresh_fast(tschunk_encoder *enc)
{
    size_t room = enc->capacity - TSCHUNK_HEADER_MAX, worst = enc->c2.group_end + 15 + 16 * (size_t)enc->c2.pending;
    size_t fit = room > worst ? (room - worst) / 16 : 0;
    size_t left = TSC2_GROUP - enc->c2.pending;
    left = fit < left ? fit : left;
    left = enc->max_samples - enc->count < left ? enc->max_samples - enc->count : left;
    enc->safe_left = enc->byte_limit ? 0 : (uint32_t)left;
    enc->c2.synced = enc->c2.pending; /* count was up to date */
    enc->c2.fast_end = enc->c2.pending + enc->safe_left;
}

void tsc_codec2_flush(tschunk_encoder *enc)
{
    tsc_codec2_sync(enc);
    flush_group(enc);
    tsc_codec2_refresh_fast(enc);
}

/*
 * The caller's next samples, asked for while this group is encoded: the arrays are read once, 2 KB a group
 * in one burst after about a thousand cycles of work, which the hardware prefetcher does not run ahead of.
 */
static void prefetch_samples(const int64_t *ts, const double *values, size_t n)
{
    for (size_t i = 0; i < n; i += 64 / sizeof ts[0]) {
        TSC_PREFETCH(ts + i);
        TSC_PREFETCH(values + i);
    }
}

size_t tsc_codec2_append_groups(tschunk_encoder *enc, const int64_t *ts, const double *values, size_t n)
{
    size_t done = 0;
    for (;;) {
        uint32_t open = enc->c2.pending, wanted = TSC2_GROUP - open; /* the open group's raw samples, then ours */
        if (tsc_codec2_count(enc) == 0 || n - done < wanted || tsc_codec2_safe_left(enc) < wanted) break;
        int64_t group_ts[TSC2_GROUP];
        uint64_t bits[TSC2_GROUP];
        const int64_t *times = ts + done; /* no open group (every group of a chunk but its first): read in place */
        if (open) {
            load_open_group(enc, group_ts, bits);
            memcpy(group_ts + open, ts + done, wanted * sizeof group_ts[0]);
            times = group_ts;
        }
        memcpy(bits + open, values + done, wanted * sizeof bits[0]); /* the caller's doubles, read as bits */
        if (tsc_codec2_goes_back(times + open, wanted, enc->prev_ts))
            break; /* the raw path takes the samples before it and refuses it */
        size_t next = done + wanted, ahead = n - next < TSC2_GROUP ? n - next : TSC2_GROUP;
        prefetch_samples(ts + next, values + next, ahead);
        tsc_codec2_sync(enc);
        enc->count += wanted;
        enc->c2.pending = enc->c2.synced = TSC2_GROUP;
        enc->prev_ts = times[TSC2_GROUP - 1];
        enc->prev_bits = bits[TSC2_GROUP - 1];
        encode_open_group(enc, times, bits);
        tsc_codec2_refresh_fast(enc);
        done += wanted;
    }
    return done;
}

size_t tsc_codec2_append(tschunk_encoder *enc, int64_t ts, uint64_t bits)
{
    if (tsc_codec2_count(enc) && ts < enc->prev_ts) return TSC_ERROR(OUT_OF_ORDER);
    if (tsc_codec2_count(enc) >= enc->max_samples) return TSC_ERROR(CHUNK_FULL);
    size_t room = enc->capacity - TSCHUNK_HEADER_MAX;
    if (enc->c2.group_end + tsc_codec2_group_bound(enc->c2.pending + 1) > room) return TSC_ERROR(DST_TOO_SMALL);
    if (enc->byte_limit) {
        size_t err = admit_bytes(enc, ts, bits);
        if (err) return err;
    }
    tsc_codec2_sync(enc); /* taken: from here on the state changes */
    uint8_t *slot = tsc_codec2_raw_slot(enc, enc->c2.pending);
    tsc_store64_le(slot, (uint64_t)ts);
    tsc_store64_le(slot + 8, bits);
    if (enc->count == 0) {
        enc->first_ts = ts;
        enc->first_bits = bits;
    }
    enc->prev_ts = ts;
    enc->prev_bits = bits;
    enc->count++;
    enc->c2.synced = ++enc->c2.pending;
    if (enc->c2.pending == TSC2_GROUP) flush_group(enc);
    tsc_codec2_refresh_fast(enc);
    return 0;
}

static unsigned scaled_flag(const tschunk_encoder *enc) { return enc->c2.ts_scaled ? TSCHUNK_FLAG_TS_SCALED : 0; }

/* The header: magic and version, flags and codec, count, then what the flags carry. A constant value whose
 * low 15 bits are zero (1.0 and 0: 2 and 1 bytes; 0.5, 100, 1e6: 2-4) is written short (VAL_SHORT). */
static size_t write_header(const tschunk_encoder *enc, unsigned flags, uint8_t *out)
{
    size_t h = 0;
    uint64_t reversed = flags & TSCHUNK_FLAG_VAL_CONST ? tsc_codec2_reverse64(enc->first_bits) : 0;
    if ((flags & TSCHUNK_FLAG_VAL_CONST) && tsc_uvarint_len(reversed) < 8) flags |= TSCHUNK_FLAG_VAL_SHORT;
    out[h++] = (uint8_t)(TSC_MAGIC_NIBBLE << 4 | TSC_FORMAT_VERSION);
    out[h++] = (uint8_t)(flags << 4 | TSCHUNK_CODEC_TSC2);
    h += tsc_put_uvarint(out + h, tsc_codec2_count(enc)); /* a snapshot's encoder may lag */
    if (flags & TSCHUNK_FLAG_TS_CONST) {
        h += tsc_put_uvarint(out + h, tsc_zigzag(enc->first_ts));
        h += tsc_put_uvarint(out + h, enc->first_delta);
    }
    if (flags & TSCHUNK_FLAG_VAL_SHORT) h += tsc_put_uvarint(out + h, reversed);
    else if (flags & TSCHUNK_FLAG_VAL_CONST) {
        tsc_store64_le(out + h, enc->first_bits);
        h += 8;
    }
    return h;
}

/*
 * The fewest bytes the flags' blocks take: a timestamp block of two or more
 * samples holds a lead, a form byte and a delta (3), a value block its mode byte.
 */
static size_t least_dropped(const tschunk_encoder *enc, unsigned flags)
{
    size_t groups = (enc->count + TSC2_GROUP - 1) / TSC2_GROUP, multi = enc->count / TSC2_GROUP;
    multi += enc->count % TSC2_GROUP >= 2;
    return (flags & TSCHUNK_FLAG_TS_CONST ? 3 * multi : 0) + (flags & TSCHUNK_FLAG_VAL_CONST ? groups : 0);
}

/*
 * The bytes of group `index` (at `read`, n samples) that the flags keep: [*keep_from, *keep_to). Without
 * max_bytes the first TSC2_KNOWN_GROUPS groups' sizes and timestamp blocks are known (group_bytes,
 * group_ts_bytes): nothing is parsed (its timestamp block's parse was 2% of a regular series' append at
 * 120-sample chunks). Where a later group ends is known when it is the last (at group_end), and then only
 * its timestamp block is parsed (ETTh1's exceptions). @return the group's size.
 */
static size_t kept_range(const tschunk_encoder *enc, size_t read, uint32_t n, size_t index, unsigned flags,
                         size_t *keep_from, size_t *keep_to)
{
    size_t size, ts_bytes;
    if (!enc->byte_limit && index < TSC2_KNOWN_GROUPS) {
        size = enc->c2.group_bytes[index];
        ts_bytes = enc->c2.group_ts_bytes[index];
    } else {
        size_t known = (enc->count - 1) / TSC2_GROUP == index ? enc->c2.group_end - read : 0;
        tsc_codec2_group g;
        tsc_codec2_parse_group(group_area(enc) + read, enc->c2.group_end - read, n,
                               scaled_flag(enc) | (known ? TSCHUNK_FLAG_VAL_CONST : 0u), &g);
        size = known ? known : g.size;
        ts_bytes = g.ts_bytes;
    }
    *keep_from = flags & TSCHUNK_FLAG_TS_CONST ? ts_bytes : 0;
    *keep_to = flags & TSCHUNK_FLAG_VAL_CONST ? ts_bytes : size;
    return size;
}

/*
 * Drop the blocks the flags make redundant, in place (each group moves down).
 * A first pass sizes the saving, unless least_dropped already shows it pays;
 * a chunk of one group is parsed once for both, and not moved: its kept bytes
 * start at *kept_from (0 otherwise), where finish's move takes them from.
 * @return the groups' new size, or SIZE_MAX (nothing moved) when that is not smaller overall.
 */
static size_t drop_constant_blocks(tschunk_encoder *enc, unsigned flags, size_t header_growth, size_t *kept_from)
{
    uint8_t *area = group_area(enc);
    size_t from, to;
    *kept_from = 0;
    if (enc->count <= TSC2_GROUP) {
        size_t size = kept_range(enc, 0, enc->count, 0, flags, &from, &to);
        if (size - (to - from) <= header_growth) return SIZE_MAX;
        *kept_from = from;
        return to - from;
    }
    size_t saved = 0;
    for (int pass = least_dropped(enc, flags) > header_growth; pass < 2; pass++) {
        size_t read = 0, write = 0;
        for (uint32_t done = 0; done < enc->count;) {
            uint32_t n = enc->count - done < TSC2_GROUP ? enc->count - done : TSC2_GROUP;
            size_t size = kept_range(enc, read, n, done / TSC2_GROUP, flags, &from, &to);
            if (pass == 0) saved += size - (to - from);
            else if (to > from) memmove(area + write, area + read + from, to - from);
            write += to > from ? to - from : 0;
            read += size;
            done += n;
        }
        if (pass == 0 && saved <= header_growth) return SIZE_MAX;
        if (pass == 1) return write;
    }
    return SIZE_MAX;
}

/*
 * A TS_SCALED chunk none of whose groups scaled its fields: each block's scale byte (a 1, after the lead and
 * the form byte) dropped in place, and the chunk no longer TS_SCALED; it costs such a chunk nothing.
 */
static void drop_unit_scales(tschunk_encoder *enc)
{
    uint8_t *area = group_area(enc);
    size_t read = 0, write = 0;
    for (uint32_t done = 0; done < enc->count;) {
        uint32_t n = enc->count - done < TSC2_GROUP ? enc->count - done : TSC2_GROUP;
        tsc_codec2_group g;
        tsc_codec2_parse_group(area + read, enc->c2.group_end - read, n, TSCHUNK_FLAG_TS_SCALED, &g);
        size_t scale_at = n >= 2 ? tsc_uvarint_len(g.ts_offset) + 1 : g.size; /* the group's own bytes */
        memmove(area + write, area + read, scale_at);
        if (n >= 2) memmove(area + write + scale_at, area + read + scale_at + 1, g.size - scale_at - 1);
        size_t index = done / TSC2_GROUP; /* its known size loses the byte too */
        if (n >= 2 && !enc->byte_limit && index < TSC2_KNOWN_GROUPS) {
            enc->c2.group_bytes[index]--;
            enc->c2.group_ts_bytes[index]--;
        }
        write += n >= 2 ? g.size - 1 : g.size;
        read += g.size;
        done += n;
    }
    enc->c2.group_end = write;
    enc->c2.ts_scaled = TSC2_SCALE_OFF;
}

size_t tsc_codec2_finish(tschunk_encoder *enc)
{
    tsc_codec2_sync(enc);
    enc->safe_left = enc->c2.fast_end = 0;
    if (enc->c2.pending) flush_group(enc);
    if (enc->c2.ts_scaled == TSC2_SCALE_ON) drop_unit_scales(enc);
    unsigned flags = 0;
    if (enc->count >= 2)
        flags = (enc->c2.irregular ? 0u : TSCHUNK_FLAG_TS_CONST) | (enc->c2.varied ? 0u : TSCHUNK_FLAG_VAL_CONST);
    /* TS_CONST drops the scaled blocks; TS_SCALED takes no header byte, so both headers size alike with it */
    unsigned scaled = scaled_flag(enc);
    uint8_t header[2 + 3 + 10 + 10 + 8];
    size_t h = 0, groups = enc->c2.group_end, kept_from = 0;
    if (flags) { /* the plain header is magic, flags and count (chunk_header_bytes): what the flags add to it */
        size_t flagged = write_header(enc, flags | (flags & TSCHUNK_FLAG_TS_CONST ? 0u : scaled), header);
        size_t kept = drop_constant_blocks(enc, flags, flagged - chunk_header_bytes(enc->count), &kept_from);
        if (kept != SIZE_MAX) groups = kept, h = flagged;
    }
    if (!h) h = write_header(enc, scaled, header);
    memmove(enc->dst + h, group_area(enc) + kept_from, groups);
    memcpy(enc->dst, header, h);
    return h + groups;
}

/* The chunk as it would be finished now, without the constant flags, into another buffer. */
size_t tsc_codec2_snapshot(const tschunk_encoder *enc, uint8_t *out, size_t capacity)
{
    uint8_t header[2 + 3 + 10 + 10 + 8];
    size_t h = write_header(enc, scaled_flag(enc), header);
    if (h + enc->c2.group_end + (enc->c2.pending ? tsc_codec2_group_bound(enc->c2.pending) : 0) > capacity)
        return TSC_ERROR(DST_TOO_SMALL);
    memcpy(out, header, h);
    memcpy(out + h, group_area(enc), enc->c2.group_end);
    size_t size = h + enc->c2.group_end;
    if (enc->c2.pending) {
        int64_t ts[TSC2_GROUP];
        uint64_t bits[TSC2_GROUP];
        load_open_group(enc, ts, bits);
        tsc_codec2_choice choice = {hint_of(enc), 0, TSC2_TS_SEARCH, 0, 0, TSC2_FORMS, 0, 0, enc->c2.ts_scaled,
                                    NULL, 0, 0};
        size += tsc_codec2_encode_group(out + size, ts, bits, enc->c2.pending, enc->c2.flushed_ts, enc->c2.flushed_bits,
                                        TSC2_EFFORT_FULL, &choice);
    }
    return size;
}
