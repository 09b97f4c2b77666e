/* The allocator every object falls back to when the caller's hooks are incomplete. */
#include <stdlib.h>

#include "common.h"

static void *default_alloc(void *opaque, size_t size)
{
    (void)opaque;
    return malloc(size);
}

static void default_free(void *opaque, void *ptr)
{
    (void)opaque;
    free(ptr);
}

tschunk_allocator tsc_allocator_or_default(const tschunk_allocator *a)
{
    if (a && a->alloc && a->free) return *a;
    tschunk_allocator fallback = {default_alloc, default_free, NULL};
    return fallback;
}
