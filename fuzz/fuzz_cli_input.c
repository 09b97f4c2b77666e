/*
 * The CLI's input readers on arbitrary bytes (tools/csv.c and tools/file.c, compiled into the harness): CSV
 * lines (one, two or three columns, a header or none, --wide tables) in every timestamp unit, and chunk files
 * (0.1's TSCF records, Prometheus records). Nothing may crash, overflow or read outside the input; every value
 * read prints (format_value) as text that parses back to the same bits (a NaN to a NaN), as the search by precision
 * prints it, every timestamp read prints as an ISO date-time that parses back to itself, and each reader stops
 * within as many steps as the input has bytes; a --q list is accepted only when it holds decimals in [0, 1]; a
 * series name quoted as decompress quotes it (0.29.2) splits back to itself; the text up to the first comma reads
 * as strtod and strtoll read it (0.50.8). First byte: bits 0-2 the unit (mod 5), bit 3 --wide, bit 4 a chunk file
 * instead of CSV.
 */
#define _POSIX_C_SOURCE 200809L
#include "../tools/csv.c"
#include "../tools/file.c"

#include "harness.h"

static void value_prints_back(uint64_t bits)
{
    char text[64];
    uint64_t back;
    format_value(text, sizeof text, bits);
    if (parse_value(text, &back) != 0) __builtin_trap();
    double value, read;
    memcpy(&value, &bits, 8);
    memcpy(&read, &back, 8);
    if (isnan(value) ? !isnan(read) : back != bits) __builtin_trap();
    char searched[64]; /* the short-decimal path prints what the search would (0.50.4) */
    format_value_searched(searched, sizeof searched, bits);
    if (!isnan(value) && !isinf(value) && strcmp(text, searched) != 0) __builtin_trap();
}

static void timestamp_prints_back(int64_t ts, int unit)
{
    char text[64];
    int64_t back;
    format_iso(text, sizeof text, ts, unit);
    /* Every one, since 0.50.11 years past 9999 and before 0 too (ISO 8601's signed expanded years). */
    if (parse_timestamp(text, unit, &back) != 0 || back != ts) __builtin_trap();
}

/* A series name, written as decompress writes it (quoted where it must be), splits back to one field, itself. */
static void name_reads_back(const char *name)
{
    static char text[2 * CSV_MAX_LINE + 2];
    size_t len = strlen(name), n = len;
    if (csv_needs_quotes(name, len)) n = csv_quote(name, len, text);
    else memcpy(text, name, len);
    text[n] = 0;
    char *fields[2];
    if (split(text, fields, 1) != 1 || strcmp(fields[0], name) != 0) __builtin_trap();
}

static void read_csv_bytes(const uint8_t *data, size_t size, int unit, int wide)
{
    if (size == 0) return;
    FILE *f = fmemopen((void *)(uintptr_t)data, size, "r");
    if (!f) return;
    csv_reader r;
    csv_init(&r, f, unit);
    int64_t ts;
    uint64_t bits;
    size_t rows = 0;
    if (wide) {
        char **cells;
        if (csv_wide_header(&r) == 0) {
            for (size_t c = 0; c + 1 < r.columns; c++)
                if (!*r.wide_names[c]) __builtin_trap(); /* the header's copy holds every name */
            while (csv_next_wide(&r, &ts, &cells) == 1) {
                if (++rows > size) __builtin_trap();
                timestamp_prints_back(ts, unit);
                for (size_t c = 0; c + 1 < r.columns; c++)
                    if (*cells[c] && parse_value(cells[c], &bits) == 0) value_prints_back(bits);
            }
        }
    } else {
        int got;
        while ((got = csv_next(&r, &ts, &bits)) == 1) {
            if (++rows > size) __builtin_trap();
            value_prints_back(bits);
            timestamp_prints_back(ts, unit);
            if (r.columns == 3) name_reads_back(r.series);
        }
        if (got < 0 && !r.error[0]) __builtin_trap(); /* a refused line says why */
    }
    csv_free(&r);
    fclose(f);
}

static int inside(const tscf_reader *r, const unsigned char *p, size_t len)
{
    return p >= r->data && len <= r->size && (size_t)(p - r->data) <= r->size - len;
}

static void read_chunk_file(const uint8_t *data, size_t size)
{
    unsigned char *copy = malloc(size ? size : 1);
    if (!copy) return;
    memcpy(copy, data, size);
    tscf_reader r;
    if (tscf_open_bytes(&r, copy, size, "input") == 0) {
        const unsigned char *chunk;
        size_t len, chunks = 0;
        int got;
        while ((got = tscf_next(&r, &chunk, &len)) == 1) {
            if (++chunks > size || !inside(&r, chunk, len)) __builtin_trap();
            if (r.summary && !inside(&r, r.summary, r.summary_size)) __builtin_trap();
        }
        if (got < 0 && !r.error[0]) __builtin_trap();
    } else if (!r.error[0]) {
        __builtin_trap();
    }
    tscf_close(&r); /* frees copy, opened or not */
}

/* The bytes as a --q list: accepted only when every comma-separated token is a decimal in [0, 1]. */
static void check_quantile_list(const uint8_t *data, size_t size)
{
    char list[600];
    size_t len = size < sizeof list - 1 ? size : sizeof list - 1;
    memcpy(list, data, len);
    list[len] = 0;
    if (!quantile_list_ok(list)) return;
    for (char *token = strtok(list, ","); token; token = strtok(NULL, ",")) {
        char *end;
        double q = strtod(token, &end);
        if (*end || !(q >= 0 && q <= 1)) __builtin_trap();
    }
}

/* The bytes up to a comma as a value and as a timestamp: the short paths (0.50.8) read what strtod and strtoll read. */
static void check_number_paths(const uint8_t *data, size_t size)
{
    char text[64];
    size_t len = 0;
    while (len < size && len < sizeof text - 1 && data[len] != ',' && data[len] != 0) len++;
    memcpy(text, data, len);
    text[len] = 0;
    double fast;
    if (parse_short_decimal(text, &fast)) {
        char *end;
        double slow = strtod(text, &end);
        if (*end || memcmp(&fast, &slow, 8) != 0) __builtin_trap();
    }
    int64_t ts;
    if (parse_timestamp(text, UNIT_MS, &ts) == 0) {
        char *end;
        errno = 0;
        long long slow = strtoll(text, &end, 10);
        if (!*end && end != text && (errno == ERANGE || slow != ts)) __builtin_trap();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    check_quantile_list(data + 1, size - 1);
    check_number_paths(data + 1, size - 1);
    int unit = data[0] % 8 % 5, wide = (data[0] >> 3) & 1;
    if (data[0] & 0x10) read_chunk_file(data + 1, size - 1);
    else read_csv_bytes(data + 1, size - 1, unit, wide);
    return 0;
}
