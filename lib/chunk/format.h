/*
 * Chunk format v1 constants shared by the encoder and the decoder. The byte
 * layout is specified once, in README.md ("Chunk format v1"); this header
 * only names its numbers.
 */
#ifndef TSCHUNK_CHUNK_FORMAT_H
#define TSCHUNK_CHUNK_FORMAT_H

#include "../common/common.h"

/* Byte 0: magic nibble 0xC over the format version; byte 1: flags nibble over the codec id. */
#define TSC_MAGIC_NIBBLE 0xCu
#define TSC_FORMAT_VERSION 1u
#define TSC_EMPTY_CHUNK_BYTES 3u /* c1 01 00: a chunk of no sample, the smallest there is */
#define TSC_FLAGS_KNOWN (TSCHUNK_FLAG_TS_CONST | TSCHUNK_FLAG_VAL_CONST) /* codec 1's; codec 2 adds TSC2_FLAGS_KNOWN */

/*
 * Delta-of-delta buckets (measured: README "Format choices").
 *   `0`               dod == 0
 *   `10`    + 5 bits  [-16, 15]
 *   `110`   + 8 bits  [-128, 127]
 *   `1110`  + 11 bits [-1024, 1023]
 *   `11110` + 20 bits [-524288, 524287]   (a missed scrape of up to 8 min in ms)
 *   `11111` + 64 bits anything (two's complement of the wrapping difference)
 * Payloads are two's complement; the smallest bucket that holds a dod is used.
 */
#define TSC_DOD_BUCKETS 6
#define TSC_DOD_ESCAPE 5
#define TSC_DOD_MAX_BITS (5u + 64u)

typedef struct {
    uint8_t prefix;      /* prefix code, prefix_len bits */
    uint8_t prefix_len;
    uint8_t payload_len;
} tsc_dod_bucket;

static const tsc_dod_bucket tsc_dod_table[TSC_DOD_BUCKETS] = {
    {0x0, 1, 0}, {0x2, 2, 5}, {0x6, 3, 8}, {0xe, 4, 11}, {0x1e, 5, 20}, {0x1f, 5, 64},
};

/* The XOR value field and its window rule: lib/codec/xor.h. */

/* Decoded header, as tschunk_chunk_info plus stream positions. */
typedef struct {
    tschunk_chunk_info info;
    size_t value_offset;
    size_t ts_offset;
} tsc_chunk_header;

/*
 * Parse and check a chunk's header. With `walk` TSC_PARSE_HEADER, codec 2's
 * groups are left to the iterator, which checks each one as it reaches it (and
 * that the last one ends the chunk): stream sizes are not filled in, nor
 * first_ts unless TS_CONST carries it. TSC_PARSE_ALL walks every group.
 */
enum { TSC_PARSE_HEADER = 0, TSC_PARSE_ALL = 1 };
size_t tsc_chunk_parse(const uint8_t *src, size_t size, tsc_chunk_header *h, int walk);
/* A chunk's sample count, its header checked up to it (magic, version, codec, flags, count); the rest is
 * checked when it is parsed or decoded. For a list's capacity check (tschunk_decode_chunks), which would
 * otherwise parse each header twice. @return the count or an error. */
size_t tsc_chunk_count(const uint8_t *src, size_t size);

/* tschunk_decode with codec 1's loops chosen (TSC_LOOPS_*, lib/common/common.h); the tests compare them. */
size_t tsc_chunk_decode_with(const void *chunk, size_t size, int64_t *ts, double *values, size_t capacity, int loops);

/* Tests: a codec-1 iterator stepped one sample at a time from here on (no runs into its buffer), the
 * reference its runs are compared with. Other codecs: nothing. */
void tsc_chunk_iter_step_only(tschunk_iter *it);

/* tschunk_decode_chunks with codec 1's loops chosen; TSC_LOOPS_CHECKED decodes chunk by chunk. */
size_t tsc_chunk_decode_chunks_with(const void *const *chunks, const size_t *sizes, size_t n_chunks, int64_t *ts,
                                    double *values, size_t capacity, int loops);

#endif
