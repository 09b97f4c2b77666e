/* Prometheus XOR decode of arbitrary bytes: iterate, seek, batch read. */
#include <string.h>

#include "harness.h"
#include "tschunk.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tschunk_prom_iter it;
    if (tschunk_is_error(tschunk_prom_iter_init(&it, data, size))) return 0;
    size_t count = tschunk_prom_count(data, size), n = 0, r;
    int64_t ts;
    double v;
    while ((r = tschunk_prom_iter_next(&it, &ts, &v)) == 1)
        if (++n > count) __builtin_trap();
    if (!tschunk_is_error(r) && n != count) __builtin_trap();
    if (tschunk_prom_iter_init(&it, data, size) == 0) {
        r = tschunk_prom_iter_seek(&it, (int64_t)((uint64_t)size * 7919u));
        int64_t tsa[40];
        double va[40];
        while (!tschunk_is_error(r) && (r = tschunk_prom_iter_read(&it, tsa, va, 40)) > 0) {}
    }
    return 0;
}
