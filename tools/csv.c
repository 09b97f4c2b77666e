/* CSV parsing and value/timestamp text for the CLI. Timestamps stay int64 throughout. */
#include "csv.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const unit_names[] = {"raw", "s", "ms", "us", "ns"};
static const int64_t units_per_second[] = {1, 1, 1000, 1000000, 1000000000};

int unit_parse(const char *name)
{
    for (int u = UNIT_S; u <= UNIT_NS; u++)
        if (strcmp(name, unit_names[u]) == 0) return u;
    return -1;
}

const char *unit_name(int unit)
{
    return unit > UNIT_RAW && unit <= UNIT_NS ? unit_names[unit] : "no unit";
}

void csv_init(csv_reader *r, FILE *in, int unit)
{
    memset(r, 0, sizeof(*r));
    r->in = in;
    r->unit = unit;
}

void csv_free(csv_reader *r)
{
    free(r->in_buf);
    free(r->line);
    free(r->header);
    r->in_buf = r->line = r->header = NULL;
    r->in_cap = r->line_cap = 0;
}

char *csv_trim(char *s)
{
    while (isspace((unsigned char)*s)) s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1])) s[--n] = 0;
    return s;
}

/*
 * The quoted field at p (at its opening quote), as RFC 4180 quotes one: commas inside, "" for a quote. Unquoted in
 * place; *next past the comma after it, NULL at the line's end. A field cannot span lines here, so a quote still
 * open at the line's end, or text after the closing quote, is malformed. @return the field or NULL.
 */
static char *unquote(char *p, char **next)
{
    char *field = p, *out = p, *in = p + 1;
    for (;; in++) {
        if (*in == 0 || *in == '\n') return NULL;
        if (*in == '"') {
            if (in[1] != '"') break;
            in++;
        }
        *out++ = *in;
    }
    for (in++; *in == ' ' || *in == '\t' || *in == '\r' || *in == '\n'; in++) continue;
    if (*in != ',' && *in != 0) return NULL;
    *next = *in == ',' ? in + 1 : NULL;
    *out = 0; /* after the last read: out never passes in */
    return field;
}

int csv_needs_quotes(const char *s, size_t len)
{
    if (len && (s[0] == '"' || isspace((unsigned char)s[0]) || isspace((unsigned char)s[len - 1]))) return 1;
    for (size_t i = 0; i < len; i++)
        if (s[i] == ',' || s[i] == '\n' || s[i] == '\r') return 1;
    return 0;
}

size_t csv_quote(const char *s, size_t len, char *out)
{
    size_t n = 0;
    out[n++] = '"';
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '"') out[n++] = '"';
        out[n++] = s[i];
    }
    out[n++] = '"';
    return n;
}

int hex_digit(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/*
 * A plain decimal of up to 15 digits ([+-]digits[.digits], the text most CSV values are) as strtod reads it, without
 * strtod: its digits make an integer I below 10^15 and its k decimals a power 10^k, both exact doubles, and one
 * division rounds I / 10^k correctly, as strtod rounds the decimal (Clinger's fast path). @return 1 when s is such
 * a decimal, else 0 (strtod reads the rest).
 */
static int parse_short_decimal(const char *s, double *out)
{
    static const double pow10[] = {1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
    int negative = *s == '-';
    s += *s == '-' || *s == '+';
    uint64_t integer = 0;
    int digits = 0, decimals = -1; /* -1: no point yet */
    for (; *s; s++) {
        if (*s == '.' && decimals < 0) decimals = 0;
        else if (*s >= '0' && *s <= '9' && digits < 15) {
            integer = integer * 10 + (uint64_t)(*s - '0');
            digits++;
            decimals += decimals >= 0;
        } else return 0; /* anything else, or a 16th digit */
    }
    if (!digits) return 0;
    double magnitude = (double)integer / pow10[decimals > 0 ? decimals : 0];
    *out = negative ? -magnitude : magnitude;
    return 1;
}

int parse_value(const char *s, uint64_t *bits)
{
    double d;
    if (parse_short_decimal(s, &d)) {
        memcpy(bits, &d, 8);
        return 0;
    }
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        uint64_t v = 0;
        for (int i = 0; i < 16; i++) {
            int h = hex_digit((unsigned char)s[2 + i]);
            if (h < 0) return -1;
            v = v << 4 | (uint64_t)h;
        }
        if (s[18] != 0) return -1;
        *bits = v;
        return 0;
    }
    char *end;
    errno = 0;
    d = strtod(s, &end);
    if (end == s || *end != 0) return -1;
    /* strtod accepts C99 hex floats and "nan(...)"; keep to decimals and the names. */
    for (const char *p = s; *p; p++)
        if (*p == 'x' || *p == 'X' || *p == '(') return -1;
    if (isnan(d)) d = NAN; /* "NaN" and "-NaN" both mean the canonical quiet NaN */
    memcpy(bits, &d, 8);
    return 0;
}

int quantile_list_ok(const char *list)
{
    if (!*list || strlen(list) >= 500) return 0; /* the printers copy it into 512 bytes */
    for (const char *p = list;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char token[64], *end;
        if (len == 0 || len >= sizeof token) return 0;
        memcpy(token, p, len);
        token[len] = 0;
        double q = strtod(token, &end);
        /* Decimals only (no hex floats, nan or inf): a token is also printed as a JSON key. */
        if (*end || strpbrk(token, "xXnNiI(") || !(q >= 0 && q <= 1)) return 0;
        if (!comma) return 1;
        p = comma + 1;
    }
}

/* Days since 1970-01-01 of a proleptic Gregorian date (Hinnant's days_from_civil). */
static int64_t days_from_civil(int64_t y, int64_t m, int64_t d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static int read_digits(const char **p, int n, int64_t *out)
{
    int64_t v = 0;
    for (int i = 0; i < n; i++) {
        if (!isdigit((unsigned char)(*p)[i])) return -1;
        v = v * 10 + ((*p)[i] - '0');
    }
    *p += n;
    *out = v;
    return 0;
}

/* "YYYY", or ISO 8601's expanded year, a sign and 4 to 12 digits (astronomical: -0001 is 2 BC), the years int64
 * seconds reach; the text format_iso writes for years past 9999 and before 0. */
static int read_year(const char **p, int64_t *out)
{
    int sign = **p == '-' ? -1 : **p == '+' ? 1 : 0;
    *p += sign != 0;
    int digits = 0;
    while (digits < 13 && isdigit((unsigned char)(*p)[digits])) digits++;
    if (sign ? digits < 4 || digits > 12 : digits != 4) return -1;
    if (read_digits(p, digits, out)) return -1;
    *out *= sign < 0 ? -1 : 1;
    return 0;
}

/* Seconds since the epoch of a day and a local time of day at an offset. Days before 1970 start from the next
 * midnight, so that the last second int64 holds is reached without passing through a value it cannot hold.
 * @return 0, or -1 past int64. */
static int day_seconds(int64_t days, int64_t time_of_day, int64_t offset_s, int64_t *out)
{
    int64_t midnight;
    if (days < 0) days++, time_of_day -= 86400;
    if (__builtin_mul_overflow(days, 86400, &midnight) || __builtin_add_overflow(midnight, time_of_day, out) ||
        __builtin_sub_overflow(*out, offset_s, out))
        return -1;
    return 0;
}

static int days_in_month(int64_t y, int64_t m)
{
    static const int days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return days[m - 1] + (m == 2 && leap);
}

/*
 * "YYYY-MM-DD[ Tt]HH:MM[:SS[.fff...]][Zz|+HH:MM|-HH:MM]" -> unit (RFC 3339 allows the lower-case letters; YYYY may be
 * an expanded year, "+10000" or "-0001", see read_year), or a date
 * alone, "YYYY-MM-DD", its midnight UTC (daily series are written so; ISO 8601's calendar date). A day
 * past its month's end is refused, not carried into the next month. Second 60 is taken only where a leap second
 * can be, 23:59:60 UTC, and reads as the next second: POSIX time, like every int64 epoch here, counts none.
 */
static int parse_datetime(const char *s, int unit, int64_t *out)
{
    int64_t y, mo, d, h, mi, se, frac_units = 0;
    int finer = 0;
    const char *p = s;
    if (read_year(&p, &y) || *p++ != '-' || read_digits(&p, 2, &mo) || *p++ != '-' || read_digits(&p, 2, &d))
        return -1;
    h = mi = se = 0;
    if (*p) {
        if (*p != ' ' && *p != 'T' && *p != 't') return -1;
        p++;
        if (read_digits(&p, 2, &h) || *p++ != ':' || read_digits(&p, 2, &mi)) return -1;
        /* Seconds may be left out (ISO 8601's reduced precision, "2024-01-01 00:15", as many exports write), and
         * then a fraction may not follow. */
        if (*p == ':' ? (p++, read_digits(&p, 2, &se)) : *p == '.') return -1;
    }
    if (mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo) || h > 23 || mi > 59 || se > 60) return -1;
    int64_t per_s = units_per_second[unit];
    if (*p == '.') {
        p++;
        int64_t scale = per_s;
        if (!isdigit((unsigned char)*p)) return -1;
        while (isdigit((unsigned char)*p)) {
            scale /= 10;
            frac_units += (*p - '0') * scale;
            finer |= scale == 0 && *p != '0'; /* a digit the unit cannot hold, known once the text is well-formed */
            p++;
        }
    }
    int64_t offset_s = 0;
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        int sign = *p++ == '-' ? -1 : 1;
        int64_t oh, om = 0;
        if (read_digits(&p, 2, &oh)) return -1;
        if (*p == ':') p++;
        if (*p && read_digits(&p, 2, &om)) return -1;
        if (oh > 23 || om > 59) return -1;
        offset_s = sign * (oh * 3600 + om * 60);
    }
    if (*p) return -1;
    if (se == 60 && ((h * 60 + mi - offset_s / 60) % 1440 + 1440) % 1440 != 23 * 60 + 59) return -1;
    int64_t secs;
    if (day_seconds(days_from_civil(y, mo, d), h * 3600 + mi * 60 + se, offset_s, &secs)) return -1;
    /* A time the unit's int64 cannot hold (past 2262 in ns) is refused, not wrapped. Before 1970 the fraction is
     * taken from the next second, so that the first second int64 reaches only in part (INT64_MIN ns) still reads. */
    if (secs < 0 && frac_units > 0) {
        secs += 1;
        frac_units -= per_s;
    }
    int64_t whole;
    if (__builtin_mul_overflow(secs, per_s, &whole) || __builtin_add_overflow(whole, frac_units, out)) return -1;
    return finer ? TS_FINER_THAN_UNIT : 0;
}

int parse_timestamp(const char *s, int unit, int64_t *out)
{
    const char *digit = s + (*s == '-' || *s == '+');
    uint64_t magnitude = 0;
    int n = 0;
    for (; *digit >= '0' && *digit <= '9' && n < 18; digit++, n++)
        magnitude = magnitude * 10 + (uint64_t)(*digit - '0');
    if (n && !*digit) { /* up to 18 digits, as strtoll reads them (the rest, and date-times, below) */
        *out = *s == '-' ? -(int64_t)magnitude : (int64_t)magnitude;
        return 0;
    }
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end != s && *end == 0) {
        if (errno == ERANGE) return -1;
        *out = (int64_t)v;
        return 0;
    }
    return parse_datetime(s, unit == UNIT_RAW ? UNIT_MS : unit, out);
}

/* Split on commas: quoted fields unquoted (RFC 4180), the others trimmed. @return the field count, max + 1 for too
 * many, -1 for a malformed quoted field. */
static int split(char *line, char **fields, int max)
{
    int n = 0;
    char *p = line;
    while (n < max) {
        while (*p == ' ' || *p == '\t') p++;
        char *next;
        if (*p == '"') {
            if (!(fields[n++] = unquote(p, &next))) return -1;
        } else {
            next = strchr(p, ',');
            if (next) *next++ = 0;
            fields[n++] = csv_trim(p);
        }
        if (!next) return n;
        p = next;
    }
    return max + 1; /* too many */
}

/* A first line is a header when its timestamp (or, with one column, its value)
 * is not data; a malformed data line is reported, not skipped as a header. */
static int looks_like_header(char **fields, int n, int unit)
{
    int64_t ts;
    uint64_t bits;
    if (n >= 2) {
        const char *t = fields[n - 2];
        return parse_timestamp(t, unit, &ts) != 0 && !isdigit((unsigned char)t[0]);
    }
    return *fields[0] && parse_value(fields[0], &bits) != 0 && isalpha((unsigned char)fields[0][0]);
}

enum { LINE_END = -1, LINE_TOO_LONG = -2, LINE_NO_MEMORY = -3, LINE_NUL = -4 };

#define CSV_READ_CHUNK 65536u

static int grow_to(char **buf, size_t *cap, size_t need)
{
    if (need <= *cap) return 0;
    size_t size = *cap ? *cap : 8192;
    while (size < need) size *= 2;
    char *grown = realloc(*buf, size);
    if (!grown) return -1;
    *buf = grown;
    *cap = size;
    return 0;
}

/*
 * The next line into r->line, NUL-terminated, its line break kept. Lines are cut from a read buffer with memchr,
 * so a NUL byte inside one is seen (fgets could not tell it from its own end and would drop what follows), and
 * both buffers stay within CSV_MAX_LINE plus a read, whatever the input. @return the length, or a LINE_ code.
 */
static long read_line(csv_reader *r)
{
    for (;;) {
        size_t avail = r->in_end - r->in_start;
        char *at = avail ? r->in_buf + r->in_start : NULL; /* no arithmetic on the first call's NULL */
        char *nl = avail ? memchr(at, '\n', avail) : NULL;
        if (nl || (r->in_eof && avail)) {
            size_t len = nl ? (size_t)(nl - at) + 1 : avail;
            if (len > CSV_MAX_LINE) return LINE_TOO_LONG;
            if (grow_to(&r->line, &r->line_cap, len + 1)) return LINE_NO_MEMORY;
            memcpy(r->line, at, len);
            r->line[len] = 0;
            r->in_start += len;
            return memchr(r->line, 0, len) ? LINE_NUL : (long)len;
        }
        if (r->in_eof) return LINE_END;
        if (avail > CSV_MAX_LINE) return LINE_TOO_LONG;
        if (avail) memmove(r->in_buf, at, avail); /* the start of a line: read on after it */
        r->in_start = 0;
        r->in_end = avail;
        if (grow_to(&r->in_buf, &r->in_cap, avail + CSV_READ_CHUNK)) return LINE_NO_MEMORY;
        size_t got = fread(r->in_buf + avail, 1, r->in_cap - avail, r->in);
        r->in_end += got;
        r->in_eof = got == 0; /* end or error: next_fields asks ferror */
    }
}

int csv_next_line(csv_reader *r, char **line)
{
    long len = read_line(r);
    if (len == LINE_END) {
        if (!ferror(r->in)) return 0;
        snprintf(r->error, sizeof r->error, "read error after line %zu", r->line_no);
        return -1;
    }
    r->line_no++;
    if (len < 0) {
        /* On the first line a NUL byte is most likely a binary file given for a CSV: say so. */
        const char *nul = r->line_no == 1 ? "holds a NUL byte (a binary file? the input is CSV text)"
                                          : "holds a NUL byte";
        snprintf(r->error, sizeof r->error, "line %zu: %s", r->line_no,
                 len == LINE_NUL ? nul : len == LINE_NO_MEMORY ? "out of memory" : "longer than 1 MiB");
        return -1;
    }
    /* A UTF-8 byte order mark (spreadsheets write one) is not text: kept, it made a first data line look like a
     * header, dropped without a word. */
    if (r->line_no == 1 && len >= 3 && !memcmp(r->line, "\xef\xbb\xbf", 3)) {
        len -= 3;
        memmove(r->line, r->line + 3, (size_t)len + 1);
    }
    r->line_len = (size_t)len;
    *line = r->line;
    return 1;
}

/* The next non-blank line, split. @return the field count, 0 at end, -1 on error. */
static int next_fields(csv_reader *r, char **fields, int max)
{
    char *line;
    int got;
    while ((got = csv_next_line(r, &line)) == 1) {
        int n = split(line, fields, max);
        if (n < 0) {
            snprintf(r->error, sizeof r->error, "line %zu: a quoted field is not closed on its line, or text follows "
                     "its closing quote", r->line_no);
            return -1;
        }
        if (n == 1 && *fields[0] == 0 && r->columns != 1) continue; /* blank line */
        return n;
    }
    return got;
}

/* A number with a point or an exponent (fractional Unix seconds, as time.time() gives them)? */
static int looks_decimal(const char *text)
{
    char *end;
    (void)strtod(text, &end);
    return end != text && !*end && strpbrk(text, ".eE") != NULL;
}

/* The reader's error for a timestamp parse_timestamp refused on the current line. @return -1. */
static int refuse_timestamp(csv_reader *r, const char *text, int refusal)
{
    int unit = r->unit == UNIT_RAW ? UNIT_MS : r->unit; /* date-times in a unitless file read as ms */
    if (refusal == TS_FINER_THAN_UNIT && unit == UNIT_NS)
        snprintf(r->error, sizeof r->error, "line %zu: timestamp '%.60s' has digits finer than a nanosecond",
                 r->line_no, text);
    else if (refusal == TS_FINER_THAN_UNIT)
        snprintf(r->error, sizeof r->error, "line %zu: timestamp '%.60s' has digits finer than the timestamp unit, %s "
                 "(give a finer --ts-unit, or fewer digits)", r->line_no, text, unit_name(unit));
    else if (looks_decimal(text))
        snprintf(r->error, sizeof r->error, "line %zu: bad timestamp '%.60s': a timestamp is an integer in the "
                 "timestamp unit, or a date-time, not a decimal", r->line_no, text);
    else snprintf(r->error, sizeof r->error, "line %zu: bad timestamp '%.60s'", r->line_no, text);
    return -1;
}

/* A tab or ';' inside the first line's one field: the file is likely split by it (a TSV, a spreadsheet's export
 * where the comma is the decimal point). Only named when the file then fails, since such a field may be a header. */
static void note_separator(csv_reader *r, char *const *fields, int n)
{
    if (n == 1) r->other_separator = strchr(fields[0], '\t') ? '\t' : strchr(fields[0], ';') ? ';' : 0;
}

/* The reader's error, with what the first line suggests. @return -1. */
static int refuse_line(csv_reader *r)
{
    size_t len = strlen(r->error);
    if (r->other_separator)
        snprintf(r->error + len, sizeof r->error - len, " (the first line is split by %s, not commas: the input is "
                 "comma-separated values)", r->other_separator == ';' ? "';'" : "tabs");
    return -1;
}

static int read_sample(csv_reader *r, int64_t *ts, uint64_t *bits);

int csv_next(csv_reader *r, int64_t *ts, uint64_t *bits)
{
    int got = read_sample(r, ts, bits);
    return got < 0 ? refuse_line(r) : got;
}

static int read_sample(csv_reader *r, int64_t *ts, uint64_t *bits)
{
    char *fields[4];
    int n;
    while ((n = next_fields(r, fields, 3)) > 0) {
        if (n > 3) {
            snprintf(r->error, sizeof r->error,
                     "line %zu: more than 3 columns (expected series,timestamp,value or timestamp,value or value; "
                     "--wide reads tables)", r->line_no);
            return -1;
        }
        if (!r->header_checked) {
            r->header_checked = 1;
            r->columns = (size_t)n;
            note_separator(r, fields, n);
            if (looks_like_header(fields, n, r->unit)) continue;
        }
        if ((size_t)n != r->columns) {
            snprintf(r->error, sizeof r->error, "line %zu: %d columns, the file started with %zu", r->line_no, n,
                     r->columns);
            return -1;
        }
        if (n == 3) {
            if (!*fields[0]) {
                snprintf(r->error, sizeof r->error, "line %zu: empty series name", r->line_no);
                return -1;
            }
            r->series = fields[0];
        }
        if (n >= 2) {
            char *t = fields[n - 2];
            int refusal = parse_timestamp(t, r->unit, ts);
            if (refusal) return refuse_timestamp(r, t, refusal);
        } else {
            *ts = r->next_implicit_ts++;
        }
        char *v = fields[n - 1];
        if (*v == 0) {
            r->skipped++;
            continue;
        }
        if (parse_value(v, bits) != 0) {
            snprintf(r->error, sizeof r->error, "line %zu: bad value '%.60s'", r->line_no, v);
            return -1;
        }
        return 1;
    }
    return n;
}

int csv_wide_header(csv_reader *r)
{
    char *fields[CSV_MAX_WIDE + 2];
    int n = next_fields(r, fields, CSV_MAX_WIDE + 1);
    if (n < 0) return -1;
    if (n < 2 || n > CSV_MAX_WIDE + 1) {
        snprintf(r->error, sizeof r->error, "line %zu: --wide needs a header 'timestamp,name1,name2,...' (2 to %d columns)",
                 r->line_no, CSV_MAX_WIDE + 1);
        note_separator(r, fields, n);
        return refuse_line(r);
    }
    r->columns = (size_t)n;
    r->header_checked = 1;
    size_t size = r->line_len + 1;
    if (!(r->header = malloc(size))) {
        snprintf(r->error, sizeof r->error, "out of memory");
        return -1;
    }
    memcpy(r->header, r->line, size);
    for (int i = 1; i < n; i++) {
        r->wide_names[i - 1] = r->header + (fields[i] - r->line);
        if (!*fields[i]) {
            snprintf(r->error, sizeof r->error, "line %zu: column %d has no name", r->line_no, i + 1);
            return -1;
        }
    }
    return 0;
}

int csv_next_wide(csv_reader *r, int64_t *ts, char ***cells)
{
    int n = next_fields(r, r->wide_cells, CSV_MAX_WIDE + 1);
    if (n <= 0) return n;
    if ((size_t)n != r->columns) {
        snprintf(r->error, sizeof r->error, "line %zu: %d columns, the header has %zu", r->line_no, n, r->columns);
        return -1;
    }
    int refusal = parse_timestamp(r->wide_cells[0], r->unit, ts);
    if (refusal) return refuse_timestamp(r, r->wide_cells[0], refusal);
    *cells = r->wide_cells + 1;
    return 1;
}

/* d printed at precision prec, %f (plain) or %g, into buf. @return 1 when the text reads back to bits. */
static int reads_back(char *buf, size_t size, uint64_t bits, double d, int plain, int prec)
{
    if (plain) snprintf(buf, size, "%.*f", prec, d);
    else snprintf(buf, size, "%.*g", prec, d);
    double back = strtod(buf, NULL);
    uint64_t back_bits;
    memcpy(&back_bits, &back, 8);
    return back_bits == bits;
}

/*
 * The least precision from `first` whose text reads back, into buf. A precision that reads back leaves every higher
 * one reading back (the nearest text of p + 1 digits is no farther than that of p, which is one of them), so a
 * search finds what trying each in turn from the least finds: first the two just below the most (a double that
 * is no short decimal, which format_short_decimal took, mostly needs 16 or 17 digits), then halving what is left;
 * 3 or 4 tries for most, where trying each in turn took up to 17. @return 0 if none up to the most does.
 */
static int shortest_form(char *buf, size_t size, uint64_t bits, int plain, int first)
{
    double d;
    memcpy(&d, &bits, 8);
    int low = first, high = plain ? 17 + 4 : 17; /* %.17g tells every double apart; high reads back from here on */
    if (!reads_back(buf, size, bits, d, plain, high)) return 0;
    for (int below = 0; below < 2 && low < high; below++) {
        if (!reads_back(buf, size, bits, d, plain, high - 1)) low = high;
        else high--;
    }
    while (low < high) {
        int mid = low + (high - low) / 2;
        if (reads_back(buf, size, bits, d, plain, mid)) high = mid;
        else low = mid + 1;
    }
    return reads_back(buf, size, bits, d, plain, low);
}

/*
 * d written with the fewest decimals k (0..8) as the plain text of I / 10^k, I an integer below 10^15, when one
 * such text reads back to d: strtod rounds that decimal correctly, and so does the division of the two exact
 * doubles I and 10^k, so fl(I / 10^k) == d is the round trip, checked without printing or parsing. With 15 digits
 * at most, no other decimal of as many digits lies within half an ulp of d, so this is the text the search below
 * finds (a non-integer's shortest %g has no exponent from 1e-4 up, nor an integer's under 1e5 where plain is as
 * short). These are the values most series hold (sensors, prices, counters); the rest, or too small a buf:
 * @return 0.
 */
static int format_short_decimal(char *buf, size_t size, double d)
{
    static const double pow10[] = {1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8};
    double magnitude = fabs(d);
    if (!(magnitude >= 1e-4 && magnitude < 1e15) || size < 32) return 0;
    for (int k = 0; k < 9; k++) {
        double scaled = nearbyint(magnitude * pow10[k]), back = scaled / pow10[k];
        if (scaled >= 1e15) return 0;
        if (memcmp(&back, &magnitude, sizeof back) != 0) continue;
        if (k == 0 && scaled >= 1e5) return 0; /* 100000 prints as 1e+05 */
        char digits[16];
        int n = 0, at = 0;
        for (uint64_t i = (uint64_t)scaled; i; i /= 10) digits[n++] = (char)('0' + i % 10); /* reversed */
        if (d < 0) buf[at++] = '-';
        for (int place = (n > k ? n : k + 1) - 1; place >= 0; place--) { /* 10^place / 10^k; 0.00ddd padded */
            buf[at++] = place < n ? digits[place] : '0';
            if (place == k && k) buf[at++] = '.';
        }
        buf[at] = 0;
        return 1;
    }
    return 0;
}

/* The shortest text by search: %g at rising precision until one reads back (see format_value). */
static void format_value_searched(char *buf, size_t size, uint64_t bits)
{
    double d;
    memcpy(&d, &bits, 8);
    shortest_form(buf, size, bits, 0, 1);
    /* %g writes 100 as 1e+02 and 150 as 1.5e+02: the plain form with the fewest decimals, where it is shorter
     * or as short (0.0001 .. 1e17; below, an exponent is always shorter). */
    if (strchr(buf, 'e') && fabs(d) >= 1e-4 && fabs(d) < 1e17) {
        char plain[64];
        if (shortest_form(plain, sizeof plain, bits, 1, 0) && strlen(plain) <= strlen(buf))
            snprintf(buf, size, "%s", plain);
    }
}

void format_value(char *buf, size_t size, uint64_t bits)
{
    double d;
    memcpy(&d, &bits, 8);
    if (isnan(d)) {
        snprintf(buf, size, "NaN");
        return;
    }
    if (isinf(d)) {
        snprintf(buf, size, d > 0 ? "Inf" : "-Inf");
        return;
    }
    if (!format_short_decimal(buf, size, d)) format_value_searched(buf, size, bits);
}

/* v in exactly `width` decimal digits (v < 10^width), at p. @return the end. */
static char *put_fixed_digits(char *p, uint64_t v, int width)
{
    for (int i = width - 1; i >= 0; i--, v /= 10) p[i] = (char)('0' + v % 10);
    return p + width;
}

char *put_int64(char *p, int64_t v)
{
    uint64_t magnitude = v < 0 ? 0 - (uint64_t)v : (uint64_t)v; /* INT64_MIN too */
    char digits[20];
    int n = 0;
    do digits[n++] = (char)('0' + magnitude % 10);
    while (magnitude /= 10);
    if (v < 0) *p++ = '-';
    while (n) *p++ = digits[--n];
    return p;
}

char *put_hex_bits(char *p, uint64_t bits)
{
    static const char hex[] = "0123456789abcdef";
    *p++ = '0';
    *p++ = 'x';
    for (int shift = 60; shift >= 0; shift -= 4) *p++ = hex[bits >> shift & 15];
    return p;
}

void format_iso(char *buf, size_t size, int64_t ts, int unit)
{
    int64_t per_s = units_per_second[unit == UNIT_RAW ? UNIT_MS : unit];
    int64_t secs = ts / per_s, frac = ts % per_s;
    if (frac < 0) {
        frac += per_s;
        secs--;
    }
    int64_t days = secs / 86400, rem = secs % 86400;
    if (rem < 0) {
        rem += 86400;
        days--;
    }
    /* civil_from_days (Hinnant) */
    int64_t z = days + 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    int64_t d = doy - (153 * mp + 2) / 5 + 1;
    int64_t m = mp < 10 ? mp + 3 : mp - 9;
    int64_t y = yoe + era * 400 + (m <= 2);
    int digits = per_s == 1 ? 0 : per_s == 1000 ? 3 : per_s == 1000000 ? 6 : 9;
    if (y >= 0 && y <= 9999 && size >= 32) { /* every date a file holds, written digit by digit (cat, decompress) */
        char *p = buf;
        int64_t fields[6] = {y, m, d, rem / 3600, rem / 60 % 60, rem % 60};
        static const char widths[6] = {4, 2, 2, 2, 2, 2}, after[6] = {'-', '-', 'T', ':', ':', 0};
        for (int f = 0; f < 6; f++) {
            p = put_fixed_digits(p, (uint64_t)fields[f], widths[f]);
            if (after[f]) *p++ = after[f];
        }
        if (digits) {
            *p++ = '.';
            p = put_fixed_digits(p, (uint64_t)frac, digits);
        }
        memcpy(p, "Z", 2);
        return;
    }
    /* Years past 9999 and before 0 in ISO 8601's expanded form, signed, so that the reader takes them back. */
    const char *sign = y < 0 ? "-" : y > 9999 ? "+" : "";
    long long year = y < 0 ? -y : y;
    int n = snprintf(buf, size, "%s%04lld-%02lld-%02lldT%02lld:%02lld:%02lld", sign, year, (long long)m, (long long)d,
                     (long long)(rem / 3600), (long long)(rem / 60 % 60), (long long)(rem % 60));
    if (digits && n > 0 && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n, ".%0*lld", digits, (long long)frac);
    if (n > 0 && (size_t)n < size) snprintf(buf + n, size - (size_t)n, "Z");
}
