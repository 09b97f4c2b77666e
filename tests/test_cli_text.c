/*
 * The CLI's value text (tools/csv.c, compiled in here): format_value (a short-decimal path, else a binary search
 * over precisions, 0.50.4) against the text it printed before, %g at each precision in turn from the least, value
 * by value over decimals of 0 to 8 places, integers, the edges of the short path's range and random bit patterns.
 * Fixed seeds.
 */
#include "../tools/csv.c"

#include "test_util.h"

static uint64_t text_rng = 0x9e3779b97f4a7c15u;

static uint64_t next_random(void)
{
    text_rng ^= text_rng << 13;
    text_rng ^= text_rng >> 7;
    text_rng ^= text_rng << 17;
    return text_rng;
}

/* The text of 0.50.3 and before: each precision in turn from the least, the plain form where not longer. */
static void reference_text(char *buf, size_t size, double value)
{
    for (int prec = 1; prec <= 21; prec++) {
        snprintf(buf, size, "%.*g", prec, value);
        if (strtod(buf, NULL) == value && signbit(strtod(buf, NULL)) == signbit(value)) break;
    }
    if (strchr(buf, 'e') && fabs(value) >= 1e-4 && fabs(value) < 1e17) {
        char plain[64];
        for (int prec = 0; prec <= 21; prec++) {
            snprintf(plain, sizeof plain, "%.*f", prec, value);
            if (strtod(plain, NULL) == value) break;
        }
        if (strlen(plain) <= strlen(buf)) snprintf(buf, size, "%s", plain);
    }
}

/* The value's text as format_value prints it and as the reference does: the same. @return 1 if the short-decimal
 * path took it. */
static int same_text(double value)
{
    char printed[64], reference[64], fast[64];
    uint64_t bits;
    memcpy(&bits, &value, 8);
    format_value(printed, sizeof printed, bits);
    reference_text(reference, sizeof reference, value);
    cr_assert_str_eq(printed, reference, "%.17g (0x%016llx)", value, (unsigned long long)bits);
    return format_short_decimal(fast, sizeof fast, value);
}

Test(cli_text, values_print_as_the_search_by_each_precision_did)
{
    static const double pow10[] = {1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12};
    size_t taken = 0, tried = 0;
    for (int i = 0; i < 150000; i++, tried++) {
        uint64_t r = next_random();
        int places = (int)(r % 10), digits = 1 + (int)((r >> 8) % 16);
        double mantissa = (double)((r >> 16) % (uint64_t)(pow10[digits > 12 ? 12 : digits]));
        double value = mantissa / pow10[places] * (r >> 63 ? -1 : 1);
        taken += (size_t)same_text(value);
    }
    cr_assert_gt(taken, tried / 2, "the short path took %zu of %zu decimals", taken, tried);
    for (int i = 0; i < 60000; i++) { /* any bits: the short path must refuse what it cannot print alike */
        uint64_t bits = next_random();
        double value;
        memcpy(&value, &bits, 8);
        if (!isnan(value) && !isinf(value)) same_text(value);
    }
    double edges[] = {1e-4, 0.00009999999999999999, 0.00011, 99999, 100000, 123456.5, 1e15, 999999999999999,
                      999999999999999.9, 0.1 + 0.2, 1.0 / 3, 2.5e-4, 4503599627370495.5, 1e8 + 0.5, 0.123456789, 5e-5};
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) {
        same_text(edges[i]);
        same_text(-edges[i]);
        double below = edges[i], above = edges[i];
        for (int ulp = 0; ulp < 3; ulp++) {
            same_text(below = nextafter(below, 0));
            same_text(above = nextafter(above, INFINITY));
        }
    }
    char text[64];
    cr_assert(format_short_decimal(text, sizeof text, -0.005) && !strcmp(text, "-0.005"), "%s", text);
    cr_assert(format_short_decimal(text, sizeof text, 57.46) && !strcmp(text, "57.46"), "%s", text);
    cr_assert(format_short_decimal(text, sizeof text, 99999) && !strcmp(text, "99999"), "%s", text);
    cr_assert(!format_short_decimal(text, sizeof text, 100000)); /* 1e+05, by the search */
    cr_assert(!format_short_decimal(text, sizeof text, 0.1 + 0.2));
    cr_assert(!format_short_decimal(text, sizeof text, -0.0));
}

/* The date-time text of 0.50.5 and before: snprintf of the civil fields (the year signed outside 0 to 9999 since
 * 0.50.11). */
static void reference_iso(char *buf, size_t size, int64_t ts, int unit)
{
    static const int64_t per[] = {1000, 1, 1000, 1000000, 1000000000};
    int64_t per_s = per[unit], secs = ts / per_s, frac = ts % per_s;
    if (frac < 0) frac += per_s, secs--;
    int64_t days = secs / 86400, rem = secs % 86400;
    if (rem < 0) rem += 86400, days--;
    int64_t z = days + 719468, era = (z >= 0 ? z : z - 146096) / 146097, doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365, doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153, d = doy - (153 * mp + 2) / 5 + 1, m = mp < 10 ? mp + 3 : mp - 9;
    int64_t y = yoe + era * 400 + (m <= 2);
    int n = snprintf(buf, size, "%s%04lld-%02lld-%02lldT%02lld:%02lld:%02lld", y < 0 ? "-" : y > 9999 ? "+" : "",
                     (long long)(y < 0 ? -y : y), (long long)m, (long long)d, (long long)(rem / 3600),
                     (long long)(rem / 60 % 60), (long long)(rem % 60));
    if (per_s > 1) n += snprintf(buf + n, size - (size_t)n, ".%0*lld", per_s == 1000 ? 3 : per_s == 1000000 ? 6 : 9,
                                 (long long)frac);
    snprintf(buf + n, size - (size_t)n, "Z");
}

/* Timestamps and bits as the lines of cat and decompress write them (0.50.6: digit by digit, not snprintf): the
 * text snprintf gave, in every unit, across years 0 to 9999 and beyond (those still by snprintf). */
Test(cli_text, timestamps_and_bits_print_as_snprintf_did)
{
    char text[64], reference[64];
    int64_t edges[] = {0, -1, 1, INT64_MIN, INT64_MAX, -62167219200000, -62167219200001, 253402300799999,
                       253402300800000, 951782400000, 1709164800000, 4107542399999};
    for (int unit = 0; unit <= 4; unit++) {
        for (size_t i = 0; i < sizeof edges / sizeof edges[0] + 300000; i++) {
            int64_t ts = i < sizeof edges / sizeof edges[0] ? edges[i] : (int64_t)next_random() >> (next_random() % 64);
            format_iso(text, sizeof text, ts, unit);
            reference_iso(reference, sizeof reference, ts, unit);
            cr_assert_str_eq(text, reference, "%lld in unit %d", (long long)ts, unit);
            *put_int64(text, ts) = 0;
            snprintf(reference, sizeof reference, "%lld", (long long)ts);
            cr_assert_str_eq(text, reference);
            uint64_t bits = next_random() >> (next_random() % 64);
            *put_hex_bits(text, bits) = 0;
            snprintf(reference, sizeof reference, "0x%016llx", (unsigned long long)bits);
            cr_assert_str_eq(text, reference);
        }
    }
}

/* Values and timestamps as the CSV reader reads them (0.50.8: short decimals and integers of up to 18 digits without
 * strtod or strtoll): what strtod and strtoll read, bit for bit, over random texts of every shape near the limits. */
Test(cli_text, numbers_read_as_strtod_and_strtoll_did)
{
    char text[48];
    size_t fast = 0;
    for (int i = 0; i < 400000; i++) {
        uint64_t r = next_random();
        int digits = 1 + (int)(r % 18), point = (int)((r >> 8) % (uint64_t)(digits + 2)) - 1, n = 0;
        if (r >> 20 & 1) text[n++] = r >> 21 & 1 ? '-' : '+';
        for (int d = 0; d < digits; d++) {
            if (d == point) text[n++] = '.';
            uint64_t draw = next_random() % 14; /* 0 and 9 more often: runs of them, carries, 10^15 - 1 */
            text[n++] = (char)('0' + (draw < 10 ? draw : draw < 12 ? 0 : 9));
        }
        if (point == digits) text[n++] = '.';
        text[n] = 0;
        double read, slow;
        uint64_t bits;
        char *end;
        if (parse_short_decimal(text, &read)) fast++;
        cr_assert_eq(parse_value(text, &bits), 0, "%s", text);
        slow = strtod(text, &end);
        cr_assert(!*end && !memcmp(&bits, &slow, 8), "%s: 0x%016llx", text, (unsigned long long)bits);
        int64_t ts;
        errno = 0;
        long long whole = strtoll(text, &end, 10);
        int refused = parse_timestamp(text, UNIT_MS, &ts) != 0;
        if (!*end) cr_assert(errno == ERANGE ? refused : !refused && ts == whole, "%s", text);
    }
    cr_assert_gt(fast, 100000, "the short path read %zu", fast);
    const char *edges[] = {"9223372036854775807", "-9223372036854775808", "9223372036854775808", "999999999999999999",
                           "-999999999999999999", "0", "-0", "+0", "000000000000000000000001", "-"};
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) {
        int64_t ts;
        char *end;
        errno = 0;
        long long whole = strtoll(edges[i], &end, 10);
        int refused = parse_timestamp(edges[i], UNIT_MS, &ts) != 0;
        cr_assert(*end || end == edges[i] || errno == ERANGE ? refused : ts == whole, "%s", edges[i]);
    }
}

/* Every timestamp --iso prints reads back as itself, in every unit (0.50.11: years past 9999 were printed without
 * the sign ISO 8601's expanded years carry, and before 0 with three digits, and neither read back), and the reader
 * refuses a year without its sign past four digits and a time int64 cannot hold. */
Test(cli_text, iso_text_reads_back)
{
    char text[64];
    int64_t edges[] = {0, -1, 1, INT64_MIN, INT64_MAX, INT64_MIN + 1, INT64_MAX - 1, -62167219200000,
                       -62167219200001, 253402300799999, 253402300800000, -62198755200000, 951782400000};
    for (int unit = 0; unit <= 4; unit++) {
        for (size_t i = 0; i < sizeof edges / sizeof edges[0] + 200000; i++) {
            int64_t ts = i < sizeof edges / sizeof edges[0] ? edges[i] : (int64_t)next_random() >> (next_random() % 64);
            int64_t read;
            format_iso(text, sizeof text, ts, unit);
            cr_assert_eq(parse_timestamp(text, unit, &read), 0, "%s (%lld in unit %d)", text, (long long)ts, unit);
            cr_assert_eq(read, ts, "%s in unit %d", text, unit);
        }
    }
    format_iso(text, sizeof text, INT64_MAX, 2);
    cr_assert_str_eq(text, "+292278994-08-17T07:12:55.807Z");
    format_iso(text, sizeof text, -62198755200000, 2);
    cr_assert_str_eq(text, "-0001-01-01T00:00:00.000Z");
    const char *refused[] = {"10000-01-01", "+999-01-01", "+1000000000000-01-01", "+292278994-08-17T07:12:55.808Z",
                             "-292275055-05-16T16:47:04.191Z", "++2024-01-01", "+-2024-01-01", "2024-01-01T00:00:00+"};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        int64_t read;
        cr_assert_neq(parse_timestamp(refused[i], 2, &read), 0, "%s read as %lld", refused[i], (long long)read);
    }
    int64_t read;
    cr_assert(!parse_timestamp("+10000-01-01", 2, &read) && read == 253402300800000);
    cr_assert(!parse_timestamp("-0000-03-01", 2, &read) && read == -62162035200000);
    /* Seconds left out (0.51.8, ISO 8601's reduced precision): the minute's start; no fraction then. */
    cr_assert(!parse_timestamp("2024-01-01 00:15", 2, &read) && read == 1704068100000);
    cr_assert(!parse_timestamp("2024-01-01T00:15+01:00", 2, &read) && read == 1704064500000);
    const char *cut_short[] = {"2024-01-01 00:15.5", "2024-01-01 00:15:", "2024-01-01 00:1", "2024-01-01 00"};
    for (size_t i = 0; i < sizeof cut_short / sizeof cut_short[0]; i++)
        cr_assert_neq(parse_timestamp(cut_short[i], 2, &read), 0, "%s", cut_short[i]);
}
