/*
 * Staged appends (include/tschunk.h, tschunk_stage): the push is inline in
 * the header; the flush hands the stage to an encoder's bulk append and keeps
 * what it refused, moved to the front, for the next chunk.
 */
#include "common.h"

/* The stage after `appended` of its samples went into a chunk. @return err. */
static size_t keep_refused(tschunk_stage *stage, size_t appended, size_t err)
{
    size_t left = stage->count - appended;
    if (appended && left) {
        memmove(stage->ts, stage->ts + appended, left * sizeof *stage->ts);
        memmove(stage->values, stage->values + appended, left * sizeof *stage->values);
    }
    stage->count = (uint32_t)left;
    return err;
}

size_t tschunk_stage_flush(tschunk_stage *stage, tschunk_encoder *enc)
{
    if (!stage || !enc || stage->count > TSCHUNK_STAGE_SAMPLES) return TSC_ERROR(BAD_PARAMETER);
    size_t appended = 0;
    size_t err = tschunk_append_many(enc, stage->ts, stage->values, stage->count, &appended);
    return keep_refused(stage, appended, err);
}

size_t tschunk_prom_stage_flush(tschunk_stage *stage, tschunk_prom_encoder *enc)
{
    if (!stage || !enc || stage->count > TSCHUNK_STAGE_SAMPLES) return TSC_ERROR(BAD_PARAMETER);
    size_t appended = 0;
    size_t err = tschunk_prom_append_many(enc, stage->ts, stage->values, stage->count, &appended);
    return keep_refused(stage, appended, err);
}
