/*
 * Codec 2 group encoder: one group of up to 128 samples, written in the
 * smallest of its value forms. Called when a group fills and at finish, so
 * its cost is amortised over the group; it allocates nothing (its scratch is
 * on the stack, about 4 KiB).
 */
#include "format.h"
#include "../codec/xor.h"

/* ------------------------------------------------------------------ timestamps */

/* Greatest common divisor (binary); gcd(0, b) = b. */
static uint64_t gcd64(uint64_t a, uint64_t b)
{
    if (a == 0 || b == 0) return a | b;
    unsigned shift = (unsigned)__builtin_ctzll(a | b);
    a >>= __builtin_ctzll(a);
    do {
        b >>= __builtin_ctzll(b);
        uint64_t low = a < b ? a : b;
        b = (a < b ? b : a) - low;
        a = low;
    } while (b);
    return a << shift;
}

/* Exact division by d = 2^shift * odd: a shift and a multiplication by odd's inverse modulo 2^64 (no divide). */
typedef struct {
    unsigned shift;
    uint64_t inverse, limit; /* x >> shift is a multiple of odd iff (x >> shift) * inverse <= limit */
} divisor;

static divisor divisor_of(uint64_t d)
{
    divisor v;
    v.shift = (unsigned)__builtin_ctzll(d);
    uint64_t odd = d >> v.shift, inverse = odd; /* right to 3 bits; each step doubles that */
    for (int i = 0; i < 5; i++) inverse *= 2 - odd * inverse;
    v.inverse = inverse;
    v.limit = UINT64_MAX / odd;
    return v;
}

/* Whether d divides x; *quotient = x / d when it does. */
TSC_INLINE int divides(divisor v, uint64_t x, uint64_t *quotient)
{
    *quotient = (x >> v.shift) * v.inverse;
    return ((x & ((UINT64_C(1) << v.shift) - 1)) == 0) & (*quotient <= v.limit); /* 0 included; no branch */
}

/*
 * The largest d dividing every value (1 when only 1 does, or all are 0), and when above 1 each value / d in
 * quotients: one pass, a gcd only when a value breaks the divisor so far (then the quotients before it again).
 */
static uint64_t common_divisor(const uint64_t *values, size_t m, uint64_t *quotients)
{
    size_t first = 0;
    while (first < m && values[first] == 0) first++;
    if (first == m) return 1;
    uint64_t g = values[first];
    divisor v = divisor_of(g);
    for (size_t i = 0; i < m; i++) {
        if (divides(v, values[i], &quotients[i])) continue; /* zeros and multiples: the likely way */
        g = gcd64(g, values[i]);
        if (g == 1) return 1;
        v = divisor_of(g);
        for (size_t j = 0; j <= i; j++) divides(v, values[j], &quotients[j]);
    }
    return g;
}

/* The step of a grid through ts[0] and ts[n-1]: their mean delta, rounded to nearest. */
static uint64_t grid_step(const int64_t *ts, size_t n)
{
    uint64_t span = (uint64_t)ts[n - 1] - (uint64_t)ts[0], gaps = n - 1;
    return span / gaps + ((span % gaps) * 2 >= gaps);
}

/*
 * Two forms, the smaller written: DELTA packs ts[i] - ts[i-1] - min_delta;
 * GRID packs ts[i] - (ts[0] + i * step) - min_offset, which costs
 * log2(jitter range) on scrapes that keep to a schedule (deltas cost the
 * range of a difference of two jitters, one bit more) and needs no prefix sum.
 */
/* How a group's timestamp fields are packed: plain at their full width, or PATCHED at a narrower one. */
typedef struct {
    unsigned width;
    unsigned char patched;
    unsigned char few_below; /* at most two fields narrower than `width` (known only from a histogram; else 0) */
    size_t bytes;            /* packed fields and, when patched, the patch list */
} field_plan;

/* How many of the m fields need each width 0..full (the largest). */
static void width_counts(const uint64_t *fields, size_t m, unsigned full, size_t *count)
{
    /* Four interleaved histograms: consecutive fields of one width would otherwise chain through memory. Byte
     * counters (m <= TSC2_GROUP < 256): clearing them was a third of the function's instructions as words. */
    uint8_t quad[4][72] = {{0}};
    for (size_t i = 0; i < m; i++) quad[i & 3][tsc_codec2_width(fields[i])]++;
    for (unsigned b = 0; b <= full; b++) count[b] = (size_t)quad[0][b] + quad[1][b] + quad[2][b] + quad[3][b];
}

/* A wrapped timestamp field's patch at width w: its index byte and the uvarint of its 64 - w high bits. */
TSC_INLINE size_t wrapped_patch_bytes(unsigned w) { return 1 + (64 - w + 6) / 7; }

/*
 * plan_fields from the width counts (full > 3), and raise_base's candidates: `wrapped` more fields of 64 bits that
 * the counts leave out (fields wrapped below a raised base), which must be patches, each an index byte and
 * ceil((64 - w) / 7) bytes of high bits at width w; the counts then stay as narrow as the fields that do not wrap.
 */
TSC_INLINE field_plan plan_counts_wrapped(const size_t *by_width, size_t m, unsigned full, size_t wrapped)
{
    /*
     * above[x]: the fields wider than x bits. A field of p bits patched at width w costs its index byte and
     * ceil((p - w) / 7) bytes of high bits, one for each of x = w, w + 7, ... below p: so the patch list at
     * w is above[w] index bytes plus above[x] over those x, in a few steps a width instead of a pass over the
     * wider widths.
     */
    size_t above[66];
    above[full] = 0;
    for (unsigned b = full; b-- > 0;) above[b] = above[b + 1] + by_width[b + 1];
    field_plan best = {full, 0, 0, wrapped ? SIZE_MAX : tsc_codec2_packed_bytes(m, full)};
    for (unsigned w = 0; w < full + (wrapped != 0) && w <= 62; w++) {
        size_t patches = above[w] + wrapped;
        if ((w && !by_width[w]) || patches > 255) continue; /* the candidates: widths some field needs, and 0 */
        size_t patch_bytes = above[w] + wrapped * wrapped_patch_bytes(w);
        for (unsigned x = w; x < full; x += 7) patch_bytes += above[x];
        size_t bytes = tsc_codec2_packed_bytes(m, w) + tsc_uvarint_len(patches) + patch_bytes;
        if (bytes < best.bytes) best = (field_plan){w, 1, 0, bytes};
    }
    best.few_below = best.width > 0 && m - above[best.width - 1] <= 2;
    return best;
}

TSC_INLINE field_plan plan_counts(const size_t *by_width, size_t m, unsigned full)
{
    return plan_counts_wrapped(by_width, m, full, 0);
}

/*
 * The cheapest packing of m fields whose largest needs `full` bits: each
 * candidate width is one that some field needs (from a histogram of widths),
 * and the fields wider than it become patches of 1 + varint(high) bytes.
 */
static field_plan plan_fields(const uint64_t *fields, size_t m, unsigned full)
{
    if (full <= 3) return (field_plan){full, 0, 0, tsc_codec2_packed_bytes(m, full)}; /* a patch costs 16+ bits */
    size_t count[65];
    width_counts(fields, m, full, count);
    return plan_counts(count, m, full);
}

/*
 * For a group that reuses the timestamp form: when its fields need exactly
 * the previous group's width, that width unpatched, without the histogram;
 * any other width (a spike, a change of jitter) searches with plan_fields.
 */
static field_plan plan_like(const uint64_t *fields, size_t m, unsigned full, unsigned previous)
{
    if (full != previous) return plan_fields(fields, m, full);
    return (field_plan){full, 0, 0, tsc_codec2_packed_bytes(m, full)};
}

/*
 * A TS_SCALED chunk's fields divided by their common divisor, when their packing (patches included) then saves
 * more than the divisor's uvarint takes past its first byte (a scale of 1 costs that byte anyway); a group that
 * reuses the timestamp form (`reuse`) takes the scaled fields unpatched when they need exactly the previous
 * width, without planning either (plan_like's rule). *plan: in, the fields' width; out, their packing when
 * planned here, else bytes SIZE_MAX (no common divisor: the caller plans). @return the scale (1: unchanged).
 */
static uint64_t scale_fields(uint64_t *fields, size_t m, uint64_t largest, int reuse, unsigned previous,
                             field_plan *plan)
{
    plan->bytes = SIZE_MAX;
    uint64_t scaled[TSC2_GROUP], scale = common_divisor(fields, m, scaled);
    if (scale == 1) return 1;
    unsigned scaled_full = tsc_codec2_width(largest / scale);
    field_plan after = {scaled_full, 0, 0, tsc_codec2_packed_bytes(m, scaled_full)}, before = *plan;
    if (!reuse || scaled_full != previous) {
        size_t count[65], lifted[65] = {0};
        width_counts(scaled, m, scaled_full, count);
        if (scaled_full > 3) after = plan_counts(count, m, scaled_full);
        /*
         * The unscaled plan is sized only when it might win: a field q * scale needs at least width(q) + lift
         * bits, so the plan of the scaled counts lifted is a lower bound of it (each width's patches fewer and
         * cheaper, each candidate's packing narrower), and when the scaled plan beats even that, it wins.
         */
        unsigned lift = tsc_codec2_width(scale) - 1, lifted_full = scaled_full + lift;
        int bounded = plan->width > 3 && lifted_full <= 64;
        if (bounded)
            for (unsigned b = 0; b <= scaled_full; b++) lifted[b ? b + lift : 0] += count[b];
        if (!bounded || after.bytes + tsc_uvarint_len(scale) >= plan_counts(lifted, m, lifted_full).bytes + 1)
            before = plan_fields(fields, m, plan->width);
    }
    if (before.bytes != SIZE_MAX && after.bytes + tsc_uvarint_len(scale) >= before.bytes + 1) {
        *plan = before;
        return 1;
    }
    memcpy(fields, scaled, m * sizeof *fields);
    *plan = after;
    return scale;
}

/*
 * Whether this first group's DELTA fields would be written scaled. Their divisor is also that of the steps'
 * differences from the first step (the same lattice): a few of those first, so that jittered steps (a chunk's
 * common case, once per chunk) answer after two or three gcds, before any pass over the group.
 */
int tsc_codec2_scaled_chunk(const int64_t *ts, size_t n)
{
    if (n < 3) return 0;
    uint64_t first = (uint64_t)ts[1] - (uint64_t)ts[0], g = 0;
    for (size_t i = 2; i < n && i < 10 && g != 1; i++) {
        uint64_t apart = (uint64_t)ts[i] - (uint64_t)ts[i - 1] - first;
        g = gcd64(g, (int64_t)apart < 0 ? 0 - apart : apart);
    }
    if (g == 1) return 0;
    uint64_t fields[TSC2_GROUP], min, max;
    tsc_codec2_deltas(ts + 1, n - 1, ts[0], fields, &min, &max);
    if (max == min) return 0;
    for (size_t i = 0; i + 1 < n; i++) fields[i] -= min;
    field_plan plan = {tsc_codec2_width(max - min), 0, 0, 0};
    return scale_fields(fields, n - 1, max - min, 0, 0, &plan) > 1;
}

/* The form byte's low bits, the packed fields, and the patch list. @return bytes after the form byte's fields. */
static size_t write_fields(uint8_t *p, uint64_t *fields, size_t m, field_plan fp)
{
    uint8_t at[TSC2_GROUP];
    uint64_t high[TSC2_GROUP];
    size_t patches = fp.patched ? tsc_codec2_split_patches(fields, m, fp.width, at, high) : 0;
    tsc_codec2_pack(p, fields, m, fp.width);
    size_t n = tsc_codec2_packed_bytes(m, fp.width);
    if (!fp.patched) return n;
    n += tsc_put_uvarint(p + n, patches);
    for (size_t x = 0; x < patches; x++) {
        p[n++] = at[x];
        n += tsc_put_uvarint(p + n, high[x]);
    }
    return n;
}

TSC_INLINE uint8_t form_code(field_plan fp) { return (uint8_t)(fp.patched ? TSC2_TS_PATCHED + fp.width : fp.width); }

/* zigzag(lead - expected): the group's first timestamp against the previous one plus the group's own step. */
TSC_INLINE uint64_t lead_field(uint64_t lead, uint64_t expected) { return tsc_zigzag((int64_t)(lead - expected)); }

/*
 * `only` (a TSC2_TS_FORM_*, or SEARCH) skips sizing the other form; *form receives the one written.
 * *width: in, the previous group's field width when `only` is a form (plan_like), else ignored; out, this group's.
 */
/* A DELTA block's head: the lead against the smallest step, the form byte, the scale (TS_SCALED chunks: scale
 * not 0), that step. @return its bytes. */
static size_t put_delta_head(uint8_t *out, uint64_t lead, uint64_t min, field_plan plan, uint64_t scale)
{
    uint8_t *p = out;
    p += tsc_put_uvarint(p, lead_field(lead, min));
    *p++ = form_code(plan);
    if (scale) p += tsc_put_uvarint(p, scale);
    p += tsc_put_uvarint(p, min);
    return (size_t)(p - out);
}

/* The DELTA block write_timestamps writes when every step inside the group is `step`: no field packed. */
static size_t write_regular_timestamps(uint8_t *out, const int64_t *ts, int64_t prev_ts, uint64_t step, int scaled,
                                       unsigned *form, unsigned *width)
{
    *form = TSC2_TS_FORM_DELTA;
    *width = 0;
    return put_delta_head(out, (uint64_t)ts[0] - (uint64_t)prev_ts, step, (field_plan){0, 0, 0, 0}, scaled ? 1 : 0);
}

/* The lowest, second and third lowest of m fields less `origin` (m >= 1; a missing one: UINT64_MAX). */
static void lowest_three(const uint64_t *fields, size_t m, uint64_t origin, uint64_t low[3])
{
    low[0] = low[1] = low[2] = UINT64_MAX;
    for (size_t i = 0; i < m; i++) {
        uint64_t f = fields[i] - origin;
        if (f >= low[2]) continue;
        if (f < low[1]) {
            low[2] = low[1];
            if (f < low[0]) low[1] = low[0], low[0] = f;
            else low[1] = f;
        } else {
            low[2] = f;
        }
    }
}

/* How many of the lowest fields lie below a base raised to low[k] (k = 1 or 2): the fields that wrap. */
TSC_INLINE size_t wrapped_below(const uint64_t low[3], unsigned k)
{
    return (size_t)(low[0] < low[k]) + (k == 2 && low[1] < low[k]);
}

/* The bytes of a timestamp block's head that depend on its fields' base: DELTA's lead (against the base) and base;
 * GRID's zigzag min_offset (its lead is against the step). */
static size_t base_bytes(int grid, uint64_t lead, uint64_t base)
{
    if (grid) return tsc_uvarint_len(tsc_zigzag((int64_t)base));
    return tsc_uvarint_len(lead_field(lead, base)) + tsc_uvarint_len(base);
}

/* Whether raise_base may pay: its test, inline where every timestamp plan runs it (out of the rare call). */
TSC_INLINE int base_may_rise(const field_plan *plan) { return plan->few_below && plan->width >= 2; }

/*
 * A step or two far below the others (a repeated timestamp, a retried scrape) makes the smallest step an outlier
 * that widens every field: fields taken from the second or third lowest step instead wrap below it (a field of
 * 2^64 - x, patched at about ten bytes), which the decoder's sums modulo 2^64 read back. The same for a GRID's
 * offsets (a retried scrape: one offset an interval below the schedule). Tried only when the plan's histogram
 * found at most two fields narrower than its width (base_may_rise; jitter puts about half of them there), and not
 * on fields divided by a scale (their divisor is that of fields that do not wrap). fields: in, the m fields from
 * *base. @return the block's bytes when a raised base is smaller than `bytes` (fields, *base and *plan then
 * updated), else `bytes`.
 */
__attribute__((noinline)) static size_t raise_base(uint64_t *fields, size_t m, uint64_t largest, int grid,
                                                   uint64_t lead, uint64_t *base, field_plan *plan, size_t bytes)
{
    uint64_t low[3], raised[TSC2_GROUP];
    lowest_three(fields, m, 0, low);
    const unsigned width = plan->width;
    const uint64_t packed_max = (UINT64_C(2) << (width - 1)) - 1;
    const size_t fixed = bytes - plan->bytes - base_bytes(grid, lead, *base); /* what a new base leaves as it is */
    uint64_t best_lift = 0;
    unsigned narrowest = width; /* the bound of the last candidate sized */
    for (unsigned k = 1; k < 3; k++) {
        uint64_t lift = low[k];
        /* The fields under the plan's width need at most `narrower` bits once lifted: try only when that pays for
         * a wrapped field (an index byte and about ten of high bits) more than the last candidate sized (a
         * retried scrape: the third lowest step is the jitter's, no narrower than the second's). */
        if (lift == 0 || lift > packed_max || lift == best_lift) continue;
        unsigned narrower = tsc_codec2_width(packed_max - lift);
        if (m * (narrowest - narrower) < 8 * 11) continue;
        narrowest = narrower;
        unsigned full = tsc_codec2_width(largest - lift); /* the fields that do not wrap */
        if (full > 56) continue;
        size_t count[65], wrapped = wrapped_below(low, k);
        for (size_t i = 0; i < m; i++) raised[i] = fields[i] - lift;
        width_counts(raised, m, full, count); /* the wrapped ones land past `full`, left out */
        field_plan candidate = plan_counts_wrapped(count, m, full, wrapped);
        size_t candidate_bytes = fixed + base_bytes(grid, lead, *base + lift) + candidate.bytes;
        if (candidate_bytes < bytes) bytes = candidate_bytes, best_lift = lift, *plan = candidate;
    }
    if (!best_lift) return bytes;
    for (size_t i = 0; i < m; i++) fields[i] -= best_lift;
    *base += best_lift;
    return bytes;
}

/*
 * For a reused form whose fields widened past the previous group's width by two bits or more (a low outlier in
 * this group too, as a retry in every group makes): the previous width, the one or two lowest fields wrapped below
 * a raised base, when every other field then fits it. No histogram, as plan_like takes an unchanged width.
 * `fixed`: the block's bytes that do not depend on the base. @return the block's bytes (fields, *base and *plan
 * updated), or SIZE_MAX (nothing changed).
 */
static size_t raise_like(uint64_t *fields, size_t m, uint64_t largest, int grid, uint64_t lead, uint64_t *base,
                         unsigned previous, field_plan *plan, size_t fixed)
{
    if (previous < 2 || previous > 56) return SIZE_MAX;
    uint64_t low[3];
    lowest_three(fields, m, 0, low);
    for (unsigned k = 1; k < 3; k++) {
        uint64_t lift = low[k];
        /* Past 2^63 the fields below the lift would not wrap wide (0 - lift is small: time wrapping around int64,
         * found by fuzzing in 0.44): they might need no patch, and a PATCHED block must carry one. */
        if (lift == 0 || lift > UINT64_C(1) << 63 || (largest - lift) >> previous) continue;
        size_t wrapped = wrapped_below(low, k);
        for (size_t i = 0; i < m; i++) fields[i] -= lift;
        *base += lift;
        *plan = (field_plan){previous, 1, 0,
                             tsc_codec2_packed_bytes(m, previous) + tsc_uvarint_len(wrapped) +
                                 wrapped * wrapped_patch_bytes(previous)};
        return fixed + base_bytes(grid, lead, *base) + plan->bytes;
    }
    return SIZE_MAX;
}

/*
 * A DELTA block's size: its fields are the steps less the smallest (in place), divided by a scale in TS_SCALED
 * chunks, then raised past a low outlier or two; `reuse`: the form is the previous group's (plan_like). *min: in,
 * the smallest step; out, the base written. *scale: 0 when none is written. @return the block's bytes.
 */
TSC_INLINE size_t size_delta(uint64_t *deltas, size_t m, uint64_t lead, uint64_t *min, uint64_t max, int scaled,
                             int reuse, unsigned previous, field_plan *plan, uint64_t *scale)
{
    for (size_t i = 0; i < m; i++) deltas[i] -= *min;
    if (reuse && !scaled && tsc_codec2_width(max - *min) > previous + 1) {
        size_t bytes = raise_like(deltas, m, max - *min, 0, lead, min, previous, plan, 0);
        *scale = 0;
        if (bytes != SIZE_MAX) return bytes;
    }
    *plan = (field_plan){tsc_codec2_width(max - *min), 0, 0, 0};
    *scale = scaled ? scale_fields(deltas, m, max - *min, reuse, previous, plan) : 0;
    if (plan->bytes == SIZE_MAX || !scaled)
        *plan = reuse ? plan_like(deltas, m, plan->width, previous) : plan_fields(deltas, m, plan->width);
    size_t bytes = tsc_uvarint_len(lead_field(lead, *min)) + tsc_uvarint_len(*min) + plan->bytes;
    if (*scale <= 1 && base_may_rise(plan)) bytes = raise_base(deltas, m, max - *min, 0, lead, min, plan, bytes);
    return bytes + (scaled ? tsc_uvarint_len(*scale) : 0);
}

TSC2_AVX2_CLONES
static size_t write_timestamps(uint8_t *out, const int64_t *ts, size_t n, int64_t prev_ts, unsigned only,
                               int *scaled_chunk, unsigned *form, unsigned *width)
{
    const int scaled = *scaled_chunk != 0;
    const unsigned previous = *width;
    *width = 0;
    uint8_t *p = out;
    uint64_t lead = (uint64_t)ts[0] - (uint64_t)prev_ts;
    *form = TSC2_TS_FORM_DELTA;
    if (n < 2) return tsc_put_uvarint(p, tsc_zigzag((int64_t)lead));
    uint64_t deltas[TSC2_GROUP], min, max;
    tsc_codec2_deltas(ts + 1, n - 1, ts[0], deltas, &min, &max);
    field_plan delta_plan = {0, 0, 0, 0};
    size_t delta_bytes = SIZE_MAX;
    /* A regular or nearly regular group cannot do better on a grid: DELTA then, even when GRID was asked for. */
    int grid_may_pay = only != TSC2_TS_FORM_DELTA && tsc_codec2_width(max - min) > 1;
    uint64_t delta_scale = 0, grid_scale = 0; /* 0: no scale written (not TS_SCALED) */
    if (only != TSC2_TS_FORM_GRID || !grid_may_pay)
        delta_bytes = size_delta(deltas, n - 1, lead, &min, max, scaled, only == TSC2_TS_FORM_DELTA, previous,
                                 &delta_plan, &delta_scale);
    uint64_t offsets[TSC2_GROUP];
    int64_t omin = 0, omax = 0;
    uint64_t step = 0;
    size_t grid_bytes = SIZE_MAX;
    field_plan grid_plan = {0, 0, 0, 0};
    if (grid_may_pay) {
        step = grid_step(ts, n);
        int64_t *signed_offsets = (int64_t *)(void *)offsets;
        for (size_t i = 1; i < n; i++)
            signed_offsets[i - 1] = (int64_t)((uint64_t)ts[i] - (uint64_t)ts[0] - (uint64_t)i * step);
        tsc_codec2_range_i64(signed_offsets, n - 1, &omin, &omax);
        for (size_t i = 0; i + 1 < n; i++) offsets[i] -= (uint64_t)omin;
        unsigned full = tsc_codec2_width((uint64_t)omax - (uint64_t)omin);
        grid_scale = (uint64_t)scaled; /* this encoder scales DELTA fields only: a TS_SCALED chunk's GRID blocks: 1 */
        size_t grid_fixed = tsc_uvarint_len(lead_field(lead, step)) + tsc_uvarint_len(step) +
                            (scaled ? tsc_uvarint_len(grid_scale) : 0);
        uint64_t grid_base = (uint64_t)omin, grid_largest = (uint64_t)omax - (uint64_t)omin;
        if (only == TSC2_TS_FORM_GRID && full > previous + 1)
            grid_bytes =
                raise_like(offsets, n - 1, grid_largest, 1, lead, &grid_base, previous, &grid_plan, grid_fixed);
        if (grid_bytes == SIZE_MAX) {
            grid_plan = only == TSC2_TS_FORM_GRID ? plan_like(offsets, n - 1, full, previous)
                                                  : plan_fields(offsets, n - 1, full);
            grid_bytes = grid_fixed + tsc_uvarint_len(tsc_zigzag(omin)) + grid_plan.bytes;
            if (base_may_rise(&grid_plan))
                grid_bytes = raise_base(offsets, n - 1, grid_largest, 1, lead, &grid_base, &grid_plan, grid_bytes);
        }
        omin = (int64_t)grid_base;
        /* A reused grid whose fields, raised or not, widened by two bits or more (a retried scrape shifts every
         * offset after it, where jitter moves the width by one): DELTA too. */
        if (delta_bytes == SIZE_MAX && grid_plan.width > previous + 1)
            delta_bytes = size_delta(deltas, n - 1, lead, &min, max, scaled, 0, previous, &delta_plan, &delta_scale);
    }
    if (grid_bytes < delta_bytes) {
        *form = TSC2_TS_FORM_GRID;
        *width = grid_plan.width;
        p += tsc_put_uvarint(p, lead_field(lead, step));
        *p++ = (uint8_t)(TSC2_TS_GRID | form_code(grid_plan));
        if (grid_scale) p += tsc_put_uvarint(p, grid_scale);
        p += tsc_put_uvarint(p, step);
        p += tsc_put_uvarint(p, tsc_zigzag(omin));
        return (size_t)(p - out) + write_fields(p, offsets, n - 1, grid_plan);
    }
    *width = delta_plan.width;
    if (delta_scale > 1) *scaled_chunk = TSC2_SCALE_USED;
    p += put_delta_head(p, lead, min, delta_plan, delta_scale);
    return (size_t)(p - out) + write_fields(p, deltas, n - 1, delta_plan);
}

/* ------------------------------------------------------------------ decimals */

/*
 * The search stops once k leaves the readable range (no larger exponent can
 * read the value), and a NEAR reading counts as a value's exponent only within
 * 16 ulps: random doubles sit within a few dozen ulps of some 11- or 12-digit
 * decimal, and counting those made their sampling slow for nothing. (A cap
 * at 2^44 was tried and cost nyc29_tw's coordinates 2.6 bits a value.)
 */
#define SEARCH_MAX_K TSC2_SEARCH_MAX_K
#define SEARCH_NEAR_ULPS TSC2_SEARCH_NEAR_ULPS

int tsc_codec2_smallest_exponent(uint64_t bits, int as_float)
{
    int e;
    if (tsc_codec2_smallest_exponent_simd(bits, as_float, &e)) return e;
    return tsc_codec2_smallest_exponent_scalar(bits, as_float);
}

int tsc_codec2_smallest_exponent_scalar(uint64_t bits, int as_float)
{
    int64_t k, diff;
    int near = -1;
    double magnitude = tsc_double_of(bits & ~(UINT64_C(1) << 63));
    for (unsigned e = 0; e <= TSC2_MAX_EXPONENT; e++) {
        if (e && magnitude * tsc_codec2_pow10[e] >= SEARCH_MAX_K) break;
        int reading = tsc_codec2_read(bits, e, as_float, &k, &diff);
        if (reading == TSC2_EXACT) return (int)e;
        if (reading == TSC2_NEAR && near < 0 && diff >= -SEARCH_NEAR_ULPS && diff <= SEARCH_NEAR_ULPS) near = (int)e;
    }
    return near;
}

/*
 * The exponent from a sample of the group (ALP's sampling idea): for each
 * exponent that some sampled value needs, the estimated cost of the group
 * (packed width from the sampled k range, plus each sampled exception's
 * entry), the cheapest kept. Gives up when the first three sampled values
 * have no reading, so real doubles cost little here.
 */
enum { SAMPLES = 8 };

/* Whether every sampled value reads with d, exactly or within SEARCH_NEAR_ULPS (a cheap correction). Until
 * 0.12.0 only exactly: float32 values printed to 16 digits (ETTh1) read NEAR, so every such group searched
 * every reading again and found the same one. */
static int reads_sample(const uint64_t *bits, size_t n, size_t step, tsc_codec2_decimal d)
{
    int64_t k, diff;
    for (size_t i = 0; i < n; i += step) {
        int reading = tsc_codec2_read(bits[i], d.exponent, d.as_float, &k, &diff);
        if (reading == TSC2_FAR || diff < -SEARCH_NEAR_ULPS || diff > SEARCH_NEAR_ULPS) return 0;
    }
    return 1;
}

static tsc_codec2_decimal choose_exponent(const uint64_t *bits, size_t n, tsc_codec2_decimal previous)
{
    size_t step = n >= SAMPLES ? n / SAMPLES : 1;
    /* The previous group's reading, when it still reads every sampled value and one less digit does not. */
    if (previous.usable && reads_sample(bits, n, step, previous)) {
        tsc_codec2_decimal shorter = previous;
        shorter.exponent--;
        if (previous.exponent == 0 || !reads_sample(bits, n, step, shorter)) return previous;
    }
    /* float32 readings are tried when every sampled value is a float32, or within a few ulps of one
     * (float32 data printed to 16 digits and read back, as ETT's). */
    int widened = 1;
    for (size_t i = 0; i < n; i += step) {
        uint64_t narrowed = tsc_bits_of((double)(float)tsc_double_of(bits[i]));
        uint64_t apart = narrowed > bits[i] ? narrowed - bits[i] : bits[i] - narrowed;
        widened &= apart <= SEARCH_NEAR_ULPS;
    }
    tsc_codec2_decimal best = {0, 0, 0};
    double best_cost = 0;
    for (int as_float = 0; as_float <= widened; as_float++) {
        int needed[SAMPLES + 1];
        size_t sampled = 0, misses = 0;
        for (size_t i = 0; i < n && sampled <= SAMPLES && !(misses == 3 && sampled == 3); i += step) {
            needed[sampled] = tsc_codec2_smallest_exponent(bits[i], as_float);
            misses += needed[sampled++] < 0;
        }
        if (misses == sampled || (misses == 3 && sampled == 3)) continue;
        uint64_t sample[SAMPLES + 1];
        for (size_t j = 0; j < sampled; j++) sample[j] = bits[j * step];
        for (size_t c = 0; c < sampled; c++) {
            if (needed[c] < 0 || (c && needed[c] == needed[c - 1])) continue;
            unsigned e = (unsigned)needed[c];
            int64_t kmin = INT64_MAX, kmax = INT64_MIN, ks[SAMPLES + 1], diffs[SAMPLES + 1];
            double exception_bits = 0;
            /* the sample's readings at once (read_block: tsc_codec2_read's k and diff, INT64_MIN out of range) */
            tsc_codec2_read_block(sample, sampled, e, as_float, ks, diffs);
            for (size_t j = 0; j < sampled; j++) {
                int64_t diff = diffs[j];
                int reading = diff == 0 ? TSC2_EXACT
                            : diff > -TSC2_NEAR_ULPS && diff < TSC2_NEAR_ULPS ? TSC2_NEAR : TSC2_FAR;
                if (reading != TSC2_EXACT) exception_bits += 8.0 * (double)tsc_codec2_exception_bytes(reading, diff);
                if (reading == TSC2_FAR) continue;
                kmin = ks[j] < kmin ? ks[j] : kmin;
                kmax = ks[j] > kmax ? ks[j] : kmax;
            }
            if (kmin > kmax) continue;
            double cost = (double)tsc_codec2_width((uint64_t)kmax - (uint64_t)kmin) + exception_bits / (double)sampled;
            if (!best.usable || cost < best_cost) {
                best = (tsc_codec2_decimal){e, as_float, 1};
                best_cost = cost;
            }
        }
    }
    /* Past 48 bits a value, decimals do not beat XOR or RAW: skip planning them. */
    if (best.usable && best_cost > 48) best.usable = 0;
    return best;
}

typedef struct {
    int64_t k[TSC2_GROUP];
    uint8_t exception_at[TSC2_GROUP]; /* position | TSC2_EXCEPTION_RAW */
    int64_t correction[TSC2_GROUP];   /* NEAR: bits - decoded bits */
    size_t exceptions;
    unsigned mode, raw; /* raw: the FAR exceptions, stored as 8 raw bytes */
    uint64_t base, min_step;
    field_plan packing; /* the fields' width, PATCHED or not (0.20.0) */
    size_t bytes; /* the whole value block, mode byte included; SIZE_MAX when not a decimal group */
} decimal_plan;

/* Bytes of m decimal fields at width w < full, the `patches` wider ones PATCHED (their high bits full - w wide). */
TSC_INLINE size_t patched_bytes(size_t m, unsigned w, unsigned full, size_t patches)
{
    return tsc_codec2_packed_bytes(m, w) + 2 + patches + tsc_codec2_packed_bytes(patches, full - w);
}

/*
 * The fields v[i] - lowest at width w < full with the wider ones patched, or plain when that is no smaller:
 * one pass that counts them. The patches' high bits are all packed at full - w bits (the widest field needs
 * that many), so their count alone sizes the list.
 */
TSC2_AVX2_CLONES
static field_plan plan_at(const int64_t *v, size_t m, int64_t lowest, unsigned w, unsigned full)
{
    field_plan plain = {full, 0, 0, tsc_codec2_packed_bytes(m, full)};
    uint64_t past = UINT64_C(1) << w;
    size_t patches = 0;
    for (size_t i = 0; i < m; i++) patches += (uint64_t)v[i] - (uint64_t)lowest >= past;
    size_t bytes = patched_bytes(m, w, full, patches);
    return patches && bytes + m / 16 < plain.bytes ? (field_plan){w, 1, 0, bytes} : plain;
}

/*
 * The packing of decimal fields v[i] - lowest, whose largest needs `full` bits: PATCHED (0.20.0) where that
 * pays, sized at one width in one pass (plan_at; sizing every width from a histogram of widths, as the
 * timestamps' patches are, costs about 10 instructions and 3 cycles a field, and took 25% more time appending
 * spiky files). A reused group (PATCH_REUSE; `previous`: the previous group's packing of these fields, from
 * tsc2_packing_of) takes its predecessor's patched width, or, when that one was not patched, looks further
 * only if its fields came out wider (a spike). Then the width is the widest below full of 8 fields spread
 * over the group, when few of the 8 need the top bits: none the top one, at most one the top two or two the
 * top four (a patch costs 2 bytes or more, and narrowing the fields by j bits saves j bits a field). Gauges'
 * and counters' fields fill their width and stop there.
 */
enum { PATCH_NONE, PATCH_SEARCH, PATCH_REUSE };
static field_plan pack_decimals(const int64_t *v, size_t m, int64_t lowest, unsigned full, int how, unsigned previous)
{
    field_plan plain = {full, 0, 0, tsc_codec2_packed_bytes(m, full)};
    if (how == PATCH_NONE || full <= 4 || m < 16) return plain;
    unsigned previous_width = previous >> 3;
    if (how == PATCH_REUSE && (previous & TSC2_PACK_PATCHED))
        return previous_width < full ? plan_at(v, m, lowest, previous_width, full) : plain;
    if (how == PATCH_REUSE && full <= previous_width) return plain;
    /* A field reaches the top bit from 2^(full-1) on, the top two from 2^(full-2), the top four from 2^(full-4). */
    uint64_t top1_from = UINT64_C(1) << (full - 1), top2_from = top1_from >> 1, top4_from = top1_from >> 3;
    unsigned top1 = 0, top2 = 0, top4 = 0;
    uint64_t below = 0; /* the largest sampled field under the top bit, | 1: it needs widest bits */
    for (size_t j = 0; j < 8; j++) {
        uint64_t field = (uint64_t)v[j * m / 8] - (uint64_t)lowest;
        top1 += field >= top1_from;
        top2 += field >= top2_from;
        top4 += field >= top4_from;
        below = field < top1_from && (field | 1) > below ? field | 1 : below;
    }
    int few = top1 == 0 || top2 <= 1 || top4 <= 2;
    return few && below ? plan_at(v, m, lowest, tsc_codec2_width(below), full) : plain;
}

/*
 * A counter's reset (or any step or two far below the others) makes the smallest step the DELTA fields' base and
 * widens every field to the reset's size: as raise_base does for timestamps, fields from the second or third
 * lowest step instead, the one or two below wrapping (patches whose high bits take 64 - width bits; decoders sum
 * modulo 2^64). Tried when the steps' mean sits in the top eighth of their range (steps_may_rise; jumps both ways
 * put it in the middle), and taken when it saves an eighth of the block (a raised group decodes through the
 * patched kernel: Food-price raised 81 groups for 0.09 bits a value, 29 of them for 0.06). @return the block's
 * DELTA bytes when smaller than `bytes` (*smin and *packing then updated), else `bytes`.
 */
static size_t raise_min_step(const int64_t *steps, size_t m, int64_t first, int64_t *smin, int64_t smax,
                             field_plan *packing, size_t bytes)
{
    uint64_t low[3];
    lowest_three((const uint64_t *)(const void *)steps, m, (uint64_t)*smin, low);
    int64_t best = *smin;
    for (unsigned k = 1; k < 3; k++) {
        if (low[k] == 0 || low[k] == UINT64_MAX) continue;
        /* The fields at or above the new base fit `width` bits; those below (at most k) wrap: the patches. */
        int64_t base = (int64_t)((uint64_t)*smin + low[k]);
        unsigned width = tsc_codec2_width((uint64_t)smax - (uint64_t)base);
        field_plan candidate = {width, 1, 0, patched_bytes(m, width, 64, wrapped_below(low, k))};
        size_t candidate_bytes = tsc_uvarint_len(tsc_zigzag(first)) + tsc_uvarint_len(tsc_zigzag(base)) +
                                 candidate.bytes;
        if (candidate_bytes + bytes / 8 < bytes) bytes = candidate_bytes, best = base, *packing = candidate;
    }
    *smin = best;
    return bytes;
}

/* raise_min_step's test, inline where every decimal plan runs it: the mean step (from k[0] and k[m]) in the top
 * eighth of the steps' range, at least 16 steps, a range of 8 bits or more. */
TSC_INLINE int steps_may_rise(size_t m, int64_t first, int64_t last, int64_t smin, int64_t smax)
{
    uint64_t range = (uint64_t)smax - (uint64_t)smin;
    /* |k| < 2^51: the fields' sum and m times the range stay below 2^59, and 8 times that below 2^62 */
    uint64_t fields_sum = (uint64_t)last - (uint64_t)first - (uint64_t)m * (uint64_t)smin;
    return m >= 16 && range >= 128 && fields_sum * 8 >= 7 * m * range;
}

/*
 * Read every value with c. FAR slots repeat the neighbouring k, so they widen
 * neither packed form; NEAR slots keep their own k and a correction.
 */
TSC2_AVX2_CLONES
static void plan_decimal(decimal_plan *d, const uint64_t *bits, size_t n, tsc_codec2_decimal c, unsigned patch)
{
    d->bytes = SIZE_MAX;
    if (!c.usable) return;
    d->exceptions = d->raw = 0;
    size_t first_ok = SIZE_MAX, exception_bytes = 0;
    int64_t diffs[TSC2_GROUP];
    tsc_codec2_read_block(bits, n, c.exponent, c.as_float, d->k, diffs);
    uint64_t any_diff = 0; /* clean decimal groups have none: skip the per-value walk */
    for (size_t i = 0; i < n; i++) any_diff |= (uint64_t)diffs[i];
    if (!any_diff) first_ok = 0;
    else d->exceptions = tsc_codec2_exceptions(diffs, n, d->correction, d->exception_at, &exception_bytes, &first_ok);
    if (first_ok == SIZE_MAX) return;
    for (size_t x = 0; x < d->exceptions; x++) {
        if (!(d->exception_at[x] & TSC2_EXCEPTION_RAW)) continue; /* NEAR: its own k */
        size_t i = d->exception_at[x] & ~TSC2_EXCEPTION_RAW;
        d->k[i] = i < first_ok ? d->k[first_ok] : d->k[i - 1];
        d->raw++;
    }
    int64_t kmin, kmax, smin = 0, smax = 0, steps[TSC2_GROUP];
    tsc_codec2_range_i64(d->k, n, &kmin, &kmax);
    for (size_t i = 1; i < n; i++) steps[i - 1] = d->k[i] - d->k[i - 1];
    if (n >= 2) tsc_codec2_range_i64(steps, n - 1, &smin, &smax);
    unsigned for_width = tsc_codec2_width((uint64_t)kmax - (uint64_t)kmin);
    unsigned delta_width = tsc_codec2_width((uint64_t)smax - (uint64_t)smin);
    /* A search sizes the patched widths of both packings; a reused group its predecessor's packing only. */
    int search = patch == TSC2_PACK_BOTH;
    int for_how = search ? PATCH_SEARCH : patch & TSC2_PACK_FOR ? PATCH_REUSE : PATCH_NONE;
    int delta_how = search ? PATCH_SEARCH : patch & TSC2_PACK_DELTA ? PATCH_REUSE : PATCH_NONE;
    field_plan for_packing = pack_decimals(d->k, n, kmin, for_width, for_how, patch);
    field_plan delta_packing = {delta_width, 0, 0, SIZE_MAX};
    size_t for_bytes = tsc_uvarint_len(tsc_zigzag(kmin)) + for_packing.bytes, delta_bytes = SIZE_MAX;
    if (n >= 2) {
        delta_packing = pack_decimals(steps, n - 1, smin, delta_width, delta_how, patch);
        delta_bytes = tsc_uvarint_len(tsc_zigzag(d->k[0])) + tsc_uvarint_len(tsc_zigzag(smin)) + delta_packing.bytes;
        if (steps_may_rise(n - 1, d->k[0], d->k[n - 1], smin, smax))
            delta_bytes = raise_min_step(steps, n - 1, d->k[0], &smin, smax, &delta_packing, delta_bytes);
    }
    int delta = delta_bytes < for_bytes;
    d->mode = TSC2_DECIMAL | (delta ? TSC2_DECIMAL_DELTA : 0) | (c.as_float ? TSC2_DECIMAL_FLOAT32 : 0) |
              c.exponent << 4;
    d->base = tsc_zigzag(delta ? d->k[0] : kmin);
    d->min_step = tsc_zigzag(smin);
    d->packing = delta ? delta_packing : for_packing;
    d->bytes = 1 + (delta ? delta_bytes : for_bytes) + 1 + tsc_uvarint_len(d->exceptions) + exception_bytes;
}

/*
 * PATCHED decimal fields at width w: the low bits packed, then u8 patch count, u8 high width (that of the
 * widest field's high bits), the patches' u8 field indexes (increasing) and their high bits packed at that
 * width. Unlike the timestamps' list (uvarints), its length is known without reading it, and its high bits
 * unpack like any field. @return the bytes written.
 */
static size_t write_patched_decimals(uint8_t *p, uint64_t *fields, size_t m, unsigned w)
{
    uint64_t high[TSC2_GROUP], widest = 0;
    uint8_t at[TSC2_GROUP];
    size_t patches = tsc_codec2_split_patches(fields, m, w, at, high);
    for (size_t x = 0; x < patches; x++) widest |= high[x];
    unsigned high_width = tsc_codec2_width(widest);
    size_t low_bytes = tsc_codec2_packed_bytes(m, w);
    tsc_codec2_pack(p, fields, m, w);
    p[low_bytes] = (uint8_t)patches;
    p[low_bytes + 1] = (uint8_t)high_width;
    memcpy(p + low_bytes + 2, at, patches);
    tsc_codec2_pack(p + low_bytes + 2 + patches, high, patches, high_width);
    return low_bytes + 2 + patches + tsc_codec2_packed_bytes(patches, high_width);
}

/* A DECIMAL block, or a MASKED one when mask is not NULL (then bits/n are the values not masked). */
TSC2_AVX2_CLONES
static size_t write_decimal(uint8_t *out, decimal_plan *d, const uint64_t *bits, size_t n, const uint8_t *mask,
                            size_t mask_bytes, tsc_codec2_choice *c)
{
    c->packing = tsc2_packing_of((d->mode & TSC2_DECIMAL_DELTA) != 0, d->packing.patched, d->packing.width);
    uint8_t *p = out;
    *p++ = (uint8_t)(mask ? (d->mode & ~3u) | TSC2_MASKED : d->mode);
    if (mask) {
        memcpy(p, mask, mask_bytes);
        p += mask_bytes;
    }
    p += tsc_put_uvarint(p, d->base);
    int delta = (d->mode & TSC2_DECIMAL_DELTA) != 0;
    if (delta) p += tsc_put_uvarint(p, d->min_step);
    *p++ = form_code(d->packing);
    uint64_t fields[TSC2_GROUP];
    int64_t origin = tsc_unzigzag(d->base), step = tsc_unzigzag(d->min_step);
    size_t nfields = delta ? n - 1 : n;
    if (delta)
        for (size_t i = 0; i < nfields; i++) fields[i] = (uint64_t)d->k[i + 1] - (uint64_t)d->k[i] - (uint64_t)step;
    else
        for (size_t i = 0; i < nfields; i++) fields[i] = (uint64_t)d->k[i] - (uint64_t)origin;
    if (d->packing.patched) p += write_patched_decimals(p, fields, nfields, d->packing.width);
    else p += write_fields(p, fields, nfields, d->packing);
    p += tsc_put_uvarint(p, d->exceptions);
    for (size_t x = 0; x < d->exceptions; x++) {
        unsigned at = d->exception_at[x];
        *p++ = (uint8_t)at;
        if (at & TSC2_EXCEPTION_RAW) {
            tsc_store64_le(p, bits[at & ~TSC2_EXCEPTION_RAW]);
            p += 8;
        } else {
            p += tsc_put_uvarint(p, tsc_zigzag(d->correction[x]));
        }
    }
    return (size_t)(p - out);
}

/* ------------------------------------------------------------------ XOR and the choice */

/* The XOR fields of the group into `stream` (which holds a worst-case group plus 8 bytes). @return its bytes. */
static size_t xor_stream(uint8_t *stream, size_t capacity, const uint64_t *bits, size_t n, uint64_t prev)
{
    tschunk_bit_writer w;
    tsc_bw_init(&w, stream, capacity * 8);
    uint8_t wlead = TSC_XOR_NO_WINDOW, wtrail = TSC_XOR_NO_WINDOW;
    for (size_t i = 0; i < n; i++) {
        tsc_xor_put(&w, bits[i] ^ prev, &wlead, &wtrail);
        prev = bits[i];
    }
    return tsc_bw_bytes(&w);
}

/* The XOR stream's bytes, sized without writing it: it is written only when the form wins. */
static size_t xor_stream_size(const uint64_t *bits, size_t n, uint64_t prev)
{
    uint64_t total = 0;
    uint8_t wlead = TSC_XOR_NO_WINDOW, wtrail = TSC_XOR_NO_WINDOW;
    for (size_t i = 0; i < n; i++) {
        total += tsc_xor_size_step(bits[i] ^ prev, &wlead, &wtrail);
        prev = bits[i];
    }
    return (size_t)((total + 7) / 8);
}

/* The fewest bits x's field takes: 1 for 0, else 2 and its meaningful bits. The trailing zeros are taken as
 * 63 - the leading zeros of the lowest set bit, so that gcc vectorizes the loop below where the CPU counts
 * leading zeros in vectors (AVX-512 CD). x | 1: defined at x == 0, whose 1 is taken. */
TSC_INLINE unsigned xor_field_least_bits(uint64_t x)
{
    unsigned lead = (unsigned)__builtin_clzll(x | 1), trail = 63 - (unsigned)__builtin_clzll((x & (0 - x)) | 1);
    return x ? 2 + 64 - lead - trail : 1;
}

/*
 * At most the XOR stream's bytes, without its serial window chain: a changed value costs at least 2 bits
 * and its meaningful ones (a field in the window has 2 + the window's width >= them; a new window
 * 13 + them), a repeat 1 bit. Each value independent of the others, so the loop overlaps.
 */
TSC2_AVX2_CLONES
static size_t xor_stream_lower_bound(const uint64_t *bits, size_t n, uint64_t prev)
{
    if (n == 0) return 0;
    uint64_t total = xor_field_least_bits(bits[0] ^ prev);
    for (size_t i = 1; i < n; i++) total += xor_field_least_bits(bits[i] ^ bits[i - 1]);
    return (size_t)((total + 7) / 8);
}

static size_t write_xor(uint8_t *out, const uint8_t *stream, size_t stream_bytes)
{
    uint8_t *p = out;
    *p++ = TSC2_XOR;
    p += tsc_put_uvarint(p, stream_bytes);
    memcpy(p, stream, stream_bytes);
    return (size_t)(p - out) + stream_bytes;
}

/* The XOR form of the values, its stream written here (when it was not written while sizing the forms). */
static size_t write_xor_of(uint8_t *out, const uint64_t *bits, size_t n, uint64_t prev_bits)
{
    uint8_t stream[(TSC2_GROUP * TSC_XOR_WORST_BITS + 7) / 8 + 8];
    return write_xor(out, stream, xor_stream(stream, sizeof stream, bits, n, prev_bits));
}

/* The MASKED candidate: repeats flagged in a bitmap, the other values as decimals. */
typedef struct {
    uint8_t mask[TSC2_GROUP / 8];
    size_t mask_bytes;
    uint64_t kept[TSC2_GROUP];
    size_t nkept;
    tsc_codec2_decimal reading;
    decimal_plan plan; /* plan.bytes SIZE_MAX when not a candidate */
} masked_plan;

/* With reading.usable, that reading is taken as it is (REUSE); else one is chosen from a sample, hint first. */
static void plan_masked(masked_plan *m, const uint64_t *bits, size_t n, uint64_t prev_bits, tsc_codec2_decimal hint,
                        tsc_codec2_decimal reading, unsigned patch)
{
    _Static_assert(TSC2_GROUP % 64 == 0, "the mask in whole words");
    m->plan.bytes = SIZE_MAX;
    m->mask_bytes = (n + 7) / 8;
    uint64_t words[TSC2_GROUP / 64];
    m->nkept = tsc_codec2_repeat_mask(bits, n, prev_bits, words, m->kept);
    for (size_t w = 0; w < TSC2_GROUP / 64; w++) tsc_store64_le(m->mask + 8 * w, words[w]);
    /* Worth a mask only when at least one value in eight repeats. */
    if (m->nkept == 0 || (n - m->nkept) * 8 < n) return;
    m->reading = reading.usable ? reading : choose_exponent(m->kept, m->nkept, hint);
    plan_decimal(&m->plan, m->kept, m->nkept, m->reading, patch);
}

static int same_reading(tsc_codec2_decimal a, tsc_codec2_decimal b)
{
    return a.usable == b.usable && a.exponent == b.exponent && a.as_float == b.as_float;
}

/* The smallest of CONST, DECIMAL (sampled reading, and the hint's), XOR and RAW; ties in that order. */
/* ------------------------------------------------------------------ SPLIT */

typedef struct {
    unsigned left_bits, dict_size;
    uint64_t dict[TSC2_SPLIT_DICT];
    size_t bytes; /* the whole value block, mode byte included; SIZE_MAX when not planned */
} split_plan;

/* The plan's bytes (exact but for the exceptions' left parts, counted at their widest). */
static size_t split_bytes(const split_plan *p, size_t n, size_t exceptions)
{
    size_t bytes = 3 + tsc_uvarint_len(exceptions);
    for (unsigned d = 0; d < p->dict_size; d++) bytes += tsc_uvarint_len(p->dict[d]);
    bytes += tsc_codec2_packed_bytes(n, tsc_codec2_width(p->dict_size - 1));
    bytes += tsc_codec2_packed_bytes(n, 64 - p->left_bits);
    return bytes + exceptions * (1 + tsc_uvarint_len(UINT64_C(1) << p->left_bits >> 1));
}

/*
 * The (at most TSC2_SPLIT_DICT) runs with the largest counts, in the order
 * count descending, earlier run first among equal counts, in one pass: a run
 * enters only when it beats the last kept one.
 * @return the dictionary size; *covered the samples it covers.
 */
static unsigned most_frequent(const uint64_t *run_value, const size_t *run_count, size_t runs, uint64_t *dict,
                              size_t *covered)
{
    size_t kept_count[TSC2_SPLIT_DICT];
    unsigned kept = 0;
    for (size_t k = 0; k < runs; k++) {
        size_t count = run_count[k];
        if (kept == TSC2_SPLIT_DICT && count <= kept_count[kept - 1]) continue;
        unsigned at = kept < TSC2_SPLIT_DICT ? kept++ : kept - 1;
        for (; at > 0 && kept_count[at - 1] < count; at--) { /* equal counts keep the earlier run first */
            kept_count[at] = kept_count[at - 1];
            dict[at] = dict[at - 1];
        }
        kept_count[at] = count;
        dict[at] = run_value[k];
    }
    *covered = 0;
    for (unsigned d = 0; d < kept; d++) *covered += kept_count[d];
    return kept;
}

/*
 * Runs of equal values in value[0, n) (sorted), each with the sum of its counts, into run_value and
 * run_count, which may be value and count themselves (a run is written after it is read). The open run
 * stays in registers and every step writes it out without a branch: whether neighbouring values share
 * their left part does not predict. @return the runs.
 */
static size_t to_runs(uint64_t *run_value, size_t *run_count, const uint64_t *value, const size_t *count, size_t n)
{
    if (n == 0) return 0;
    uint64_t open_value = value[0];
    size_t open_count = count[0], runs = 0;
    for (size_t i = 1; i < n; i++) {
        uint64_t v = value[i];
        size_t c = count[i], same = v == open_value;
        run_value[runs] = open_value; /* kept when the run ends here, overwritten while it goes on */
        run_count[runs] = open_count;
        runs += !same;
        open_count = same ? open_count + c : c;
        open_value = v;
    }
    run_value[runs] = open_value;
    run_count[runs] = open_count;
    return runs + 1;
}

/*
 * For each left width L, the dictionary of the (at most 8) most frequent
 * left parts and the bytes that costs; the cheapest L kept (the narrowest
 * among equal costs). Only for groups that neither decimals nor XOR compress
 * well (real doubles). The widths go from 16 down, each one's runs merged
 * from the previous width's (the values are sorted, so a narrower left part
 * merges neighbouring runs). The widths tried: widest, widest - 2, ... down to narrowest (16 and 4 in a
 * search; a reused SPLIT plans the last SPLIT group's width only).
 */
static void plan_split(split_plan *r, const uint64_t *bits, size_t n, unsigned widest, unsigned narrowest)
{
    uint16_t tops[TSC2_GROUP];
    tsc_codec2_sorted_tops(bits, n, tops);
    uint64_t run_value[TSC2_GROUP];
    size_t run_count[TSC2_GROUP];
    for (size_t i = 0; i < n; i++) run_value[i] = tops[i] >> (TSC2_SPLIT_MAX_LEFT - widest), run_count[i] = 1;
    size_t runs = to_runs(run_value, run_count, run_value, run_count, n);
    r->bytes = SIZE_MAX;
    for (unsigned left = widest; left >= narrowest; left -= 2) {
        /* The rights alone grow as left shrinks: once they (and the 5 bytes every plan has: mode, L, D, a
         * dictionary entry, the exception count) cost more than the best, no narrower width can win. */
        if (r->bytes != SIZE_MAX && 5 + tsc_codec2_packed_bytes(n, 64 - left) > r->bytes) break;
        if (left < widest) { /* merge the previous width's runs two bits narrower */
            for (size_t t = 0; t < runs; t++) run_value[t] >>= 2;
            runs = to_runs(run_value, run_count, run_value, run_count, runs);
        }
        split_plan p = {left, 0, {0}, 0};
        size_t covered;
        p.dict_size = most_frequent(run_value, run_count, runs, p.dict, &covered);
        p.bytes = split_bytes(&p, n, n - covered);
        if (p.bytes <= r->bytes) *r = p;
    }
}

/*
 * REUSE of SPLIT, without sorting the group: the last SPLIT group's dictionary as the candidates, counted
 * in one pass. When at most one value in 16 has another left part, those few are counted too, and then
 * every distinct left part of the group is known with its count: ordered as most_frequent orders runs
 * (count descending, the smaller left part first among equal counts), the first eight are exactly the
 * dictionary plan_split finds at this width, so the same bytes. @return 0 when more values fall outside
 * (then plan_split sorts).
 */
static int plan_split_from(split_plan *r, const uint64_t *bits, size_t n, unsigned left, const uint16_t *candidates,
                           unsigned candidate_count)
{
    enum { MOST = 2 * TSC2_SPLIT_DICT };
    uint64_t part[MOST];
    size_t count[MOST], covered = 0;
    uint64_t outside[TSC2_GROUP / 64];
    for (unsigned d = 0; d < TSC2_SPLIT_DICT; d++) part[d] = d < candidate_count ? candidates[d] : UINT64_MAX;
    tsc_codec2_left_part_counts(bits, n, 64 - left, part, count, outside);
    unsigned parts = TSC2_SPLIT_DICT;
    for (unsigned d = 0; d < TSC2_SPLIT_DICT; d++) covered += count[d];
    if ((n - covered) * 16 > n) return 0;
    for (size_t word = 0; word < TSC2_GROUP / 64; word++) /* the few outside (at most n / 16), bit by bit */
        for (uint64_t rest = outside[word]; rest; rest &= rest - 1) {
            uint64_t left_part = bits[64 * word + (size_t)__builtin_ctzll(rest)] >> (64 - left);
            unsigned d = TSC2_SPLIT_DICT;
            while (d < parts && part[d] != left_part) d++;
            if (d == parts) part[parts] = left_part, count[parts++] = 0;
            count[d]++;
        }
    unsigned order[MOST], kept = 0;
    for (unsigned d = 0; d < parts; d++) {
        if (count[d] == 0) continue;
        unsigned at = kept++;
        for (; at > 0 && (count[order[at - 1]] < count[d] ||
                          (count[order[at - 1]] == count[d] && part[order[at - 1]] > part[d])); at--)
            order[at] = order[at - 1];
        order[at] = d;
    }
    r->left_bits = left;
    r->dict_size = kept < TSC2_SPLIT_DICT ? kept : TSC2_SPLIT_DICT;
    size_t in_dict = 0;
    for (unsigned k = 0; k < r->dict_size; k++) r->dict[k] = part[order[k]], in_dict += count[order[k]];
    r->bytes = split_bytes(r, n, n - in_dict);
    return 1;
}

static size_t write_split(uint8_t *out, const split_plan *r, const uint64_t *bits, size_t n)
{
    uint8_t *p = out;
    unsigned right_bits = 64 - r->left_bits;
    *p++ = TSC2_SPLIT;
    *p++ = (uint8_t)r->left_bits;
    *p++ = (uint8_t)r->dict_size;
    for (unsigned d = 0; d < r->dict_size; d++) p += tsc_put_uvarint(p, r->dict[d]);
    uint64_t codes[TSC2_GROUP], rights[TSC2_GROUP];
    uint8_t exception_at[TSC2_GROUP + 8];
    size_t exceptions = tsc_codec2_split_codes(bits, n, right_bits, r->dict, r->dict_size, codes, rights, exception_at);
    unsigned code_width = tsc_codec2_width(r->dict_size - 1);
    tsc_codec2_pack(p, codes, n, code_width);
    p += tsc_codec2_packed_bytes(n, code_width);
    tsc_codec2_pack(p, rights, n, right_bits);
    p += tsc_codec2_packed_bytes(n, right_bits);
    p += tsc_put_uvarint(p, exceptions);
    for (size_t x = 0; x < exceptions; x++) {
        *p++ = exception_at[x];
        p += tsc_put_uvarint(p, bits[exception_at[x]] >> right_bits);
    }
    return (size_t)(p - out);
}

static void keep_split_dict(tsc_codec2_choice *c, const split_plan *r)
{
    _Static_assert(sizeof c->split_dict->left / sizeof c->split_dict->left[0] == TSC2_SPLIT_DICT &&
                       TSC2_SPLIT_MAX_LEFT <= 16, "a dictionary of 16-bit left parts");
    if (!c->split_dict) return;
    for (unsigned d = 0; d < r->dict_size; d++) c->split_dict->left[d] = (uint16_t)r->dict[d];
    c->split_dict->size = (uint8_t)r->dict_size;
}

/* ------------------------------------------------------------------ the choice */

enum {
    FORM_CONST = TSC2_FORM_CONST,
    FORM_MASKED = TSC2_FORM_MASKED,
    FORM_DECIMAL = TSC2_FORM_DECIMAL,
    FORM_XOR = TSC2_FORM_XOR,
    FORM_SPLIT = TSC2_FORM_SPLIT,
    FORM_RAW = TSC2_FORM_RAW,
    FORMS = TSC2_FORMS
};

/*
 * What a changed value's XOR field is taken to cost when deciding whether to
 * size the XOR form at all (a heuristic, not a floor: make codec2-probe
 * measured 10, 16 and 20 bits).
 */
#define XOR_CHANGE_BITS 16

/*
 * A decimal plan clean enough to write without trying the other forms: at most one value in 16 stored
 * raw, and few exceptions or at most 4 bytes a value. The raw share was none until 0.12.0: then a
 * group of 7-digit decimals with one 8-digit value among them (Basel-temp, Basel-wind) searched every
 * form again and chose the same plan; with the share, they append 35-40% faster and are 0.003-0.23%
 * bigger (Food-price 0.14%, no other dataset changes by 0.02%).
 */
static int clean_plan(const decimal_plan *d, size_t n)
{
    if (d->bytes == SIZE_MAX || d->raw * 16 > n) return 0;
    /* Many small corrections are float32 data printed to 16 digits: still a steady win. */
    return d->exceptions * 16 <= n || d->bytes <= 4 * n;
}

/*
 * A decimal plan beside an XOR challenger (REUSE): the XOR form when it is smaller (c->value_form set to
 * XOR, so the next group searches), else the plan, with XOR kept as the challenger only while it stays
 * within a sixteenth (the search lets it in within a quarter). Until 0.16.0 it stayed while within a
 * quarter: nyc29's MASKED groups sized an XOR stream that never won in every group, a third of their
 * append time (a serial, mispredicting loop); now, once XOR falls further behind, it is sized again at the
 * next search (bulk append 8.0 -> 5.5 ns; nyc29 +0.001%, ec2_network_in +0.30%, no other dataset changes).
 */
static size_t write_decimal_or_xor(uint8_t *out, decimal_plan *d, const uint64_t *bits, size_t n, uint64_t prev_bits,
                                   const uint64_t *kept, size_t nkept, const uint8_t *mask, size_t mask_bytes,
                                   tsc_codec2_choice *c)
{
    size_t plan_bytes = d->bytes + (mask ? mask_bytes : 0);
    c->challenger = TSC2_FORMS;
    size_t stream_bytes = xor_stream_size(bits, n, prev_bits);
    size_t xor_bytes = 1 + tsc_uvarint_len(stream_bytes) + stream_bytes;
    if (xor_bytes < plan_bytes) {
        c->value_form = FORM_XOR;
        return write_xor_of(out, bits, n, prev_bits);
    }
    if (xor_bytes / 17 < plan_bytes / 16) c->challenger = FORM_XOR; /* still close: size it again next time */
    return write_decimal(out, d, kept, nkept, mask, mask_bytes, c);
}

/*
 * REUSE: the previous group's form, written without the search when it still
 * fits this group (DECIMAL or MASKED with a clean plan, each taking the other's
 * place as repeats come and go; SPLIT when it beats RAW). When XOR came
 * within a quarter of that form (c->challenger), it is sized too and the
 * smaller written. c->value_form is the form written. @return the bytes
 * written, or 0 to search.
 */
static size_t reuse_form(uint8_t *out, const uint64_t *bits, size_t n, uint64_t prev_bits, tsc_codec2_choice *c,
                         tsc_codec2_decimal *used, unsigned patch)
{
    tsc_codec2_decimal hint = c->reading;
    int challenged = c->challenger == FORM_XOR;
    if (c->value_form == FORM_SPLIT) {
        /* Not checked for a decimal reading any more (0.12.0: that sampling was a sixth of a SPLIT group's
         * time, and never changed a byte of the datasets): a series that turns from real doubles to
         * decimals is found by the search every 8th group, so at most 7 groups stay SPLIT after it. */
        if (n < 16) return 0;
        split_plan split;
        int kept_width = c->split_left >= 4 && c->split_left <= TSC2_SPLIT_MAX_LEFT && c->split_left % 2 == 0;
        const tschunk_split_dict *last = c->split_dict;
        int planned = kept_width && last && last->size >= 1 && last->size <= TSC2_SPLIT_DICT &&
                      plan_split_from(&split, bits, n, c->split_left, last->left, last->size);
        if (!planned && kept_width)
            plan_split(&split, bits, n, c->split_left, c->split_left); /* the width the search found, kept */
        else if (!planned)
            plan_split(&split, bits, n, TSC2_SPLIT_MAX_LEFT, 4);
        if (split.bytes >= 1 + 8 * n) return 0;
        keep_split_dict(c, &split);
        return write_split(out, &split, bits, n);
    }
    if (!hint.usable) return 0;
    /*
     * DECIMAL or MASKED, whichever the repeats allow, and when they allow both (a reused DECIMAL group with a
     * repeat in eight or more) both, the smaller written: the reused form in the hint's reading with its
     * predecessor's packing (PACK_BOTH beside the other), the other form in a reading chosen from a sample
     * (hint first). Until 0.25.0 a group whose repeats crossed that line searched every form, and when the
     * two came within a quarter the next group searched again: ETTh1's hourly values cross it often, and 37%
     * of their groups searched (now 14%, about the every-8th searches: -4.2% of its append's instructions;
     * five value-only files take 0.1-0.5% more bits, the mean over the datasets none).
     */
    size_t repeats = tsc_codec2_repeats(bits, n, prev_bits);
    int masked_may_pay = repeats * 8 >= n;
    decimal_plan d;
    masked_plan m;
    d.bytes = m.plan.bytes = SIZE_MAX;
    int reused_decimal = c->value_form == FORM_DECIMAL;
    tsc_codec2_decimal decimal_reading = hint;
    if (reused_decimal || !masked_may_pay) {
        if (!reused_decimal) decimal_reading = choose_exponent(bits, n, hint);
        plan_decimal(&d, bits, n, decimal_reading, reused_decimal && !masked_may_pay ? patch : TSC2_PACK_BOTH);
    }
    if (masked_may_pay)
        plan_masked(&m, bits, n, prev_bits, hint, reused_decimal ? (tsc_codec2_decimal){0, 0, 0} : hint,
                    reused_decimal ? TSC2_PACK_BOTH : patch);
    size_t masked_bytes = m.plan.bytes == SIZE_MAX ? SIZE_MAX : m.plan.bytes + m.mask_bytes;
    *used = decimal_reading;
    if (masked_bytes < d.bytes) {
        *used = m.reading;
        if (!clean_plan(&m.plan, m.nkept)) return 0;
        c->value_form = FORM_MASKED;
        if (challenged)
            return write_decimal_or_xor(out, &m.plan, bits, n, prev_bits, m.kept, m.nkept, m.mask, m.mask_bytes, c);
        return write_decimal(out, &m.plan, m.kept, m.nkept, m.mask, m.mask_bytes, c);
    }
    if (!clean_plan(&d, n)) return 0;
    c->value_form = FORM_DECIMAL;
    if (challenged) return write_decimal_or_xor(out, &d, bits, n, prev_bits, bits, n, NULL, 0, c);
    return write_decimal(out, &d, bits, n, NULL, 0, c);
}

/* XOR's stream for a search: written (and kept for writing) or only sized. */
typedef struct {
    size_t bytes;
    int written;
    uint8_t stream[(TSC2_GROUP * TSC_XOR_WORST_BITS + 7) / 8 + 8];
} xor_sizing;

/*
 * XOR's size in a search, or SIZE_MAX where it cannot win. It is sized only when it may: always under
 * max_bytes (`exhaustive`: the bound needs it), else when the decimal forms cost more than a rough XOR cost
 * (1 bit a repeat, XOR_CHANGE_BITS a change), and not when even its lower bound is a quarter above them:
 * then it can neither win nor be the close runner-up, so every choice is the same as with its exact size.
 * When XOR won the group before (`won_before`) it likely wins again: its stream is written, not only sized.
 */
static size_t size_xor(xor_sizing *x, const uint64_t *bits, size_t n, uint64_t prev_bits, int exhaustive,
                       size_t best_decimal, size_t repeats, int won_before)
{
    int may_win = exhaustive || best_decimal == SIZE_MAX;
    if (!may_win) may_win = best_decimal * 8 > repeats + XOR_CHANGE_BITS * (n - repeats);
    if (may_win && !exhaustive && best_decimal != SIZE_MAX && !won_before) {
        size_t lower = xor_stream_lower_bound(bits, n, prev_bits);
        may_win = (1 + tsc_uvarint_len(lower) + lower) / 5 < best_decimal / 4;
    }
    if (!may_win) return SIZE_MAX;
    x->written = won_before;
    x->bytes = won_before ? xor_stream(x->stream, sizeof x->stream, bits, n, prev_bits)
                          : xor_stream_size(bits, n, prev_bits);
    return 1 + tsc_uvarint_len(x->bytes) + x->bytes;
}

/*
 * The smallest of the sized forms (ties to the earlier one in FORM order), and what the next group reuses:
 * DECIMAL and MASKED only when they won by a quarter over every other form sized (SPLIT wins narrowly, but
 * steadily); a close XOR runner-up is sized again beside the reused form (the challenger), instead of a
 * search.
 */
static int choose_form(const size_t size[FORMS], tsc_codec2_choice *c)
{
    int form = 0;
    for (int f = 1; f < FORMS; f++) form = size[f] < size[form] ? f : form;
    size_t runner_up = SIZE_MAX;
    for (int f = 0; f < FORMS; f++) runner_up = f != form && size[f] < runner_up ? size[f] : runner_up;
    int reusable = form == FORM_DECIMAL || form == FORM_MASKED;
    int clear = !reusable || runner_up == SIZE_MAX || runner_up / 5 >= size[form] / 4;
    int xor_close = !clear && size[FORM_XOR] == runner_up;
    c->value_form = clear || xor_close ? (unsigned)form : TSC2_FORMS;
    c->challenger = xor_close ? FORM_XOR : TSC2_FORMS;
    return form;
}

/*
 * A search: every form that may win sized, the smallest written. `same`: how many values from the first are
 * equal to it; `hint`: the previous group's decimal reading; `exhaustive`: under max_bytes, where the bound
 * needs XOR sized; `prev_form`: the previous group's form.
 */
static size_t search_forms(uint8_t *out, const uint64_t *bits, size_t n, uint64_t prev_bits, size_t same,
                           tsc_codec2_decimal hint, int exhaustive, unsigned prev_form, tsc_codec2_choice *c,
                           tsc_codec2_decimal *used)
{
    c->challenger = TSC2_FORMS;
    decimal_plan plans[2];
    size_t size[FORMS];
    size[FORM_CONST] = same == n ? 9 : SIZE_MAX;
    size[FORM_RAW] = 1 + 8 * n;
    tsc_codec2_decimal sampled = choose_exponent(bits, n, hint);
    plan_decimal(&plans[0], bits, n, sampled, TSC2_PACK_BOTH);
    plans[1].bytes = SIZE_MAX;
    if (hint.usable && !same_reading(hint, sampled)) plan_decimal(&plans[1], bits, n, hint, TSC2_PACK_BOTH);
    int pick = plans[1].bytes < plans[0].bytes;
    decimal_plan *d = &plans[pick];
    size[FORM_DECIMAL] = d->bytes;
    /*
     * One value that the previous group did not end with (a chunk's first group of a constant, a level
     * change): from 64 samples on MASKED (a mask of 8 bytes or more, and the kept value) and XOR (a field,
     * then a bit a repeat: 12 bytes or more) cost more than CONST's 9, which also keeps SPLIT away, so
     * neither is sized: the same choice, sooner (a constant's 120-sample chunks spent a sixth of their
     * time planning the mask).
     */
    int one_value = same == n && n >= 64;
    masked_plan masked;
    size_t repeats = one_value ? n - 1 : tsc_codec2_repeats(bits, n, prev_bits);
    masked.plan.bytes = SIZE_MAX; /* a mask is worth it only when at least one value in eight repeats */
    if (repeats * 8 >= n && !one_value)
        plan_masked(&masked, bits, n, prev_bits, hint, (tsc_codec2_decimal){0, 0, 0}, TSC2_PACK_BOTH);
    size[FORM_MASKED] = masked.plan.bytes == SIZE_MAX ? SIZE_MAX : masked.plan.bytes + masked.mask_bytes;
    size_t best_decimal = size[FORM_DECIMAL] < size[FORM_MASKED] ? size[FORM_DECIMAL] : size[FORM_MASKED];
    xor_sizing xor_form; /* its stream (1 KB) is not cleared: only what size_xor writes is read */
    xor_form.bytes = 0, xor_form.written = 0;
    size[FORM_XOR] = one_value ? SIZE_MAX
                               : size_xor(&xor_form, bits, n, prev_bits, exhaustive, best_decimal, repeats,
                                          prev_form == FORM_XOR);
    /* SPLIT only when nothing reaches 7 bytes a value. */
    split_plan split = {0, 0, {0}, SIZE_MAX};
    size[FORM_SPLIT] = SIZE_MAX;
    size_t so_far = best_decimal < size[FORM_XOR] ? best_decimal : size[FORM_XOR];
    if (n >= 16 && size[FORM_CONST] == SIZE_MAX && so_far > 7 * n) {
        plan_split(&split, bits, n, TSC2_SPLIT_MAX_LEFT, 4);
        size[FORM_SPLIT] = split.bytes;
    }
    switch (choose_form(size, c)) {
    case FORM_CONST:
        out[0] = TSC2_CONST;
        tsc_store64_le(out + 1, bits[0]);
        return 9;
    case FORM_MASKED:
        *used = masked.reading;
        return write_decimal(out, &masked.plan, masked.kept, masked.nkept, masked.mask, masked.mask_bytes, c);
    case FORM_DECIMAL:
        *used = pick ? hint : sampled;
        return write_decimal(out, d, bits, n, NULL, 0, c);
    case FORM_XOR:
        if (xor_form.written) return write_xor(out, xor_form.stream, xor_form.bytes);
        return write_xor_of(out, bits, n, prev_bits);
    case FORM_SPLIT:
        c->split_left = split.left_bits;
        keep_split_dict(c, &split);
        return write_split(out, &split, bits, n);
    default:
        out[0] = TSC2_RAW;
        for (size_t i = 0; i < n; i++) tsc_store64_le(out + 1 + 8 * i, bits[i]);
        return size[FORM_RAW];
    }
}

/* The smallest of the forms (after REUSE, when it applies); ties go to the earlier one in FORM order. */
static size_t write_values(uint8_t *out, const uint64_t *bits, size_t n, uint64_t prev_bits, int effort,
                           tsc_codec2_choice *c, tsc_codec2_decimal *used)
{
    tsc_codec2_decimal hint = c->reading;
    unsigned prev_form = c->value_form; /* c->value_form becomes this group's */
    unsigned previous_packing = c->packing; /* and c->packing */
    c->packing = 0;
    size_t same = 1;
    while (same < n && bits[same] == bits[0]) same++;
    *used = (tsc_codec2_decimal){0, 0, 0};
    if (same == n && bits[0] == prev_bits) { /* one byte: nothing is smaller */
        c->value_form = FORM_CONST;
        c->challenger = TSC2_FORMS;
        out[0] = TSC2_CONST | TSC2_CONST_REPEAT;
        return 1;
    }
    if (effort == TSC2_EFFORT_REUSE && same < n) {
        size_t written = reuse_form(out, bits, n, prev_bits, c, used, previous_packing);
        if (written) return written;
        *used = (tsc_codec2_decimal){0, 0, 0};
    }
    return search_forms(out, bits, n, prev_bits, same, hint, effort == TSC2_EFFORT_BOUND, prev_form, c, used);
}

size_t tsc_codec2_encode_group(uint8_t *restrict out, const int64_t *restrict ts, const uint64_t *restrict bits,
                               size_t n, int64_t prev_ts, uint64_t prev_bits, int effort, tsc_codec2_choice *choice)
{
    tsc_codec2_choice none = {{0, 0, 0}, 0, TSC2_TS_SEARCH, 0, 0, TSC2_FORMS, 0, 0, 0, NULL, 0, 0};
    tsc_codec2_choice *c = choice ? choice : &none;
    size_t ts_bytes = c->regular && n >= 2
                          ? write_regular_timestamps(out, ts, prev_ts, c->regular_step, c->ts_scaled, &c->ts_form,
                                                     &c->ts_width)
                          : write_timestamps(out, ts, n, prev_ts, c->ts_form, &c->ts_scaled, &c->ts_form, &c->ts_width);
    tsc_codec2_decimal used;
    size_t value_bytes = write_values(out + ts_bytes, bits, n, prev_bits, effort, c, &used);
    if (used.usable) c->reading = used;
    c->ts_bytes = ts_bytes;
    return ts_bytes + value_bytes;
}
