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
