/* XXH3-64 for the segment checksums; xxHash is compiled inline here (Debian's libxxhash-dev). */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "format.h"

uint64_t tsc_xxh3(const void *data, size_t size) { return (uint64_t)XXH3_64bits(data, size); }

uint64_t tsc_xxh3_spans(const tsc_span *spans, size_t n)
{
    XXH3_state_t state; /* on the stack: no allocation */
    XXH3_64bits_reset(&state);
    for (size_t i = 0; i < n; i++)
        if (spans[i].size) XXH3_64bits_update(&state, spans[i].data, spans[i].size);
    return (uint64_t)XXH3_64bits_digest(&state);
}

uint64_t tsc_seg_records_hash(const uint64_t *record_hashes, size_t n)
{
    uint8_t bytes[TSC_SEG_BLOCK * 8];
    for (size_t k = 0; k < n && k < TSC_SEG_BLOCK; k++) tsc_store64_le(bytes + 8 * k, record_hashes[k]);
    return tsc_xxh3(bytes, 8 * (n < TSC_SEG_BLOCK ? n : TSC_SEG_BLOCK));
}
