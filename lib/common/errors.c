/* Error results and their names. */
#include "common.h"

unsigned tschunk_is_error(size_t result) { return (unsigned)tsc_is_error(result); }

tschunk_error_code tschunk_get_error_code(size_t result)
{
    return tsc_is_error(result) ? (tschunk_error_code)(0 - result) : TSCHUNK_OK;
}

const char *tschunk_error_string(tschunk_error_code code)
{
    switch (code) {
    case TSCHUNK_OK: return "no error";
    case TSCHUNK_ERROR_GENERIC: return "error (generic)";
    case TSCHUNK_ERROR_DST_TOO_SMALL: return "destination buffer is too small";
    case TSCHUNK_ERROR_CHUNK_FULL: return "chunk is full (max_samples or max_bytes)";
    case TSCHUNK_ERROR_OUT_OF_ORDER: return "timestamp is earlier than the previous one";
    case TSCHUNK_ERROR_TRUNCATED: return "input is truncated";
    case TSCHUNK_ERROR_BAD_MAGIC: return "not a tschunk chunk (bad magic)";
    case TSCHUNK_ERROR_BAD_VERSION: return "unsupported format version";
    case TSCHUNK_ERROR_BAD_CODEC: return "unknown codec id";
    case TSCHUNK_ERROR_RESERVED_BITS: return "reserved or padding bits are set";
    case TSCHUNK_ERROR_CORRUPT: return "corrupt data";
    case TSCHUNK_ERROR_BAD_PARAMETER: return "bad parameter";
    case TSCHUNK_ERROR_STAGE: return "call not valid at this stage";
    case TSCHUNK_ERROR_TOO_MANY_SAMPLES: return "too many samples for one chunk";
    case TSCHUNK_ERROR_NOT_MERGEABLE:
        return "not mergeable (sketch mappings, or segment units, mappings or names differ)";
    case TSCHUNK_ERROR_UNTRACKABLE: return "value or weight cannot be tracked (NaN, infinite or out of range)";
    case TSCHUNK_ERROR_ALLOCATION: return "allocation failed";
    case TSCHUNK_ERROR_MAX_CODE: break;
    }
    return "unknown error";
}

const char *tschunk_error_name(size_t result)
{
    return tschunk_error_string(tschunk_get_error_code(result));
}
