/* CSV input and text output for the tschunk CLI. */
#ifndef TSCHUNK_CLI_CSV_H
#define TSCHUNK_CLI_CSV_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum ts_unit { UNIT_RAW = 0, UNIT_S = 1, UNIT_MS = 2, UNIT_US = 3, UNIT_NS = 4 };

/* @return the unit for "s", "ms", "us", "ns", or -1. */
int unit_parse(const char *name);
/* "s", "ms", "us", "ns", or "no unit" for the rest. */
const char *unit_name(int unit);

#define CSV_MAX_WIDE 1024       /* series columns of a --wide table */
#define CSV_MAX_LINE (1u << 20) /* bytes of a line: 1,024 columns of up to a KB */

typedef struct {
    FILE *in;
    int unit;            /* unit date-times are converted to */
    size_t line_no;      /* line last read */
    size_t columns;      /* 1, 2 or 3 (series,timestamp,value), fixed by the first data line; --wide: the header's */
    const char *series;  /* 3 columns: the series of the sample csv_next returned, in line[] */
    size_t skipped;      /* empty values skipped */
    int64_t next_implicit_ts;
    int header_checked;
    char other_separator; /* the first line is one field split by a tab or ';': named in a later error */
    char *in_buf;        /* what was read and not yet cut into lines: [in_start, in_end) */
    size_t in_cap, in_start, in_end;
    int in_eof;
    char *line;          /* the line being split: any length up to CSV_MAX_LINE */
    size_t line_cap, line_len; /* line_len: the last line's bytes (split leaves NULs inside) */
    char error[256];
    char *header;        /* --wide: a copy of the header line, holding the series names */
    char *wide_names[CSV_MAX_WIDE];
    char *wide_cells[CSV_MAX_WIDE + 2];
} csv_reader;

void csv_init(csv_reader *r, FILE *in, int unit);
/* Frees the line buffers (after the last use of names and cells, which point into them). */
void csv_free(csv_reader *r);

/* The next line as it is (its line break kept), for inputs that are not CSV samples. @return 1 with *line, 0 at
 * the end, -1 for a line past CSV_MAX_LINE, with a NUL byte, or a read error (r->error says why). */
int csv_next_line(csv_reader *r, char **line);

/* @return 1 with a sample, 0 at end of input, -1 on a malformed line (r->error says why). */
int csv_next(csv_reader *r, int64_t *ts, uint64_t *bits);

/* --wide: read the header line (timestamp column, then one named column per series). @return 0 or -1. */
int csv_wide_header(csv_reader *r);
/* --wide: the next row; cells[0 .. columns-2] are the series' value texts (empty: no sample). @return 1, 0, -1. */
int csv_next_wide(csv_reader *r, int64_t *ts, char ***cells);

/* Parse a value: decimal, NaN/Inf/-Inf, or 0x + 16 hex digits. @return 0 or -1. */
int parse_value(const char *s, uint64_t *bits);
/* s without the white space around it (cut in place). */
char *csv_trim(char *s);

/* A --q list: one or more decimal quantiles in [0, 1], comma-separated, under 500 characters. @return 1 or 0. */
int quantile_list_ok(const char *list);

/* What parse_timestamp refuses besides malformed text: a date-time with non-zero digits finer than the unit. */
#define TS_FINER_THAN_UNIT (-2)
/* Parse an int64 timestamp or a date-time converted to `unit`. @return 0, -1 (malformed, or outside the unit's
 * int64) or TS_FINER_THAN_UNIT (2024-01-01T00:00:00.5Z in seconds: dropping the .5 would move the sample). */
int parse_timestamp(const char *s, int unit, int64_t *out);

/* Whether a name must be quoted to be read back as one CSV field: a comma, a line break, a quote first, or spaces
 * at either end. Quotes inside are read as they are (cpu{host="a"} stays unquoted, as Prometheus names read best). */
int csv_needs_quotes(const char *s, size_t len);
/* The field quoted as RFC 4180 does (""), in out (room for 2 * len + 2 bytes, no terminator). @return its length. */
size_t csv_quote(const char *s, size_t len, char *out);

/* The value of a hex digit (either case), or -1. */
int hex_digit(int c);
/* Shortest decimal text that parses back to the same double (NaN, Inf, -Inf spelled so). */
void format_value(char *buf, size_t size, uint64_t bits);

/* v in decimal at p, no terminator (20 bytes at most). @return the end. */
char *put_int64(char *p, int64_t v);
/* bits as 0x and 16 lowercase hex digits at p, no terminator. @return the end. */
char *put_hex_bits(char *p, uint64_t bits);
/* ISO-8601 UTC text of a timestamp in `unit`. */
void format_iso(char *buf, size_t size, int64_t ts, int unit);

#endif
