/* Chunk header: parse and check without decoding samples (info, validate). */
#include "format.h"
#include "../codec2/format.h"

static size_t bytes_for_bits(uint64_t bits) { return (size_t)((bits + 7) / 8); }

/* Stream sizes possible for `fields` fields of 1 to `max_bits` bits each. */
static int stream_size_ok(size_t bytes, uint64_t fields, unsigned max_bits)
{
    return bytes >= bytes_for_bits(fields) && bytes <= bytes_for_bits(fields * max_bits);
}

static size_t parse_samples(const uint8_t *src, size_t size, size_t pos, tsc_chunk_header *h)
{
    tschunk_chunk_info *info = &h->info;
    uint64_t v;
    size_t ts_start = pos;
    size_t err = tsc_take_uvarint(src, size, &pos, &v);
    if (err) return err;
    info->first_ts = tsc_unzigzag(v);
    info->ts_header_bytes = pos - ts_start;
    if (size - pos < 8) return TSC_ERROR(TRUNCATED);
    info->first_bits = tsc_load64_le(src + pos);
    pos += 8;
    if (info->count == 1) {
        if (info->flags) return TSC_ERROR(CORRUPT);
        info->header_bytes = pos;
        return pos == size ? 0 : TSC_ERROR(CORRUPT);
    }
    ts_start = pos;
    if ((err = tsc_take_uvarint(src, size, &pos, &info->first_delta))) return err;
    /* ts[1] must be a representable int64 at or after ts[0]. */
    if (info->first_delta > (uint64_t)INT64_MAX - (uint64_t)info->first_ts) return TSC_ERROR(CORRUPT);
    info->ts_header_bytes += pos - ts_start;
    if (info->count == 2 && !(info->flags & TSCHUNK_FLAG_TS_CONST)) return TSC_ERROR(CORRUPT);
    uint64_t tbytes = 0;
    if (!(info->flags & TSCHUNK_FLAG_TS_CONST)) {
        if ((err = tsc_take_uvarint(src, size, &pos, &tbytes))) return err;
        if (!stream_size_ok((size_t)tbytes, info->count - 2, 69)) return TSC_ERROR(CORRUPT);
    }
    if (tbytes > size - pos) return TSC_ERROR(TRUNCATED);
    size_t vbytes = size - pos - (size_t)tbytes;
    if (info->flags & TSCHUNK_FLAG_VAL_CONST) {
        if (vbytes) return TSC_ERROR(CORRUPT);
    } else {
        if (vbytes == 0) return TSC_ERROR(TRUNCATED);
        if (!stream_size_ok(vbytes, info->count - 1, 77)) return TSC_ERROR(CORRUPT);
    }
    info->header_bytes = pos;
    info->ts_bytes = (size_t)tbytes;
    info->value_bytes = vbytes;
    h->ts_offset = pos;
    h->value_offset = pos + (size_t)tbytes;
    return 0;
}

/* The header's first fields, checked: magic and version, codec, flags, the sample count; *pos past them. */
static size_t parse_lead(const uint8_t *src, size_t size, tschunk_chunk_info *info, size_t *pos)
{
    if (size && (src[0] >> 4) != TSC_MAGIC_NIBBLE) return TSC_ERROR(BAD_MAGIC);
    if (size < 3) return TSC_ERROR(TRUNCATED);
    info->version = src[0] & 0x0f;
    info->codec = src[1] & 0x0f;
    info->flags = src[1] >> 4;
    info->total_bytes = size;
    if (info->version == 0 || info->version > TSC_FORMAT_VERSION) return TSC_ERROR(BAD_VERSION);
    if (info->codec != TSCHUNK_CODEC_GORILLA && info->codec != TSCHUNK_CODEC_TSC2) return TSC_ERROR(BAD_CODEC);
    unsigned known = TSC_FLAGS_KNOWN | (info->codec == TSCHUNK_CODEC_TSC2 ? TSC2_FLAGS_KNOWN : 0);
    if (info->flags & ~known) return TSC_ERROR(RESERVED_BITS);
    *pos = 2;
    uint64_t count;
    size_t err = tsc_take_uvarint(src, size, pos, &count);
    if (err) return err;
    if (count > TSCHUNK_MAX_SAMPLES) return TSC_ERROR(CORRUPT);
    info->count = (uint32_t)count;
    info->header_bytes = *pos;
    if (count == 0 && (info->flags || *pos != size)) return TSC_ERROR(CORRUPT);
    return 0;
}

size_t tsc_chunk_parse(const uint8_t *src, size_t size, tsc_chunk_header *h, int walk)
{
    memset(h, 0, sizeof(*h));
    tschunk_chunk_info *info = &h->info;
    size_t pos, err = parse_lead(src, size, info, &pos);
    if (err || info->count == 0) return err;
    if (info->codec == TSCHUNK_CODEC_TSC2) {
        size_t err2 = tsc_codec2_parse_chunk(src, size, &pos, info, walk);
        h->ts_offset = h->value_offset = pos;
        return err2;
    }
    return parse_samples(src, size, pos, h);
}

size_t tsc_chunk_count(const uint8_t *src, size_t size)
{
    tschunk_chunk_info info;
    size_t pos, err = parse_lead(src, size, &info, &pos);
    return err ? err : info.count;
}

/* Codec 2 keeps no first value or delta in its header: decode them from the first group. */
static size_t first_samples(const void *chunk, size_t size, tschunk_chunk_info *info)
{
    tschunk_iter it;
    int64_t ts[2];
    double values[2];
    size_t r = tschunk_iter_init(&it, chunk, size);
    if (!r) r = tschunk_iter_read(&it, ts, values, 2);
    if (tsc_is_error(r)) return r;
    if (r == 0) return TSC_ERROR(CORRUPT); /* a count of 1 or more: the reader gives a sample or an error */
    info->first_bits = tsc_bits_of(values[0]);
    info->first_delta = r == 2 ? (uint64_t)ts[1] - (uint64_t)ts[0] : 0;
    return 0;
}

size_t tschunk_chunk_info_get(const void *chunk, size_t size, tschunk_chunk_info *info)
{
    if (!chunk || !info) return TSC_ERROR(BAD_PARAMETER);
    tsc_chunk_header h;
    size_t err = tsc_chunk_parse((const uint8_t *)chunk, size, &h, TSC_PARSE_ALL);
    if (err) return err;
    *info = h.info;
    return info->codec == TSCHUNK_CODEC_TSC2 && info->count ? first_samples(chunk, size, info) : 0;
}

/* Exactly info_get's checks (for codec 2 that includes decoding the first group, which may be damaged). */
size_t tschunk_validate(const void *chunk, size_t size)
{
    tschunk_chunk_info info;
    return tschunk_chunk_info_get(chunk, size, &info);
}
