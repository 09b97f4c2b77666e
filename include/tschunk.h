/*
 * tschunk: compress (int64 timestamp, float64 value) samples into chunks.
 *
 * The one public header. Every function documents what it does, what it
 * returns and its error cases.
 *
 * Error convention (as zstd): functions that can fail return a size_t. A
 * result for which tschunk_is_error() is true is an error; its code is
 * tschunk_get_error_code(result) and its name tschunk_error_name(result).
 * Otherwise the result is the documented count or size (0 where the function
 * only reports success). The library never prints, never aborts on input and
 * keeps no global mutable state.
 *
 * NULL pointers: every entry point returns BAD_PARAMETER for a NULL it cannot
 * use (or, returning nothing, does nothing), but the per-value calls, which
 * check nothing on their hot path: the appends, the iterators' next and the
 * sketch adds take a valid object, as a C library's hot path does.
 *
 * Thread safety: an encoder or an iterator belongs to one thread at a time.
 * Distinct objects may be used from distinct threads freely. Chunk bytes are
 * only read by iterators, so any number of iterators may read one chunk
 * concurrently.
 *
 * Endianness: every multi-byte field of the format is little-endian on every
 * host; the bit streams are written most-significant-bit first (README,
 * "Format"). Chunks written on any host read on any other.
 */
#ifndef TSCHUNK_H
#define TSCHUNK_H

#include <stddef.h>
#include <stdint.h>
#include <string.h> /* memcpy, for the inline sketch stage (and, static builds, the inline append and iterator steps) */

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#  define TSCHUNK_API
#elif defined(__GNUC__) && (__GNUC__ >= 4)
#  define TSCHUNK_API __attribute__((visibility("default")))
#else
#  define TSCHUNK_API
#endif

/* Anonymous unions and structs are C11 (and a GNU extension in C99 and C++): marked so that -Wpedantic
 * builds of those languages take the header as it is. */
#if defined(__GNUC__)
#  define TSCHUNK_ANONYMOUS __extension__
#else
#  define TSCHUNK_ANONYMOUS
#endif

#define TSCHUNK_VERSION_MAJOR 0
#define TSCHUNK_VERSION_MINOR 57
#define TSCHUNK_VERSION_PATCH 6
#define TSCHUNK_VERSION_NUMBER \
    (TSCHUNK_VERSION_MAJOR * 10000 + TSCHUNK_VERSION_MINOR * 100 + TSCHUNK_VERSION_PATCH)
/* The string is built from the three numbers (as zstd does) so that it cannot drift from them; the
 * Makefile reads its VERSION from the same three lines. */
#define TSCHUNK_QUOTE(str) #str
#define TSCHUNK_EXPAND_AND_QUOTE(str) TSCHUNK_QUOTE(str)
#define TSCHUNK_VERSION_STRING \
    TSCHUNK_EXPAND_AND_QUOTE(TSCHUNK_VERSION_MAJOR.TSCHUNK_VERSION_MINOR.TSCHUNK_VERSION_PATCH)

/** @return TSCHUNK_VERSION_NUMBER of the library actually linked. */
TSCHUNK_API unsigned tschunk_version_number(void);
/** @return TSCHUNK_VERSION_STRING of the library actually linked. */
TSCHUNK_API const char *tschunk_version_string(void);

/* ------------------------------------------------------------------------
 * Errors. The numeric values are pinned: they never change meaning.
 * ---------------------------------------------------------------------- */
typedef enum {
    TSCHUNK_OK = 0,
    TSCHUNK_ERROR_GENERIC = 1,           /* a file operation failed (segment writer, delete): see errno */
    TSCHUNK_ERROR_DST_TOO_SMALL = 2,     /* caller's buffer cannot hold the result */
    TSCHUNK_ERROR_CHUNK_FULL = 3,        /* configured max_samples or max_bytes reached */
    TSCHUNK_ERROR_OUT_OF_ORDER = 4,      /* timestamp earlier than the previous one */
    TSCHUNK_ERROR_TRUNCATED = 5,         /* input ends before the data it declares */
    TSCHUNK_ERROR_BAD_MAGIC = 6,         /* not a tschunk chunk */
    TSCHUNK_ERROR_BAD_VERSION = 7,       /* format version newer than this library */
    TSCHUNK_ERROR_BAD_CODEC = 8,         /* codec id unknown to this library */
    TSCHUNK_ERROR_RESERVED_BITS = 9,     /* a reserved bit or padding bit is set */
    TSCHUNK_ERROR_CORRUPT = 10,          /* fields contradict each other */
    TSCHUNK_ERROR_BAD_PARAMETER = 11,    /* NULL pointer, option out of range */
    TSCHUNK_ERROR_STAGE = 12,            /* call not valid in the object's current stage */
    TSCHUNK_ERROR_TOO_MANY_SAMPLES = 13, /* more samples than TSCHUNK_MAX_SAMPLES */
    TSCHUNK_ERROR_NOT_MERGEABLE = 14,    /* sketches with different index mappings; segments whose units, summary
                                            mappings or series names differ */
    TSCHUNK_ERROR_UNTRACKABLE = 15,      /* NaN, infinite or out-of-range value or weight */
    TSCHUNK_ERROR_ALLOCATION = 16,       /* the allocator returned NULL */
    TSCHUNK_ERROR_MAX_CODE = 17
} tschunk_error_code;

/** @return non-zero when `result` is an error code rather than a count or size. */
TSCHUNK_API unsigned tschunk_is_error(size_t result);
/** @return the error code carried by `result`, TSCHUNK_OK when it is not an error. */
TSCHUNK_API tschunk_error_code tschunk_get_error_code(size_t result);
/** @return a readable, static name for the error carried by `result` ("no error" otherwise). */
TSCHUNK_API const char *tschunk_error_name(size_t result);
/** @return a readable, static name for `code` ("unknown error" for unknown values). */
TSCHUNK_API const char *tschunk_error_string(tschunk_error_code code);

/* ------------------------------------------------------------------------
 * Limits and codecs.
 * ---------------------------------------------------------------------- */
/** Most samples one chunk holds (the count is at most 3 varint bytes). */
#define TSCHUNK_MAX_SAMPLES 65535u

/** Codec ids, stored in every chunk header. */
#define TSCHUNK_CODEC_GORILLA 1u /* delta-of-delta and XOR bit streams, sample by sample */
#define TSCHUNK_CODEC_TSC2 2u    /* groups of TSCHUNK_GROUP_SAMPLES: decimals, frames of reference, XOR */

/** Samples per codec-2 group: the encoder buffers up to this many, the iterator decodes this many at once. */
#define TSCHUNK_GROUP_SAMPLES 128u

/** Largest chunk header, in bytes. */
#define TSCHUNK_HEADER_MAX 40u

/** Working room the encoder needs beyond the chunk it builds (the header it
 *  reserves in front plus 8 bytes of store slack behind each bit stream). */
#define TSCHUNK_ENCODER_OVERHEAD (TSCHUNK_HEADER_MAX + 16u)

/**
 * Buffer size that always holds a chunk of n samples, working room included.
 * Worst case per sample after the first: 69 timestamp bits + 77 value bits.
 * Exact for n <= TSCHUNK_MAX_SAMPLES; usable in constant expressions.
 */
#define TSCHUNK_BOUND(n) \
    ((size_t)TSCHUNK_ENCODER_OVERHEAD + (((size_t)(n) * 146u + 7u) / 8u) + 2u)

/** Function twin of TSCHUNK_BOUND. @return 0 when n > TSCHUNK_MAX_SAMPLES. */
TSCHUNK_API size_t tschunk_bound(size_t n);

/* ------------------------------------------------------------------------
 * Appending encoder.
 * ---------------------------------------------------------------------- */
typedef struct {
    uint32_t codec;       /* 0 (the default: TSCHUNK_CODEC_TSC2 since 0.2), TSCHUNK_CODEC_TSC2 or TSCHUNK_CODEC_GORILLA */
    uint32_t max_samples; /* 0 means TSCHUNK_MAX_SAMPLES */
    uint32_t max_bytes;   /* largest finished chunk, 0 means only the capacity limits it; at least the empty
                             chunk (3 bytes; Prometheus' 2), else BAD_PARAMETER (0.49.5) */
    uint32_t reserved;    /* must be 0 */
} tschunk_encoder_options;

/* One bit stream being written: a 64-bit accumulator whose low (bit_count % 8)
 * bits are the partial byte at `base + (bit_count >> 3)`, also in memory. */
typedef struct {
    uint8_t *base;
    uint64_t bit_count;
    uint64_t partial;
    uint64_t bit_limit;
} tschunk_bit_writer;

/* What bounds the encoded size of codec 2's open group (private). */
typedef struct {
    uint64_t min_delta, max_delta;     /* timestamp deltas */
    uint64_t xor_bits;                 /* XOR-field bits of the values */
    int64_t k_min, k_max, k_first, k_last, step_min, step_max; /* values read as decimals by the hint */
    uint32_t decimals, exceptions;     /* values with a k (EXACT or NEAR), values without an EXACT reading */
    uint32_t exception_bytes;          /* their entries */
    uint8_t wlead, wtrail;             /* XOR window */
} tschunk_group_bound;

/* The last SPLIT group's dictionary, the candidates of the next group that reuses the form (private). */
typedef struct {
    uint16_t left[8];
    uint8_t size;
} tschunk_split_dict;

/* Codec 2's part of the encoder state (private). */
typedef struct {
    /* Codec 2: finished groups follow the header room; the open group's samples are kept raw behind them. */
    size_t group_end;            /* bytes of finished groups */
    uint32_t pending;            /* samples in the open group */
    uint32_t fast_end;           /* the fast path takes a sample while pending < fast_end (every limit holds) */
    uint32_t synced;             /* the fast path moves only pending and prev_ts: count, safe_left and prev_bits
                                  * are those of the open group's first `synced` samples (lib/codec2/format.h) */
    uint8_t hint_usable;         /* decimal reading the max_bytes bound counts the open group's values in */
    uint8_t hint_exponent;
    uint8_t hint_float;
    uint8_t irregular;           /* some delta differs from the first: no TS_CONST */
    uint8_t varied;              /* some value differs from the first: no VAL_CONST */
    uint8_t last_form;           /* the last group's value form (lib/codec2/format.h) */
    uint8_t last_ts_form;        /* and its timestamp form */
    uint8_t reuse_left;          /* groups that may reuse those forms before all are tried again */
    uint8_t last_ts_width;       /* the last group's timestamp field width, the next one's first try */
    uint8_t last_split_left;     /* the last SPLIT group's left width, the one a reused SPLIT plans */
    uint8_t last_challenger;     /* the form that came close to last_form (XOR), tried beside it */
    uint8_t ts_scaled;           /* the chunk's timestamp blocks carry a scale (decided at its first group) */
    int64_t flushed_ts;          /* last sample of the last finished group */
    uint64_t flushed_bits;
    TSCHUNK_ANONYMOUS union {    /* REUSE, which needs the dictionary, is off under max_bytes */
        tschunk_group_bound bound;      /* kept only when max_bytes is set */
        TSCHUNK_ANONYMOUS struct {      /* kept only when it is not */
            tschunk_split_dict last_split;
            uint16_t last_packing;      /* the last decimal group's packing and width: when to try patches */
            uint16_t group_bytes[8];    /* the chunk's first finished groups' sizes: finish finds where they end
                                         * without walking their value blocks */
            uint16_t group_ts_bytes[8]; /* and their timestamp blocks' (the constant flags drop one or the other
                                         * without parsing them) */
        };
    };
} tschunk_codec2_state;

/**
 * Encoder state. Caller-allocated (the stack is fine); its fields are private
 * and may change in any release: use it only through the functions below.
 * (tschunk_append_inline, static linking only, reads codec, prev_ts, dst,
 * c2.pending, c2.fast_end and c2.group_end and writes prev_ts and
 * c2.pending: a change to those is a new TSCHUNK_ENCODER_LAYOUT.)
 */
typedef struct {
    tschunk_bit_writer ts_out;   /* delta-of-delta stream, first after the header */
    tschunk_bit_writer val_out;  /* XOR stream, after it */
    int64_t prev_ts;
    uint64_t prev_delta;
    uint64_t prev_bits;
    uint64_t budget_bits;        /* bits both streams may hold within the byte limit */
    uint32_t count;
    uint32_t max_samples;
    uint32_t safe_left;          /* appends that certainly fit every limit: no checks needed (apart from count, so
                                  * that gcc's straight-line vectorizer does not pair the two in one xmm) */
    uint8_t window_lead;         /* leading zeros of the current XOR window */
    uint8_t window_trail;        /* trailing zeros of the current XOR window */
    uint8_t isa;                 /* codec 1: 1 when its appends take their BMI build */
    uint8_t stage;
    uint32_t codec;
    uint32_t held;               /* codec 1 with a summary: values held in the sketch's stage, not yet added */
    int64_t first_ts;
    uint64_t first_bits;
    uint64_t first_delta;
    uint8_t *dst;
    size_t capacity;
    size_t byte_limit;           /* max_bytes, 0 when unlimited */
    struct tschunk_sketch *summary; /* attached by tschunk_encoder_set_summary, NULL when off */
    uint64_t nan_count;          /* values the summary's sketch cannot hold */
    uint64_t inf_count;
    tschunk_codec2_state c2;
} tschunk_encoder;

/**
 * Start a chunk in caller memory `dst` of `capacity` bytes. Nothing is
 * allocated, now or later; `dst` must stay valid until finish.
 * @param opts NULL for defaults.
 * @return 0, or an error: BAD_PARAMETER (NULL pointers, unknown codec, option
 *         out of range), DST_TOO_SMALL (capacity < TSCHUNK_BOUND(0)).
 */
TSCHUNK_API size_t tschunk_encoder_init(tschunk_encoder *enc, void *dst, size_t capacity,
                                        const tschunk_encoder_options *opts);

/**
 * Start the next chunk of the same series in `dst`, with the options of the
 * last init, as a TSDB cuts its head chunk. The new chunk stands alone, as
 * after init; codec 2 keeps what it learned of the series (the decimal
 * reading and the groups' forms), so that a series cut into short chunks is
 * not searched afresh for each one. A summary sketch stays attached, cleared.
 * The previous chunk's bytes are not touched (finish it first to keep it).
 * @return 0, or what init returns (the encoder is then unchanged); STAGE for
 *         an encoder never initialised.
 */
TSCHUNK_API size_t tschunk_encoder_restart(tschunk_encoder *enc, void *dst, size_t capacity);

/**
 * Append one sample. Transactional: on error nothing changes, neither the
 * encoder nor a single byte of `dst`. Timestamps must not decrease; equal
 * timestamps are allowed and kept in append order. Values are stored as their
 * exact 64-bit pattern (NaN payloads, -0.0, infinities survive).
 * @return 0, or an error: OUT_OF_ORDER (ts < previous ts), CHUNK_FULL
 *         (max_samples or max_bytes would be exceeded), DST_TOO_SMALL (the
 *         buffer cannot hold it), STAGE (encoder finished or not initialised).
 */
TSCHUNK_API size_t tschunk_append(tschunk_encoder *enc, int64_t ts, double value);

/** As tschunk_append, with the value given as its IEEE-754 bit pattern. */
TSCHUNK_API size_t tschunk_append_bits(tschunk_encoder *enc, int64_t ts, uint64_t value_bits);

/**
 * Append n samples in order, as n calls of tschunk_append would, with the
 * same bytes; the bulk path for imports and batched ingest: codec 1 keeps
 * its stream state in registers across the samples that certainly fit (and
 * writes a run of steady steps or repeated values at once), codec 2 encodes
 * each group it can complete from the arrays straight from them (so the
 * arrays must not overlap the encoder's buffer `dst`).
 * Stops at the first sample refused, which, with every later one, changes
 * nothing. `appended` (may be NULL) receives the number appended.
 * @return 0 when all n were appended, else the refused sample's error as
 *         tschunk_append reports it; BAD_PARAMETER for NULL arrays with n > 0.
 */
TSCHUNK_API size_t tschunk_append_many(tschunk_encoder *enc, const int64_t *ts, const double *values, size_t n,
                                       size_t *appended);

/** @return the number of samples appended so far. */
TSCHUNK_API size_t tschunk_encoder_count(const tschunk_encoder *enc);

/* ------------------------------------------------------------------------
 * Staged appends: one sample a call, handed over in bulk.
 * ---------------------------------------------------------------------- */
/** Samples a stage holds: one codec-2 group, which the flush encodes straight from the stage. */
#define TSCHUNK_STAGE_SAMPLES 128

/**
 * A caller-side stage for samples that arrive one at a time (about 2 KB, on
 * your side: no allocation). tschunk_stage_push keeps a sample with a few
 * stores, inline, and hands a full stage to tschunk_append_many (or
 * tschunk_prom_append_many): the same bytes as one tschunk_append a sample,
 * without a call into the library a sample. The price: the encoder, its
 * snapshot and its summary see staged samples only once flushed (call
 * tschunk_stage_flush before tschunk_encoder_finish or a snapshot), and a
 * refusal other than time going backwards (CHUNK_FULL, DST_TOO_SMALL) is
 * met by the push that flushes. Every push that returns an error has staged
 * nothing; the samples the flush refused stay staged, in order, for the next
 * chunk: finish, restart, and push again (or flush).
 * Read-only for the caller, but `count = 0` drops what is staged.
 */
typedef struct {
    uint32_t count;  /* samples staged, ts[0] .. ts[count - 1] */
    int64_t last_ts; /* the last timestamp pushed (INT64_MIN after init) */
    int64_t ts[TSCHUNK_STAGE_SAMPLES];
    double values[TSCHUNK_STAGE_SAMPLES];
} tschunk_stage;

static inline void tschunk_stage_init(tschunk_stage *stage)
{
    stage->count = 0;
    stage->last_ts = INT64_MIN;
}

/**
 * Hand the staged samples to tschunk_append_many; the ones it refuses stay
 * staged, moved to the front.
 * @return 0 when every one was appended (the stage is empty), else the
 *         refusal's error as tschunk_append_many reports it.
 */
TSCHUNK_API size_t tschunk_stage_flush(tschunk_stage *stage, tschunk_encoder *enc);

/**
 * Push one sample: refused at once (OUT_OF_ORDER) when ts is below the last
 * timestamp pushed; a full stage is flushed first, and a refusal there
 * returned with this sample not staged.
 * @return 0 (staged), OUT_OF_ORDER, or the flush's error.
 */
static inline size_t tschunk_stage_push(tschunk_stage *stage, tschunk_encoder *enc, int64_t ts, double value)
{
    if (ts < stage->last_ts) return (size_t)0 - (size_t)TSCHUNK_ERROR_OUT_OF_ORDER;
    if (stage->count == TSCHUNK_STAGE_SAMPLES) {
        size_t err = tschunk_stage_flush(stage, enc);
        if (err) return err;
    }
    stage->ts[stage->count] = ts;
    stage->values[stage->count++] = value;
    stage->last_ts = ts;
    return 0;
}

struct tschunk_sketch;

/**
 * Keep a summary of the chunk while appending: the caller's sketch (cleared
 * here, its mapping kept) receives every value; NaNs (stale markers
 * included) and values the sketch cannot hold (infinities, beyond its range)
 * are counted instead. Codec 1 adds its values 128 at a time and codec 2 a
 * group of values when it flushes the group (every 128 samples), both the
 * rest at finish, in append order, so the finished summary is the one adding
 * them one by one builds; read the sketch after finish. A sketch serves one
 * encoder at a time (codec 1 holds its pending values in it). Call
 * before the first append; pass NULL to turn it off. Appending still
 * allocates nothing.
 * @return 0, STAGE (samples already appended) or BAD_PARAMETER.
 */
TSCHUNK_API size_t tschunk_encoder_set_summary(tschunk_encoder *enc, struct tschunk_sketch *sketch);

/** Bytes that always hold the summary blob of this encoder's chunk. */
TSCHUNK_API size_t tschunk_encoder_summary_bound(const tschunk_encoder *enc);

/**
 * Write the chunk's summary blob (README "Summary blob v1": count, first and
 * last timestamp, NaN and infinity counts, then the DDSketch compact
 * encoding with exact count/min/max/sum). Call after tschunk_encoder_finish.
 * @return the blob size, STAGE (no summary, or not finished) or DST_TOO_SMALL.
 */
TSCHUNK_API size_t tschunk_encoder_write_summary(const tschunk_encoder *enc, void *dst, size_t capacity);

/**
 * Lay the chunk out at the start of `dst` and end the encoder. The chunk is
 * then the first `result` bytes of `dst`.
 * @return the chunk size in bytes, or STAGE if already finished.
 */
TSCHUNK_API size_t tschunk_encoder_finish(tschunk_encoder *enc);

/**
 * The head chunk: write the chunk as finish would lay it out now (every
 * sample appended so far) into another buffer `dst` of `capacity` bytes,
 * which readers can decode while appends go on. The encoder is not changed
 * and allocates nothing; TSCHUNK_BOUND(count) bytes always suffice. Codec 2
 * encodes its open group for the copy (about 1 µs for a full group).
 * @return the chunk size, STAGE (not active), DST_TOO_SMALL or BAD_PARAMETER.
 */
TSCHUNK_API size_t tschunk_encoder_snapshot(const tschunk_encoder *enc, void *dst, size_t capacity);

/**
 * One-shot encode of n samples into dst.
 * @return the chunk size, or an error as tschunk_append reports it for the
 *         first sample that fails, or TOO_MANY_SAMPLES.
 */
TSCHUNK_API size_t tschunk_encode(void *dst, size_t capacity, const int64_t *ts,
                                  const double *values, size_t n,
                                  const tschunk_encoder_options *opts);

/* ------------------------------------------------------------------------
 * Reading chunks.
 * ---------------------------------------------------------------------- */
#define TSCHUNK_FLAG_TS_CONST 0x01u  /* every delta equals the first: no timestamp stream */
#define TSCHUNK_FLAG_VAL_CONST 0x02u /* every value equals the first: no value stream */
#define TSCHUNK_FLAG_VAL_SHORT 0x04u /* codec 2, with VAL_CONST: that value's low zero bytes are not stored */
#define TSCHUNK_FLAG_TS_SCALED 0x08u /* codec 2: timestamp fields are stored divided by a per-group scale */

typedef struct {
    uint32_t version;       /* format version of the chunk */
    uint32_t codec;         /* TSCHUNK_CODEC_* */
    uint32_t flags;         /* TSCHUNK_FLAG_* */
    uint32_t count;         /* samples */
    int64_t first_ts;       /* valid when count >= 1 */
    uint64_t first_bits;    /* value bits of the first sample, valid when count >= 1 */
    uint64_t first_delta;   /* ts[1] - ts[0], valid when count >= 2 */
    size_t header_bytes;    /* bytes before the first stream */
    size_t ts_header_bytes; /* bytes of the header spent on the first timestamp and delta */
    size_t value_bytes;     /* bytes of the value stream */
    size_t ts_bytes;        /* bytes of the timestamp stream */
    size_t total_bytes;     /* whole chunk */
} tschunk_chunk_info;

/**
 * Read a chunk's header without decoding samples. Checks magic, version,
 * codec, reserved bits, that the declared stream sizes add up to `size` and
 * that the declared count is possible for those sizes. Codec 2 keeps no
 * first value in its header: for it, this walks every group's lengths and
 * decodes the first group for first_bits and first_delta (about 1 µs).
 * @return 0 or an error (TRUNCATED, BAD_MAGIC, BAD_VERSION, BAD_CODEC,
 *         RESERVED_BITS, CORRUPT, BAD_PARAMETER; for codec 2 also what
 *         decoding its first group reports).
 */
TSCHUNK_API size_t tschunk_chunk_info_get(const void *chunk, size_t size, tschunk_chunk_info *info);

/** Same checks as tschunk_chunk_info_get, without the result. @return 0 or an error. */
TSCHUNK_API size_t tschunk_validate(const void *chunk, size_t size);

/* One bit stream being read. */
typedef struct {
    const uint8_t *base;
    uint64_t bit_pos;
    uint64_t bit_len;
    size_t byte_len;
} tschunk_bit_reader;

/**
 * Iterator state. Caller-allocated, borrows the chunk bytes (which must stay
 * valid and unchanged while it is used); its fields are private.
 */
typedef struct {
    tschunk_bit_reader ts_in;
    tschunk_bit_reader val_in;
    int64_t ts;              /* last sample produced */
    uint64_t delta;
    uint64_t bits;
    uint32_t index;          /* samples produced so far */
    uint32_t count;
    uint8_t window_lead;
    uint8_t window_width;
    uint8_t flags;
    uint8_t pending;         /* seek left the current sample to be returned by next */
    uint32_t error;          /* sticky error code, 0 when none */
    const uint8_t *chunk;
    size_t size;
    int64_t first_ts;
    uint64_t first_bits;
    uint64_t first_delta;
    uint32_t codec;
    /* Codec 2's current group or codec 1's current run of samples, decoded (about 2 KiB). */
    uint32_t group_at;       /* next sample of the group buffer to return */
    uint32_t group_len;      /* samples in the group buffer */
    size_t group_next;       /* codec 2: offset of the next group in the chunk; codec 1: SIZE_MAX once a run
                                failed (the iterator steps one sample at a time from there) */
    int64_t group_ts[TSCHUNK_GROUP_SAMPLES];
    uint64_t group_bits[TSCHUNK_GROUP_SAMPLES];
} tschunk_iter;

/**
 * Prepare to read `chunk`: the header is checked as by tschunk_chunk_info_get,
 * except that for codec 2 no group is parsed here: each one is parsed when the
 * iterator reaches it (damage found then is an error of the call that reaches
 * it, sticky), so that starting to read costs no walk through the chunk and no
 * group is parsed twice. tschunk_validate walks every group's lengths up front.
 * @return 0 or an error.
 */
TSCHUNK_API size_t tschunk_iter_init(tschunk_iter *it, const void *chunk, size_t size);

/**
 * Produce the next sample.
 * @return 1 with *ts and *value set, 0 at the end of the chunk, or an error
 *         (TRUNCATED or CORRUPT for damaged bytes; sticky).
 */
TSCHUNK_API size_t tschunk_iter_next(tschunk_iter *it, int64_t *ts, double *value);

/** As tschunk_iter_next, with the value as its bit pattern. */
TSCHUNK_API size_t tschunk_iter_next_bits(tschunk_iter *it, int64_t *ts, uint64_t *value_bits);

/**
 * Position on the first sample with timestamp >= t; the next call to
 * tschunk_iter_next returns it. Seeking backwards restarts from the start.
 * @return 1 when such a sample exists, 0 when none does, or an error.
 */
TSCHUNK_API size_t tschunk_iter_seek(tschunk_iter *it, int64_t t);

/**
 * Decode up to `capacity` samples into caller arrays (either may be NULL to
 * skip it). Values are written as doubles carrying the exact bit patterns.
 * @return the number of samples written (0 at the end), or an error.
 */
TSCHUNK_API size_t tschunk_iter_read(tschunk_iter *it, int64_t *ts, double *values, size_t capacity);

/**
 * Decode a whole chunk into caller arrays of `capacity` entries.
 * @return the number of samples, DST_TOO_SMALL when capacity is short, or an error.
 */
TSCHUNK_API size_t tschunk_decode(const void *chunk, size_t size, int64_t *ts, double *values,
                                  size_t capacity);

/**
 * Decode n_chunks whole chunks (either codec) into one pair of arrays, each
 * chunk's samples after the previous chunk's (a series' chunks in a query,
 * say). Codec-1 chunks are decoded side by side, so that their serial bit
 * chains overlap: 16 at a time in AVX-512 lanes where the CPU has them (a
 * lane takes the list's next chunk when its own ends, so chunks of any
 * lengths keep the lanes busy; hand it the whole list), else two in one
 * loop; codec-2 chunks one after the other.
 * @return the total number of samples; DST_TOO_SMALL when it exceeds
 * capacity (checked before anything is decoded); or the first error met
 * (the arrays then hold partial results).
 */
TSCHUNK_API size_t tschunk_decode_chunks(const void *const *chunks, const size_t *sizes, size_t n_chunks,
                                         int64_t *ts, double *values, size_t capacity);

/* ------------------------------------------------------------------------
 * Prometheus XOR chunks (Prometheus' `EncXOR`, the bytes `XORChunk.Bytes()`
 * returns): same API shape as the native codec, bytes identical to
 * Prometheus 3.x for the same samples. Where Prometheus and the native codec
 * differ, this codec follows Prometheus:
 *  - the count is a big-endian uint16 at bytes 0-1, rewritten on every append:
 *    the bytes are a valid chunk after every append, finish only ends it;
 *  - timestamps that go backwards are accepted and stored (Prometheus refuses
 *    them above the chunk, in its head); the decoder returns them as they are;
 *  - dod buckets 14/17/20/64 bits, no window reset, no constant-stream flags,
 *    one interleaved bit stream;
 *  - decoding: a "reuse" field before any window reads 64 bits (as
 *    Prometheus' reader does); bytes after the last sample are ignored
 *    (Prometheus 2.x wrote a spare 0x00).
 * One difference is kept: a new-window field whose leading zeros plus
 * significant bits exceed 64 is CORRUPT (Prometheus computes a wrapped shift).
 * ---------------------------------------------------------------------- */
#define TSCHUNK_PROM_MAX_SAMPLES 65535u

/** Buffer size that always holds a Prometheus XOR chunk of n samples (8 bytes of store slack included). */
#define TSCHUNK_PROM_BOUND(n) ((size_t)2u + 10u + 8u + 10u + (((size_t)(n) * 145u + 7u) / 8u) + 8u)

/** Function twin of TSCHUNK_PROM_BOUND. @return 0 when n > TSCHUNK_PROM_MAX_SAMPLES. */
TSCHUNK_API size_t tschunk_prom_bound(size_t n);

/** Prometheus XOR encoder state; caller-allocated, fields private. */
typedef struct {
    tschunk_bit_writer out;  /* bit stream from byte 2 on */
    int64_t prev_ts;
    uint64_t prev_delta;
    uint64_t prev_bits;
    uint32_t count;
    uint32_t max_samples;
    uint8_t window_lead;     /* 0xff: no window yet */
    uint8_t window_trail;
    uint8_t stage;
    uint8_t isa;             /* 1 when the appends take their BMI build */
    uint8_t *dst;
    size_t fast_bit_end;     /* below this stream length a worst-case sample passes every limit; 0: none */
    size_t byte_limit;       /* max_bytes, 0 when unlimited */
} tschunk_prom_encoder;

/**
 * Start an empty Prometheus XOR chunk in dst (the 2 bytes `00 00`).
 * opts: codec must be 0; max_samples and max_bytes as for the native codec.
 * @return 0, or BAD_PARAMETER, DST_TOO_SMALL (capacity < TSCHUNK_PROM_BOUND(0)).
 */
TSCHUNK_API size_t tschunk_prom_encoder_init(tschunk_prom_encoder *enc, void *dst, size_t capacity,
                                             const tschunk_encoder_options *opts);

/**
 * Append one sample, exactly as Prometheus' XOR appender does. Transactional:
 * on error nothing changes. After a successful append dst holds a complete
 * chunk of tschunk_prom_encoder_size() bytes.
 * @return 0, or CHUNK_FULL, DST_TOO_SMALL, STAGE.
 */
TSCHUNK_API size_t tschunk_prom_append(tschunk_prom_encoder *enc, int64_t ts, double value);
TSCHUNK_API size_t tschunk_prom_append_bits(tschunk_prom_encoder *enc, int64_t ts, uint64_t value_bits);

/** Append n samples, as n calls of tschunk_prom_append would (same bytes, same errors); see tschunk_append_many. */
TSCHUNK_API size_t tschunk_prom_append_many(tschunk_prom_encoder *enc, const int64_t *ts, const double *values,
                                            size_t n, size_t *appended);

/** tschunk_stage_flush into a Prometheus XOR encoder (tschunk_prom_append_many). */
TSCHUNK_API size_t tschunk_prom_stage_flush(tschunk_stage *stage, tschunk_prom_encoder *enc);

/** tschunk_stage_push for a Prometheus XOR encoder, without the time check: its chunks take time going back,
 * as Prometheus' appender does (its head checks time before). */
static inline size_t tschunk_prom_stage_push(tschunk_stage *stage, tschunk_prom_encoder *enc, int64_t ts,
                                             double value)
{
    if (stage->count == TSCHUNK_STAGE_SAMPLES) {
        size_t err = tschunk_prom_stage_flush(stage, enc);
        if (err) return err;
    }
    stage->ts[stage->count] = ts;
    stage->values[stage->count++] = value;
    stage->last_ts = ts;
    return 0;
}

/** @return the current chunk size in bytes (valid after every append). */
TSCHUNK_API size_t tschunk_prom_encoder_size(const tschunk_prom_encoder *enc);

/** End the encoder. @return the chunk size, or STAGE if already finished. */
TSCHUNK_API size_t tschunk_prom_encoder_finish(tschunk_prom_encoder *enc);

/** One-shot encode. @return the chunk size or an error. */
TSCHUNK_API size_t tschunk_prom_encode(void *dst, size_t capacity, const int64_t *ts, const double *values,
                                       size_t n, const tschunk_encoder_options *opts);

/* Samples a Prometheus XOR iterator decodes ahead at a time (0.42.0). */
#define TSCHUNK_PROM_RUN_SAMPLES 32u

/** Prometheus XOR iterator state; caller-allocated (about 600 bytes), borrows the bytes, fields private. */
typedef struct {
    tschunk_bit_reader in;
    int64_t ts;             /* last sample decoded (the run buffer's last, while it holds samples) */
    uint64_t delta;
    uint64_t bits;
    uint32_t index;         /* samples decoded so far (the run buffer's included) */
    uint32_t count;
    uint8_t window_lead;
    uint8_t window_width;   /* 64 - lead - trail; 64 before any window, as Prometheus */
    uint8_t pending;
    uint8_t step_only;      /* a run failed: one sample at a time from there */
    uint32_t error;
    const uint8_t *chunk;
    size_t size;
    /* A run of samples decoded ahead by the batch loop (0.42.0). */
    uint32_t run_at;        /* next sample of the run buffer to return */
    uint32_t run_len;       /* samples in the run buffer */
    int64_t run_ts[TSCHUNK_PROM_RUN_SAMPLES];
    uint64_t run_bits[TSCHUNK_PROM_RUN_SAMPLES];
} tschunk_prom_iter;

/** @return 0, or TRUNCATED (fewer than 2 bytes), BAD_PARAMETER. */
TSCHUNK_API size_t tschunk_prom_iter_init(tschunk_prom_iter *it, const void *chunk, size_t size);
/** @return 1 with a sample, 0 after the count's last sample, or an error (TRUNCATED, CORRUPT; sticky). */
TSCHUNK_API size_t tschunk_prom_iter_next(tschunk_prom_iter *it, int64_t *ts, double *value);
TSCHUNK_API size_t tschunk_prom_iter_next_bits(tschunk_prom_iter *it, int64_t *ts, uint64_t *value_bits);
/** Position on the first sample, in chunk order, with timestamp >= t. @return 1, 0 (none) or an error. */
TSCHUNK_API size_t tschunk_prom_iter_seek(tschunk_prom_iter *it, int64_t t);
/** Decode up to capacity samples (either array may be NULL). @return samples written, 0 at the end, or an error. */
TSCHUNK_API size_t tschunk_prom_iter_read(tschunk_prom_iter *it, int64_t *ts, double *values, size_t capacity);
/** @return the chunk's sample count (its first two bytes), or an error. */
TSCHUNK_API size_t tschunk_prom_count(const void *chunk, size_t size);
/** Decode a whole chunk. @return the number of samples, DST_TOO_SMALL, or an error. */
TSCHUNK_API size_t tschunk_prom_decode(const void *chunk, size_t size, int64_t *ts, double *values,
                                       size_t capacity);

/**
 * Decode n_chunks whole chunks into one pair of arrays, each chunk's samples
 * after the previous chunk's (a series' chunks in a query, say). Chunks are
 * decoded side by side, so that their serial bit chains overlap: 16 at a
 * time in AVX-512 lanes where the CPU has them (a lane takes the list's next
 * chunk when its own ends, so chunks of any lengths keep the lanes busy),
 * else two in one loop; faster per sample than decoding them one by one,
 * same samples. Hand it 16 chunks or more a call (the whole list is best).
 * @return the total number of samples; DST_TOO_SMALL when it exceeds
 * capacity (checked before anything is decoded); or the first error met
 * (the arrays then hold partial results).
 */
TSCHUNK_API size_t tschunk_prom_decode_chunks(const void *const *chunks, const size_t *sizes, size_t n_chunks,
                                              int64_t *ts, double *values, size_t capacity);

/* ------------------------------------------------------------------------
 * DDSketch: relative-accuracy quantile sketch, byte-compatible with the
 * compact encoding of Datadog's sketches-java and sketches-go.
 * ---------------------------------------------------------------------- */
typedef enum {
    TSCHUNK_MAPPING_LOGARITHMIC = 0, /* the memory-optimal one; flag 0x02 */
    TSCHUNK_MAPPING_LINEAR = 1,      /* flag 0x06 */
    TSCHUNK_MAPPING_QUADRATIC = 2,   /* flag 0x0A */
    TSCHUNK_MAPPING_CUBIC = 3,       /* cubically interpolated, no log call; flag 0x0E */
    TSCHUNK_MAPPING_QUARTIC = 4      /* flag 0x12 */
} tschunk_mapping_kind;

/** Per-object allocator; NULL functions mean malloc/free. */
typedef struct {
    void *(*alloc)(void *opaque, size_t size);
    void (*free)(void *opaque, void *ptr);
    void *opaque;
} tschunk_allocator;

typedef struct {
    tschunk_mapping_kind mapping;
    double relative_accuracy; /* 0 means 0.01 */
    uint32_t max_bins;        /* bins per sign kept in memory; 0 means 2048 */
    uint32_t collapse_highest; /* 0: beyond max_bins the lowest bins merge (keeps high quantiles exact) */
    tschunk_allocator allocator;
    /* 1 (0.57.0): a plain DDSketch, as sketches-java's DDSketch and sketches-go's: count and bins only, no exact
     * sum, min or max (tschunk_sketch_stats derives them from the bins, exact 0), quantiles not clamped, encoded
     * without statistics; its adds skip the Kahan sum (README "Bins-only sketches"). Not for a chunk summary
     * (BAD_PARAMETER). */
    uint32_t bins_only;
} tschunk_sketch_options;

/** A sketch: opaque, created by tschunk_sketch_create, never resized afterwards. */
typedef struct tschunk_sketch tschunk_sketch;

/**
 * Create a sketch. Its memory (two stores of max_bins doubles) is allocated
 * here once; adding, merging and decoding never allocate.
 * @return 0, BAD_PARAMETER (accuracy outside (0,1), max_bins > 2^20) or ALLOCATION.
 */
TSCHUNK_API size_t tschunk_sketch_create(tschunk_sketch **out, const tschunk_sketch_options *opts);

/** Create a sketch whose mapping is given by its parameters (gamma > 1, finite offset). */
TSCHUNK_API size_t tschunk_sketch_create_mapping(tschunk_sketch **out, tschunk_mapping_kind kind, double gamma,
                                                 double index_offset, const tschunk_sketch_options *opts);
TSCHUNK_API void tschunk_sketch_free(tschunk_sketch *sketch);
/** Empty the sketch, keeping its mapping (NULL: nothing). */
TSCHUNK_API void tschunk_sketch_clear(tschunk_sketch *sketch);

/**
 * Add a value (weight 1) or a value with a weight > 0. Values whose magnitude
 * is at most the mapping's min_indexable (tschunk_sketch_stats: 0, -0.0 and subnormals at the usual accuracies)
 * go to the zero bucket. NaN, infinities and magnitudes above the largest indexable
 * value are refused with UNTRACKABLE and change nothing (the reference
 * libraries count NaN as zero, or throw), as is a weight that would take the
 * count past DBL_MAX (the compact encoding holds finite counts only).
 */
TSCHUNK_API size_t tschunk_sketch_add(tschunk_sketch *sketch, double value);
TSCHUNK_API size_t tschunk_sketch_add_weighted(tschunk_sketch *sketch, double value, double weight);
/**
 * Add n values, in order, exactly as n calls of tschunk_sketch_add would (the
 * same sketch, Kahan sum included); faster with the cubic mapping, whose
 * indices are computed 4 at a time (AVX2 where the CPU has it).
 * @return the number of values refused (NaN, infinities, beyond the range), or BAD_PARAMETER.
 */
TSCHUNK_API size_t tschunk_sketch_add_many(tschunk_sketch *sketch, const double *values, size_t n);

/** Values a sketch stage holds: one run of tschunk_sketch_add_many's kernel. */
#define TSCHUNK_SKETCH_STAGE_VALUES 128

/**
 * A caller-side stage for values added one at a time (about 1 KB, on your
 * side: no allocation), as tschunk_stage is for appends. tschunk_sketch_stage_add
 * keeps a value with two stores, inline, and hands a full stage to the
 * sketch's batch add: the same sketch as one tschunk_sketch_add a value,
 * without a call into the library a value, at about the batch add's cost. The
 * price: the sketch sees staged values only once flushed (call
 * tschunk_sketch_stage_flush before reading, encoding or merging it), and the
 * values the sketch refuses (NaN, infinities, beyond its range) are counted
 * in `refused` at the flush instead of being refused by the add.
 * Read-only for the caller, but `count = 0` drops what is staged.
 */
typedef struct {
    uint32_t count;     /* values staged: value_bits[0] .. value_bits[count - 1] */
    uint64_t refused;   /* values the flushes refused so far; tschunk_sketch_stage_init zeroes it */
    uint64_t value_bits[TSCHUNK_SKETCH_STAGE_VALUES]; /* each value's bit pattern (memcpy of the double) */
} tschunk_sketch_stage;

static inline void tschunk_sketch_stage_init(tschunk_sketch_stage *stage)
{
    stage->count = 0;
    stage->refused = 0;
}

/**
 * Add the staged values to the sketch, in order, as tschunk_sketch_add_many
 * would; the stage is then empty and `refused` counts the ones refused.
 * @return 0, or BAD_PARAMETER (stage or sketch NULL, count past the stage): nothing added.
 */
TSCHUNK_API size_t tschunk_sketch_stage_flush(tschunk_sketch_stage *stage, tschunk_sketch *sketch);

/**
 * Stage one value (weight 1) for the sketch; a full stage is flushed first.
 * @return 0 (staged), or the flush's error with this value not staged.
 */
static inline size_t tschunk_sketch_stage_add(tschunk_sketch_stage *stage, tschunk_sketch *sketch, double value)
{
    if (stage->count == TSCHUNK_SKETCH_STAGE_VALUES) {
        size_t err = tschunk_sketch_stage_flush(stage, sketch);
        if (err) return err;
    }
    memcpy(&stage->value_bits[stage->count++], &value, sizeof value);
    return 0;
}

/** Merge src into dst. @return 0, NOT_MERGEABLE (mappings differ in any bit) or UNTRACKABLE (counts would pass
 * DBL_MAX); dst is unchanged on error. */
TSCHUNK_API size_t tschunk_sketch_merge(tschunk_sketch *dst, const tschunk_sketch *src);

/**
 * Value at quantile q in [0, 1], with sketches-java's rule: rank = q (count - 1),
 * the first bin whose cumulative count exceeds rank, negative bins from the most
 * negative; clamped to the exact [min, max].
 * @return 0, or BAD_PARAMETER (q outside [0,1]), STAGE (empty sketch).
 */
TSCHUNK_API size_t tschunk_sketch_quantile(const tschunk_sketch *sketch, double q, double *value);

typedef struct {
    double count, sum, min, max; /* exact while every input carried them (see exact); sum as the reference
                                    libraries give it: Kahan's plus its compensation (since 0.55.0) */
    double zero_count;
    uint32_t exact;              /* 0 when a decoded stream had no exact statistics: then derived from bins */
    tschunk_mapping_kind mapping;
    double gamma, index_offset, relative_accuracy;
    uint32_t positive_bins, negative_bins; /* non-empty bins */
    /* The mapping's range (0.49.6): a magnitude above min_indexable and at most max_indexable gets a bin, a smaller
     * one counts as zero, a larger one is refused. Every normal double, about, down to an accuracy of 1e-6; finer
     * ones narrow it, as in the reference libraries (int32 indices): 1e-8 about 1e-18 to 1e18 (1e-13 to 2e12 with
     * the linear mapping), 1e-9 about 0.04 to 27 (0.05 to 5). */
    double min_indexable, max_indexable;
} tschunk_sketch_stats;

/** A NULL sketch reads as all zeros. */
TSCHUNK_API void tschunk_sketch_get_stats(const tschunk_sketch *sketch, tschunk_sketch_stats *stats);

/**
 * Visit the non-empty bins of one sign (negative != 0: the negative store,
 * indexed by |value|), by ascending index. @return the number of bins visited (BAD_PARAMETER for NULL).
 */
TSCHUNK_API size_t tschunk_sketch_bins(const tschunk_sketch *sketch, int negative,
                                       void (*visit)(void *ctx, int32_t index, double count), void *ctx);

#define TSCHUNK_SKETCH_OMIT_MAPPING 0x1u /* no mapping block (the reader must know it) */
/* COUNT, MIN, MAX, SUM blocks first, as DDSketchWithExactSummaryStatistics, when the sketch's statistics are exact
 * (tschunk_sketch_stats.exact); derived ones are left out (0.57.0), so that no reader takes them for exact. */
#define TSCHUNK_SKETCH_EXACT_STATS 0x2u
#define TSCHUNK_SKETCH_SPARSE 0x4u       /* bins as index deltas and counts, as sketches-java's SparseStore */

/** Bytes that always hold the encoding of this sketch (0 for NULL). */
TSCHUNK_API size_t tschunk_sketch_encode_bound(const tschunk_sketch *sketch);

/**
 * Compact encoding, byte-identical to sketches-java's encode(out, omitMapping)
 * for its dense (UnboundedSizeDenseStore) and sparse stores: mapping, zero
 * count, positive store, negative store; each dense store as contiguous counts
 * or index deltas and counts, whichever Java's size rule picks. Bytes of dst
 * past the returned size, up to capacity, may be overwritten (the bins are
 * written in whole words).
 * @return the size, or DST_TOO_SMALL.
 */
TSCHUNK_API size_t tschunk_sketch_encode(const tschunk_sketch *sketch, void *dst, size_t capacity, unsigned flags);

/**
 * Decode a compact encoding and merge it into sketch, without allocating.
 * The whole input is checked first, then merged: on error the sketch is
 * unchanged. Stricter than both reference libraries: unknown flags or
 * subflags, truncation, indexes outside int32, negative, NaN or infinite
 * counts, a NaN or <= 1 gamma are errors (CORRUPT or TRUNCATED, *error_offset
 * set to the offending byte when error_offset is not NULL); a mapping block
 * that differs in any bit from the sketch's is NOT_MERGEABLE; a COUNT or
 * zero count that would pass DBL_MAX once merged is UNTRACKABLE. Bins merged
 * past DBL_MAX (counts near 1e308, from streams without COUNT or whose bins
 * outweigh it) saturate there, and so does the count they make: a sketch
 * always encodes to a stream this decoder reads.
 */
TSCHUNK_API size_t tschunk_sketch_decode_merge(tschunk_sketch *sketch, const void *src, size_t size,
                                               size_t *error_offset);

/**
 * Decode a standalone encoding (its mapping block gives the mapping) into a new sketch.
 * @return 0 or an error; *out is NULL on error.
 */
TSCHUNK_API size_t tschunk_sketch_decode_new(tschunk_sketch **out, const void *src, size_t size,
                                             const tschunk_sketch_options *opts, size_t *error_offset);

/* ------------------------------------------------------------------------
 * Chunk summaries: read without decoding samples, merged for range queries.
 * ---------------------------------------------------------------------- */
typedef struct {
    uint32_t count;           /* samples in the chunk */
    int64_t first_ts, last_ts;
    uint64_t nan_count, inf_count;
    const uint8_t *sketch;    /* DDSketch compact encoding inside the blob */
    size_t sketch_size;
} tschunk_summary_info;

/** Parse a summary blob's fields. @return 0, TRUNCATED, BAD_MAGIC, BAD_VERSION or CORRUPT. */
TSCHUNK_API size_t tschunk_summary_parse(const void *blob, size_t size, tschunk_summary_info *info);

/** Merge a summary blob's sketch into acc (mappings must be equal). @return 0 or an error. */
TSCHUNK_API size_t tschunk_summary_merge(struct tschunk_sketch *acc, const void *blob, size_t size);

/** One chunk and its summary blob, as a range query takes them. */
typedef struct {
    const void *chunk;
    size_t chunk_size;
    const void *summary;
    size_t summary_size;
} tschunk_chunk_ref;

typedef struct {
    uint64_t chunks_from_summaries; /* wholly inside [from, to]: merged without decoding */
    uint64_t chunks_decoded;        /* straddling an end (or without a summary): decoded */
    uint64_t chunks_skipped;        /* outside the range */
    uint64_t samples_decoded;
    uint64_t nan_count, inf_count;  /* untracked values in the range */
} tschunk_range_stats;

/**
 * Merge into acc every value with from <= ts <= to: chunks wholly inside the
 * range contribute their summary, chunks that straddle an end are decoded
 * (exact for their samples), others are skipped (every chunk when from > to).
 * @return 0 or the first error (the stats say how far it got).
 */
TSCHUNK_API size_t tschunk_range_merge(struct tschunk_sketch *acc, const tschunk_chunk_ref *chunks, size_t n,
                                       int64_t from, int64_t to, tschunk_range_stats *stats);

/**
 * Combine the summaries of n chunks (every one must have a summary blob) into
 * one block summary blob (README "Block summary blob"): samples, time span,
 * NaN and infinity counts added up, sketches merged through scratch (cleared
 * here; its mapping must be the summaries'). A range query that covers the
 * whole block then merges one sketch instead of n.
 * @return the blob size, or BAD_PARAMETER, a summary's parse or merge error, DST_TOO_SMALL.
 */
TSCHUNK_API size_t tschunk_summary_combine(struct tschunk_sketch *scratch, const tschunk_chunk_ref *chunks, size_t n,
                                           void *dst, size_t capacity);
/** Bytes that always hold a block summary combined through scratch. */
TSCHUNK_API size_t tschunk_summary_combine_bound(const struct tschunk_sketch *scratch);

/** Consecutive chunks [first, first + count) of a range query's array and their combined summary. */
typedef struct {
    size_t first, count;
    const void *summary; /* tschunk_summary_combine's blob */
    size_t summary_size;
} tschunk_summary_block;

/**
 * tschunk_range_merge with block summaries: a block wholly inside [from, to]
 * merges its combined summary (its chunks count as chunks_from_summaries), a
 * block wholly outside is skipped, any other block (cut by an end, or whose
 * blob does not parse, combines another number of chunks or holds a sketch
 * that does not decode) and the chunks in no block go chunk by chunk as in
 * tschunk_range_merge. Blocks are in order and do not overlap.
 * @return 0, BAD_PARAMETER (blocks out of order, overlapping or past n), or the first error.
 */
TSCHUNK_API size_t tschunk_range_merge_blocks(struct tschunk_sketch *acc, const tschunk_chunk_ref *chunks, size_t n,
                                              const tschunk_summary_block *blocks, size_t nblocks, int64_t from,
                                              int64_t to, tschunk_range_stats *stats);

/* ------------------------------------------------------------------------
 * Segments: the chunks of many series in one checksummed, indexed file,
 * read in place from caller memory (an mmap works; chunk bytes are never
 * copied). README "Segment format v3".
 * ---------------------------------------------------------------------- */
typedef struct tschunk_segment_writer tschunk_segment_writer;
typedef struct tschunk_segment tschunk_segment;

/* What a segment's timestamps count (recorded in the header; the library never converts). */
typedef enum {
    TSCHUNK_UNIT_UNSPECIFIED = 0,
    TSCHUNK_UNIT_S = 1,
    TSCHUNK_UNIT_MS = 2,
    TSCHUNK_UNIT_US = 3,
    TSCHUNK_UNIT_NS = 4
} tschunk_ts_unit;

typedef struct {
    int64_t min_ts;                   /* the segment's minimum timestamp: earlier chunks are refused */
    uint32_t has_summaries;           /* every chunk carries a summary blob of this mapping */
    tschunk_mapping_kind summary_mapping;
    double summary_gamma, summary_offset;
    tschunk_allocator allocator;      /* NULL functions: malloc/free */
    tschunk_ts_unit ts_unit;          /* recorded in the header, for readers */
    uint32_t summary_block_chunks;    /* with summaries: a combined summary per this many consecutive chunks
                                         of a series, for range queries (0: 64; 1: none) */
} tschunk_segment_options;

/**
 * Start writing a segment to `path` (not empty; through a temporary file renamed by
 * finish, so the final path never holds a torn file: `path.tmp.PID`, or `path.tmp.PID.K` for the first free K,
 * created exclusively since 0.52.1, so writers of one path at once each have their own and no link is
 * followed). A file it replaces gives the new one its permission bits, and its owner and group as far as the
 * process may set them (0.55.1; a new file has the umask's default), as for delete, compaction and merge to a
 * path. Memory: the index and the series table, not the chunks. opts NULL: defaults (zeros; NULL was
 * BAD_PARAMETER before 0.48.0).
 * The rename replaces `path` itself, as rename(2) does: a symbolic link there becomes the file (the CLI
 * resolves links first), and the same holds for delete, compaction and merge to a path.
 * @return 0, BAD_PARAMETER (with has_summaries: a summary mapping that is not one, as tschunk_sketch_create_mapping
 * refuses it; since 0.49.2), ALLOCATION, or GENERIC when the file cannot be created.
 */
TSCHUNK_API size_t tschunk_segment_writer_create(tschunk_segment_writer **w, const char *path,
                                                 const tschunk_segment_options *opts);
/**
 * Where a segment goes when the library is not to name a file: a buffer, a file the caller opened, an upload.
 * write_at writes n bytes at byte offset `at`; read_at reads n bytes back from `at`. Each returns 0, or
 * non-zero for a failure (the call then fails with GENERIC). The writer writes the records in order from
 * offset 48 and, at finish, the block summaries (with summaries on: read_at fetches the chunks' summaries
 * back), the series table, index, fences and footer after them, then the 48-byte header at offset 0.
 */
typedef struct {
    int (*write_at)(void *ctx, const void *data, size_t n, uint64_t at);
    int (*read_at)(void *ctx, void *data, size_t n, uint64_t at);
    void *ctx;
} tschunk_segment_io;

/**
 * Start writing a segment through io (copied) instead of to a path: as tschunk_segment_writer_create, but
 * finish neither syncs nor renames (the bytes are the caller's), and abort leaves what was written.
 * @return 0, BAD_PARAMETER (no write_at or read_at), ALLOCATION, or GENERIC when the first write fails.
 */
TSCHUNK_API size_t tschunk_segment_writer_create_io(tschunk_segment_writer **w, const tschunk_segment_io *io,
                                                    const tschunk_segment_options *opts);
/**
 * Name a series (optional; any time before finish). A name names one series and a series takes one name (readers
 * find series by name: a second series of the same name would be found or merged in its place); naming a series
 * again with its own name does nothing, and an empty name is no name (since 0.49.3; a later name replaced an earlier
 * one, and names could repeat).
 * @return 0, BAD_PARAMETER (name over 4 KiB, a name another series has, another name for a named series),
 * ALLOCATION. A refused call changes nothing.
 */
TSCHUNK_API size_t tschunk_segment_writer_add_series(tschunk_segment_writer *w, uint64_t series_id, const char *name,
                                                     size_t name_len);
/**
 * Add a native chunk of a series, in any order; it is validated and decoded
 * once to find its last timestamp. A summary is given exactly when the segment
 * has summaries (has_summaries), and must be this chunk's
 * (tschunk_encoder_write_summary: same count and time range). Chunks added in
 * index order (by series, then time) cost the fewest index bytes.
 * @return 0, or the chunk's decode error, BAD_PARAMETER (before min_ts, empty, summary missing, given to
 * a segment without summaries, or one of another chunk), NOT_MERGEABLE or the sketch's decode error (a summary
 * whose sketch is not of the options' mapping, or does not decode: checked here since 0.49.2), ALLOCATION,
 * GENERIC (write error). A refused chunk is not added (after ALLOCATION the writer can go on, or be aborted).
 */
TSCHUNK_API size_t tschunk_segment_writer_add_chunk(tschunk_segment_writer *w, uint64_t series_id, const void *chunk,
                                                    size_t chunk_size, const void *summary, size_t summary_size);
/**
 * Write the stored block summaries (with summaries: the chunks' summaries read back and combined per
 * summary_block_chunks consecutive chunks of a series), series table, index, fences and footer, then
 * flush, fsync, rename, and fsync the directory (through io: the header last, no sync); frees w. Every summary was
 * checked when added (before 0.49.2 here, and only those that a block summary combined). Once it returns the size,
 * the file and its name survive a power loss (the directory's sync since 0.52.0: before, a crash soon after could
 * leave the old file or none under path); delete, compaction and merge to a path commit the same way.
 * @return the file size or an error; GENERIC with the file in place and whole when only the directory's sync
 * failed (errno says why; a file system that cannot sync a directory is not a failure).
 */
TSCHUNK_API size_t tschunk_segment_writer_finish(tschunk_segment_writer *w);
/** Give up: remove the temporary file (through io: leave what was written) and free w. */
TSCHUNK_API void tschunk_segment_writer_abort(tschunk_segment_writer *w);

#define TSCHUNK_SEGMENT_VERIFY 0x1u /* open checks every chunk record's checksum too */
/* Open for point lookups (segment format v2; ignored for v1): open checks header, footer, fences,
 * series bitmap and tombstones only, allocates no index, and each call reads and checks just the
 * 64-series or 64-chunk blocks it needs. Same answers and errors as a full open. A scan of many chunks
 * reads them through tschunk_segment_chunks, which parses each block once (tschunk_segment_chunk parses
 * a chunk's block again at every call). It remembers each parsed index block's largest last timestamp (8 bytes
 * a block of 64 chunks, allocated at open; atomic stores, so the segment stays shareable between threads), so
 * that tschunk_segment_range passes over the blocks it knows end before its start (0.41.1). */
#define TSCHUNK_SEGMENT_LAZY 0x2u

/**
 * Open a segment held in caller memory (which must outlive the segment). Checks
 * header, footer and the metadata checksum, and parses the index (allocated
 * through the allocator; chunk bytes stay where they are), unless TSCHUNK_SEGMENT_LAZY.
 * @return 0, TRUNCATED, BAD_MAGIC, BAD_VERSION, CORRUPT (a checksum or structure), ALLOCATION.
 */
TSCHUNK_API size_t tschunk_segment_open(tschunk_segment **seg, const void *data, size_t size, unsigned flags,
                                        const tschunk_allocator *allocator);
/**
 * Open a segment file: map it read-only (the mapping belongs to the segment; tschunk_segment_close unmaps it)
 * and open the mapping as tschunk_segment_open does (flags and allocator alike). The library replaces segment
 * files by rename only (writer, delete, compaction, merge), so an open segment keeps reading the bytes it was
 * opened on, whatever is renamed over its path later; like any mapping, a file cut short in place by someone else
 * while mapped would fault on access (SIGBUS). Since 0.49.0.
 * @return as tschunk_segment_open (an empty file: TRUNCATED), or GENERIC when the file cannot be opened or mapped
 * or is not a regular file (errno tells why: ENOENT, EACCES, EISDIR; EINVAL for a FIFO, socket or device).
 */
TSCHUNK_API size_t tschunk_segment_open_file(tschunk_segment **seg, const char *path, unsigned flags,
                                             const tschunk_allocator *allocator);
TSCHUNK_API void tschunk_segment_close(tschunk_segment *seg);

typedef struct {
    int64_t min_ts;
    tschunk_ts_unit ts_unit;
    uint32_t series, chunks;
    uint64_t samples;         /* as written, deleted ones included */
    uint64_t deleted;         /* samples deleted by tschunk_segment_delete */
    uint32_t has_summaries;
    tschunk_mapping_kind summary_mapping;
    double summary_gamma, summary_offset;
    uint32_t format_version;  /* the segment format: 1, 2 or 3 */
    uint32_t summary_blocks;  /* stored block summaries (format v2, with summaries) */
} tschunk_segment_info;

TSCHUNK_API void tschunk_segment_get_info(const tschunk_segment *seg, tschunk_segment_info *info);

/** Series by ordinal (0 .. series-1, ascending id). name points into the segment. @return 0 or BAD_PARAMETER. */
TSCHUNK_API size_t tschunk_segment_series(const tschunk_segment *seg, uint32_t ordinal, uint64_t *series_id,
                                          const char **name, size_t *name_len);
/** @return the ordinal of a series id or of a name (binary search / scan), or BAD_PARAMETER when absent. */
TSCHUNK_API size_t tschunk_segment_find_series(const tschunk_segment *seg, uint64_t series_id);
TSCHUNK_API size_t tschunk_segment_find_series_name(const tschunk_segment *seg, const char *name, size_t name_len);

typedef struct {
    uint32_t ordinal;         /* series */
    uint32_t count;           /* samples in the chunk bytes, deleted ones included */
    uint32_t deleted;         /* of them deleted: read with tschunk_segment_decode, never ref.chunk alone */
    int64_t first_ts, last_ts;
    tschunk_chunk_ref ref;    /* chunk and summary bytes, in place; summary NULL when deleted > 0 (stale) */
} tschunk_segment_chunk_info;

/**
 * The index positions [*begin, *end) of the series' chunks that overlap
 * [from, to] (chunks are sorted by series, then time; from > to is an empty range, *begin == *end, since 0.49.3).
 * @return 0, BAD_PARAMETER, or (a lazy open, which reads the series' index blocks) CORRUPT.
 */
TSCHUNK_API size_t tschunk_segment_range(const tschunk_segment *seg, uint32_t ordinal, int64_t from, int64_t to,
                                         size_t *begin, size_t *end);
/**
 * Chunk i of the index, its record checksum verified (format 3: the records of its 64-entry index block,
 * hashed at the first read of any of them). @return 0, BAD_PARAMETER, CORRUPT.
 */
TSCHUNK_API size_t tschunk_segment_chunk(const tschunk_segment *seg, size_t i, tschunk_segment_chunk_info *out);
/**
 * Chunks first .. first + count - 1 of the index into out[0 .. count - 1], as tschunk_segment_chunk gives each,
 * with each 64-entry index block read once: a series' chunks, or a whole segment, read through a lazy open
 * (which otherwise reads and checks a chunk's block again at every tschunk_segment_chunk) as fast as through a
 * full one. @return 0, BAD_PARAMETER (a range past the index), or CORRUPT (out filled up to the broken chunk).
 */
TSCHUNK_API size_t tschunk_segment_chunks(const tschunk_segment *seg, size_t first, size_t count,
                                          tschunk_segment_chunk_info *out);

/**
 * Decode chunk i without its deleted samples. capacity >= the chunk's count
 * always suffices. @return the samples written, or an error.
 */
TSCHUNK_API size_t tschunk_segment_decode(const tschunk_segment *seg, size_t i, int64_t *ts, double *values,
                                          size_t capacity);

#define TSCHUNK_SEGMENT_ALL_SERIES UINT32_MAX

/**
 * tschunk_range_merge over the chunks of one series (or of every series with
 * TSCHUNK_SEGMENT_ALL_SERIES) that overlap [from, to]. A stored block summary
 * (format v2) answers for its chunks when the block lies wholly inside the
 * range and none of them has deletions, without touching their records.
 * Chunks with deletions are decoded without their deleted samples (their
 * summaries are stale). @return 0 or the first error.
 */
TSCHUNK_API size_t tschunk_segment_range_merge(const tschunk_segment *seg, uint32_t ordinal, int64_t from, int64_t to,
                                               struct tschunk_sketch *acc, tschunk_range_stats *stats);

/**
 * Delete the samples of a series with from <= ts <= to: writes the segment
 * again to `path` (temporary file and rename; path may be the file seg was
 * read from, which seg keeps reading) with those positions added to the
 * chunks' tombstones. Chunk records are copied unchanged.
 * @return 0, BAD_PARAMETER, GENERIC (file), ALLOCATION; *deleted (may be NULL) = samples newly deleted.
 */
TSCHUNK_API size_t tschunk_segment_delete(const tschunk_segment *seg, const char *path, uint32_t ordinal,
                                          int64_t from, int64_t to, uint64_t *deleted);
/**
 * The same through io (write_at only: the bytes before the tombstones, the new tombstones and the footer, in
 * order from offset 0; a caller whose target already holds seg's bytes may keep the first part). Nothing is
 * written when no sample is newly deleted (*deleted 0), as with a path.
 */
TSCHUNK_API size_t tschunk_segment_delete_io(const tschunk_segment *seg, const tschunk_segment_io *io, uint32_t ordinal,
                                             int64_t from, int64_t to, uint64_t *deleted);

typedef struct {
    uint64_t chunks_copied;    /* without deletions: record copied as it was, summary included */
    uint64_t chunks_rewritten; /* encoded again: with deletions (without them), or all of them when cut again */
    uint64_t chunks_dropped;   /* every sample deleted */
    uint64_t samples_dropped;  /* deleted samples gone for good */
    uint64_t chunks_written;   /* chunks in the new segment */
} tschunk_segment_compact_stats;

/**
 * Make deletes final: write the segment again to `path` (temporary file and rename; path may be the file seg
 * reads, which seg keeps reading) without its deleted samples and with no tombstones, so that every stored
 * block summary answers range queries again. Chunks without deletions are copied unchanged; chunks with some
 * are decoded without them and encoded again with their own codec (a new summary with the segment's mapping);
 * chunks left empty are dropped. Every series keeps its id and name (ordinals do not move), even one left
 * without chunks. Options (min_ts, unit, summary mapping and block size) are the source's; the result is
 * format v3, whatever the source's version. Memory: the writer's index and one chunk's samples. Where chunks of
 * a series overlap in time, one that lost its first samples sorts by its new first timestamp (index order).
 * @return the new file's size, or an error (BAD_PARAMETER, ALLOCATION, GENERIC for a file error, a chunk's
 * decode error, CORRUPT): path is then as it was. *stats (may be NULL) is zeroed on error.
 */
TSCHUNK_API size_t tschunk_segment_compact(const tschunk_segment *seg, const char *path,
                                           tschunk_segment_compact_stats *stats);
/** The same through io (tschunk_segment_writer_create_io): the bytes the path form writes, nothing renamed. */
TSCHUNK_API size_t tschunk_segment_compact_io(const tschunk_segment *seg, const tschunk_segment_io *io,
                                              tschunk_segment_compact_stats *stats);

/* Series are the same when their names are (not their ids: segments written with ids of their own, as the CLI's,
 * which numbers series in order of appearance); the merged segment numbers them 0, 1, ... in bytewise name
 * order. Every series must be named. */
#define TSCHUNK_MERGE_BY_NAME 0x1u

typedef struct {
    uint32_t summary_block_chunks; /* as in tschunk_segment_options (0: 64; 1: none) */
    uint32_t flags;                /* 0 or TSCHUNK_MERGE_BY_NAME */
    uint32_t samples_per_chunk;    /* 0: chunks kept as they are; else each series' live samples cut again into
                                      chunks of this many (1 .. TSCHUNK_MAX_SAMPLES; time going back starts a new
                                      one), each with a new summary: fewer, longer chunks */
    uint32_t codec;                /* with samples_per_chunk: the new chunks' codec (0: TSCHUNK_CODEC_TSC2) */
} tschunk_segment_merge_options;

/**
 * Merge n >= 1 segments into one at `path`, as a TSDB compacts short blocks into a longer one, their deletes made
 * final as tschunk_segment_compact makes them. A series id held by several sources is one series, its chunks
 * from all of them (overlapping in time is allowed, as in any segment); its name is the first non-empty one
 * among the sources, and a different non-empty name in another is NOT_MERGEABLE. The sources must share their
 * timestamp unit and summary mapping (or all have no summaries), else NOT_MERGEABLE; min_ts is the least of
 * theirs. The sources are read, never changed (path may be one of their files). opts NULL: defaults (zeros).
 * @return as tschunk_segment_compact (BAD_PARAMETER also for options out of range and an unnamed series with
 * TSCHUNK_MERGE_BY_NAME); *stats sums over the sources.
 */
TSCHUNK_API size_t tschunk_segment_merge(const tschunk_segment *const *segs, size_t n, const char *path,
                                         const tschunk_segment_merge_options *opts,
                                         tschunk_segment_compact_stats *stats);
/** The same through io (tschunk_segment_writer_create_io): the bytes the path form writes, nothing renamed. */
TSCHUNK_API size_t tschunk_segment_merge_io(const tschunk_segment *const *segs, size_t n, const tschunk_segment_io *io,
                                            const tschunk_segment_merge_options *opts,
                                            tschunk_segment_compact_stats *stats);

/** The series bitmap (portable roaring: ordinals holding chunks), validated, in place. */
TSCHUNK_API void tschunk_segment_series_bitmap(const tschunk_segment *seg, const void **blob, size_t *size);

/**
 * Check everything: header, footer, metadata, every chunk record's checksum
 * and structure, every chunk decoded (its count and time range against its
 * index entry), every summary. @return 0 or the first error, with
 * *bad_offset (when not NULL) at the broken part.
 */
TSCHUNK_API size_t tschunk_segment_verify(const void *data, size_t size, size_t *bad_offset);

/**
 * Transcode a Prometheus XOR chunk into a native chunk, bit-exact on samples.
 * dst of TSCHUNK_BOUND(count) bytes always suffices.
 * @return the native chunk size, OUT_OF_ORDER when the Prometheus chunk's
 *         time goes backwards (native chunks refuse that), or a decode error.
 */
TSCHUNK_API size_t tschunk_prom_to_native(const void *prom, size_t prom_size, void *dst, size_t capacity);

/**
 * Transcode a native chunk into the bytes Prometheus would write for its
 * samples. dst of TSCHUNK_PROM_BOUND(count) bytes always suffices.
 * @return the Prometheus chunk size or an error.
 */
TSCHUNK_API size_t tschunk_native_to_prom(const void *chunk, size_t size, void *dst, size_t capacity);

/* ------------------------------------------------------------------------
 * Static linking only (as zstd's ZSTD_STATIC_LINKING_ONLY): define
 * TSCHUNK_STATIC_LINKING_ONLY before including this header to get an append
 * and iterator steps inlined into the caller's loop. They read and write the
 * encoder's and iterators' private fields, so a program using them is tied to
 * this release's layouts: link it with this release's libtschunk.a (or
 * rebuild it with each release). A layout change renames the function the
 * inline code falls back to (TSCHUNK_ENCODER_LAYOUT, TSCHUNK_ITER_LAYOUT), so
 * a mismatch fails to link instead of corrupting chunks or samples.
 * ---------------------------------------------------------------------- */
#if defined(TSCHUNK_STATIC_LINKING_ONLY) && !defined(TSCHUNK_H_STATIC_LINKING_ONLY)
#define TSCHUNK_H_STATIC_LINKING_ONLY

#define TSCHUNK_ENCODER_LAYOUT 2

/** tschunk_append_bits under the name of this release's encoder layout: tschunk_append_inline's slow path. */
TSCHUNK_API size_t tschunk_append_bits_layout2(tschunk_encoder *enc, int64_t ts, uint64_t value_bits);

/**
 * As tschunk_append, same bytes, same errors, transactional; codec 2's
 * common case (the sample joins the open group raw, in order, within every
 * limit and not the one that fills the group) inlined: no call, about half a
 * nanosecond a sample on the timestamped files (README "Targets: where each
 * stands"; bench/MEASUREMENTS.md, "An inline append").
 * Everything else (codec 1, the first samples, a full group, limits, errors)
 * is the library's tschunk_append_bits_layout2.
 */
static inline size_t tschunk_append_inline(tschunk_encoder *enc, int64_t ts, double value)
{
    uint64_t bits;
    memcpy(&bits, &value, sizeof bits);
#if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    /* The library's fast path (lib/chunk/encoder.c, append_grouped): the raw slot is little-endian, and
     * fast_end <= TSCHUNK_GROUP_SAMPLES, so pending + 1 < fast_end also says that the open group does not
     * fill with this sample. */
    if (enc->codec == TSCHUNK_CODEC_TSC2 && enc->c2.pending + 1 < enc->c2.fast_end && ts >= enc->prev_ts) {
        uint32_t pending = enc->c2.pending;
        uint8_t *slot = enc->dst + TSCHUNK_HEADER_MAX + enc->c2.group_end + 16 * (size_t)pending;
        memcpy(slot, &ts, sizeof ts);
        memcpy(slot + 8, &bits, sizeof bits);
        enc->prev_ts = ts;
        enc->c2.pending = pending + 1;
        return 0;
    }
#endif
    return tschunk_append_bits_layout2(enc, ts, bits);
}

#define TSCHUNK_ITER_LAYOUT 1

/** tschunk_iter_next_bits and tschunk_prom_iter_next_bits under the name of this release's iterator layouts:
 * the inline nexts' slow paths. */
TSCHUNK_API size_t tschunk_iter_next_bits_layout1(tschunk_iter *it, int64_t *ts, uint64_t *value_bits);
TSCHUNK_API size_t tschunk_prom_iter_next_bits_layout1(tschunk_prom_iter *it, int64_t *ts, uint64_t *value_bits);

/**
 * As tschunk_iter_next (0.42.1): the same samples and errors, a sample
 * already decoded into the iterator's buffer (codec 2's group, codec 1's
 * run) taken without a call: about 0.7 ns a sample less on codec 2
 * (bench/MEASUREMENTS.md, "Inline iterator steps"). Either pointer may be NULL.
 */
static inline size_t tschunk_iter_next_inline(tschunk_iter *it, int64_t *ts, double *value)
{
    uint64_t bits;
    uint32_t at = it->group_at;
    size_t r = 1;
    /* The library's fast path (lib/chunk/iterator.c, tschunk_iter_next_bits). */
    if (at < it->group_len && !(it->pending | it->error)) {
        it->group_at = at + 1;
        it->index++;
        it->ts = it->group_ts[at];
        it->bits = bits = it->group_bits[at];
        if (ts) *ts = it->ts;
    } else {
        r = tschunk_iter_next_bits_layout1(it, ts, &bits);
    }
    if (r == 1 && value) memcpy(value, &bits, sizeof bits);
    return r;
}

/** As tschunk_prom_iter_next (0.42.1), a sample of the run decoded ahead taken without a call: about 1 ns a
 * sample less. Either pointer may be NULL. */
static inline size_t tschunk_prom_iter_next_inline(tschunk_prom_iter *it, int64_t *ts, double *value)
{
    uint64_t bits;
    uint32_t at = it->run_at;
    size_t r = 1;
    /* The library's fast path (lib/prom/decoder.c, tschunk_prom_iter_next_bits). */
    if (at < it->run_len) {
        it->run_at = at + 1;
        bits = it->run_bits[at];
        if (ts) *ts = it->run_ts[at];
    } else {
        r = tschunk_prom_iter_next_bits_layout1(it, ts, &bits);
    }
    if (r == 1 && value) memcpy(value, &bits, sizeof bits);
    return r;
}
#endif /* TSCHUNK_STATIC_LINKING_ONLY */

#ifdef __cplusplus
}
#endif

#endif /* TSCHUNK_H */
