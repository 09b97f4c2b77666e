/*
 * Decoding a list of chunks into one pair of arrays (tschunk_decode_chunks,
 * tschunk_prom_decode_chunks): the walk shared by both formats, which differ
 * in how they count a chunk's samples and decode several chunks at a time.
 */
#include "chunk_list.h"

size_t tsc_decode_chunk_list(const void *const *chunks, const size_t *sizes, size_t n_chunks, int64_t *ts,
                             double *values, size_t capacity, int loops, tsc_count_fn count, size_t per_call,
                             tsc_decode_some_fn some)
{
    if (n_chunks && (!chunks || !sizes)) return TSC_ERROR(BAD_PARAMETER);
    size_t total = 0;
    for (size_t i = 0; i < n_chunks; i++) {
        size_t c = count(chunks[i], sizes[i]);
        if (tsc_is_error(c)) return c;
        total += c;
    }
    if (total > capacity) return TSC_ERROR(DST_TOO_SMALL);
    if (total && (!ts || !values)) return TSC_ERROR(BAD_PARAMETER);
    size_t done = 0;
    for (size_t i = 0; i < n_chunks; i = n_chunks - i < per_call ? n_chunks : i + per_call) {
        size_t r = some(chunks, sizes, i, n_chunks, ts + done, values + done, loops);
        if (tsc_is_error(r)) return r;
        done += r;
    }
    return done;
}

/*
 * Lanes a kernel call needs busy to beat the pair loops: 16 lanes from 9 up, 8 lanes at 7 and 8 (a step of 8
 * lanes costs about 7 pair samples). Idle lanes read zeros into a scratch.
 */
#define LANES_MIN_LIVE 7

/*
 * While at most LANES_MAY_IDLE slots are idle, they wait for the live lanes to end instead of taking the
 * next chunk when it has as many samples as the live chunk that ends last (so would outlast it): a kernel
 * call costs about three steps (100 ns), and so lanes whose chunks end together (mostly 120-sample chunks
 * and a few short ones) keep ending together, one call for 16 chunks. Chunks of every length do not: they
 * take the idle lanes at once.
 */
#define LANES_MAY_IDLE 4

/* The ended chunks leave their slots (the last live slot moves in); the idle slots take the next chunks. */
static size_t retire_and_refill(tsc_lane_list *L, const tsc_lane_ops *ops)
{
    size_t horizon = 0, horizon_count = 0, r;
    for (size_t l = 0; l < L->live; l++)
        if (L->left[l] > horizon) {
            horizon = L->left[l];
            horizon_count = L->count[l];
        }
    for (size_t l = L->live; l-- > 0;) { /* from the last: a slot moved into l is live, already seen */
        if (L->left[l]) continue;
        if ((r = ops->finish(L, l))) return r;
        if (l < --L->live) {
            ops->move(L, l, L->live);
            L->left[l] = L->left[L->live];
            L->count[l] = L->count[L->live];
        }
    }
    while (L->live < TSC_LIST_LANES && L->next < L->n_chunks) {
        size_t j = L->next;
        if (horizon && TSC_LIST_LANES - L->live <= LANES_MAY_IDLE &&
            ops->count(L->chunks[j], L->sizes[j]) == horizon_count)
            break;
        size_t count = 0;
        r = ops->start(L, L->live, j, L->out, &count);
        if (tsc_is_error(r)) return r;
        L->next++;
        L->out += count;
        if (r == 1) L->count[L->live++] = count;
    }
    return 0;
}

size_t tsc_lane_list_decode(tsc_lane_list *L, size_t i, const tsc_lane_ops *ops)
{
    L->next = i;
    L->out = 0;
    L->live = 0;
    size_t r = retire_and_refill(L, ops); /* nothing has ended: this fills the slots */
    while (!r && L->live >= LANES_MIN_LIVE) {
        size_t width = L->live > 8 ? 16 : 8, n = L->live < width ? TSC_LANE_IDLE_STEPS : SIZE_MAX;
        for (size_t l = 0; l < L->live; l++) n = L->left[l] < n ? L->left[l] : n;
        ops->idle(L, width);
        for (size_t k = 0;;) {
            int escaped;
            k += ops->kernel(L, width, n - k, &escaped);
            if (k == n || !escaped) break;
            ops->scalar_step(L, width); /* a 64-bit dod in some lane */
            k++;
        }
        for (size_t l = 0; l < L->live; l++) L->left[l] -= n;
        r = retire_and_refill(L, ops);
    }
    if (!r) r = ops->drain(L);
    return r ? r : L->out;
}
