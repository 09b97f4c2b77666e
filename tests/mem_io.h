/*
 * A segment written into memory through tschunk_segment_io, for the tests and the fuzzers: a buffer grown as the
 * writer asks. For failure tests, the write_at call numbered fail_write (from 0) fails, and so does every read_at
 * after fail_read successful ones (SIZE_MAX: none).
 */
#ifndef TSCHUNK_TESTS_MEM_IO_H
#define TSCHUNK_TESTS_MEM_IO_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tschunk.h"

typedef struct {
    unsigned char *buf;
    size_t cap, size, writes, reads, fail_write, fail_read;
} mem_segment;

static inline int mem_write_at(void *ctx, const void *data, size_t n, uint64_t at)
{
    mem_segment *m = ctx;
    if (m->writes++ == m->fail_write) return -1;
    if (at + n > m->cap) {
        size_t cap = 2 * (size_t)(at + n);
        unsigned char *grown = realloc(m->buf, cap);
        if (!grown) return -1;
        m->buf = grown;
        m->cap = cap;
    }
    memcpy(m->buf + at, data, n);
    if (at + n > m->size) m->size = (size_t)(at + n);
    return 0;
}

static inline int mem_read_at(void *ctx, void *data, size_t n, uint64_t at)
{
    mem_segment *m = ctx;
    if (m->reads++ >= m->fail_read || at + n > m->size) return -1;
    memcpy(data, m->buf + at, n);
    return 0;
}

/* An empty buffer that fails nothing. */
static inline mem_segment mem_segment_empty(void) { return (mem_segment){NULL, 0, 0, 0, 0, SIZE_MAX, SIZE_MAX}; }

static inline tschunk_segment_io mem_segment_io(mem_segment *m)
{
    return (tschunk_segment_io){mem_write_at, mem_read_at, m};
}

#endif
