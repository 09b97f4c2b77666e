/*
 * tschunk sketch encode [--mapping logarithmic|cubic|linear|quadratic|quartic] [--alpha A]
 *                       [--store dense|sparse] [--exact-stats] [--omit-mapping]   < values
 * tschunk sketch decode HEX [--q 0.5,0.99] [--json] [--mapping M --alpha A]
 *
 * encode reads one value a line (a decimal or 0x + 16 hex digits, optionally ",weight") and prints
 * the DDSketch compact encoding as lowercase hex, in sketches-java's block order. decode prints what
 * a stream holds; errors name the byte offset and exit non-zero.
 */
#define _POSIX_C_SOURCE 200809L
#include "sketch_cmd.h"

#include <ctype.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "csv.h"
#include "tschunk.h"

#define CLI_MAX_BINS (1u << 16) /* as good as unbounded for every real input; still bounded */

typedef struct {
    tschunk_mapping_kind mapping;
    int mapping_set;
    double alpha;
    int sparse, exact, omit, json;
    const char *hex;
    const char *qlist;
} sketch_opts;

static int sketch_fail(const char *msg, const char *arg)
{
    fprintf(stderr, "tschunk sketch: %s%s\n", msg, arg ? arg : "");
    return 1;
}

static int parse_sketch_opts(int argc, char **argv, sketch_opts *o)
{
    memset(o, 0, sizeof *o);
    o->alpha = 0.01;
    o->qlist = "0,0.01,0.25,0.5,0.75,0.9,0.99,0.999,1";
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;
        int takes_value =
            !strcmp(a, "--mapping") || !strcmp(a, "--alpha") || !strcmp(a, "--store") || !strcmp(a, "--q");
        if (takes_value && !next) return sketch_fail("a value is missing after ", a);
        if (!strcmp(a, "--mapping")) {
            if (mapping_from_name(next, &o->mapping)) return sketch_fail("unknown mapping ", next);
            o->mapping_set = 1;
            i++;
        } else if (!strcmp(a, "--alpha")) {
            char *end;
            o->alpha = strtod(next, &end);
            if (*end || !(o->alpha > 0 && o->alpha < 1)) return sketch_fail("--alpha must be in (0, 1), not ", next);
            o->mapping_set = 1;
            i++;
        } else if (!strcmp(a, "--store")) {
            if (strcmp(next, "dense") && strcmp(next, "sparse")) return sketch_fail("--store takes dense or sparse, not ", next);
            o->sparse = !strcmp(next, "sparse");
            i++;
        } else if (!strcmp(a, "--q")) {
            if (!quantile_list_ok(next))
                return sketch_fail("--q takes quantiles in [0, 1] separated by commas, not ", next);
            o->qlist = next;
            i++;
        } else if (!strcmp(a, "--exact-stats")) o->exact = 1;
        else if (!strcmp(a, "--omit-mapping")) o->omit = 1;
        else if (!strcmp(a, "--json")) o->json = 1;
        else if (a[0] != '-' && !o->hex) o->hex = a;
        else return sketch_fail("unexpected argument ", a);
    }
    return 0;
}

static tschunk_sketch *new_sketch(const sketch_opts *o)
{
    tschunk_sketch_options so = {o->mapping, o->alpha, CLI_MAX_BINS, 0, {NULL, NULL, NULL}, 0};
    tschunk_sketch *s;
    size_t r = tschunk_sketch_create(&s, &so);
    if (tschunk_is_error(r)) {
        sketch_fail("cannot create the sketch: ", tschunk_error_name(r));
        return NULL;
    }
    return s;
}

/* One input line: value[,weight], white space around each ignored as in CSV input. @return 1 with a value, 0 for a
 * blank line, -1 when malformed. */
static int parse_line(char *line, double *value, double *weight)
{
    char *comma = strchr(line, ',');
    *weight = 1;
    if (comma) {
        *comma = 0;
        char *text = csv_trim(comma + 1), *end;
        *weight = strtod(text, &end);
        if (end == text || *end) return -1;
    }
    char *v = csv_trim(line);
    if (!*v) return comma ? -1 : 0;
    uint64_t bits;
    if (parse_value(v, &bits)) return -1;
    memcpy(value, &bits, 8);
    return 1;
}

static int sketch_encode(const sketch_opts *o)
{
    tschunk_sketch *s = new_sketch(o);
    if (!s) return 1;
    csv_reader in; /* whole lines, however long (512-byte reads once split one into two values) */
    csv_init(&in, stdin, UNIT_RAW);
    char *line;
    int read;
    while ((read = csv_next_line(&in, &line)) == 1) {
        double v, w;
        int got = parse_line(line, &v, &w);
        char where[64];
        snprintf(where, sizeof where, "line %zu", in.line_no);
        if (got < 0) return csv_free(&in), tschunk_sketch_free(s), sketch_fail("malformed value on ", where);
        if (got == 0) continue;
        size_t r = tschunk_sketch_add_weighted(s, v, w);
        if (tschunk_is_error(r)) {
            tschunk_sketch_stats st;
            tschunk_sketch_get_stats(s, &st);
            /* UNTRACKABLE names three causes: say which this line is */
            if (!(w > 0) || isinf(w))
                fprintf(stderr, "tschunk sketch: %s: weight %g: a weight is finite and > 0\n", where, w);
            else if (isnan(v) || isinf(v))
                fprintf(stderr, "tschunk sketch: %s: value %g: NaN and infinities have no bin\n", where, v);
            else if (!(fabs(v) <= st.max_indexable))
                fprintf(stderr, "tschunk sketch: %s: value %g is beyond the sketch's range (|value| <= %g)\n", where, v,
                        st.max_indexable);
            else if (tschunk_get_error_code(r) == TSCHUNK_ERROR_UNTRACKABLE)
                fprintf(stderr, "tschunk sketch: %s: the total weight would pass %g\n", where, DBL_MAX);
            else fprintf(stderr, "tschunk sketch: %s: %s\n", where, tschunk_error_name(r));
            csv_free(&in);
            tschunk_sketch_free(s);
            return 1;
        }
    }
    csv_free(&in);
    if (read < 0) return tschunk_sketch_free(s), sketch_fail(in.error, NULL);
    unsigned flags = (o->sparse ? TSCHUNK_SKETCH_SPARSE : 0) | (o->exact ? TSCHUNK_SKETCH_EXACT_STATS : 0) |
                     (o->omit ? TSCHUNK_SKETCH_OMIT_MAPPING : 0);
    size_t cap = tschunk_sketch_encode_bound(s);
    unsigned char *buf = malloc(cap);
    size_t n = buf ? tschunk_sketch_encode(s, buf, cap, flags) : 0;
    if (!buf || tschunk_is_error(n)) {
        free(buf);
        tschunk_sketch_free(s);
        return sketch_fail("encoding failed", NULL);
    }
    for (size_t i = 0; i < n; i++) printf("%02x", buf[i]);
    printf("\n");
    free(buf);
    tschunk_sketch_free(s);
    return 0;
}

/* The bytes of hex, white space around it ignored (as sketch encode trims its lines). @return 0, -1 for text that
 * is not an even string of hex digits, -2 out of memory. */
static int unhex(const char *hex, unsigned char **out, size_t *n)
{
    while (isspace((unsigned char)*hex)) hex++;
    size_t len = strlen(hex);
    while (len && isspace((unsigned char)hex[len - 1])) len--;
    if (len % 2) return -1;
    if (!(*out = malloc(len / 2 + 1))) return -2;
    for (size_t i = 0; i < len / 2; i++) {
        int high = hex_digit((unsigned char)hex[2 * i]), low = hex_digit((unsigned char)hex[2 * i + 1]);
        if (high < 0 || low < 0) {
            free(*out);
            return -1;
        }
        (*out)[i] = (unsigned char)(high << 4 | low);
    }
    *n = len / 2;
    return 0;
}

typedef struct {
    int first;
} bin_printer;

static void print_bin_json(void *ctx, int32_t index, double count)
{
    bin_printer *p = ctx;
    char number[32];
    printf("%s[%d, %s]", p->first ? "" : ", ", index, json_number(number, count));
    p->first = 0;
}

static void print_bin_text(void *ctx, int32_t index, double count)
{
    (void)ctx;
    printf("  %d: %.17g\n", index, count);
}

static void print_decoded(const tschunk_sketch *s, const sketch_opts *o)
{
    tschunk_sketch_stats st;
    tschunk_sketch_get_stats(s, &st);
    char qbuf[512];
    snprintf(qbuf, sizeof qbuf, "%s", o->qlist);
    if (o->json) {
        char a[32], b[32], c[32]; /* numbers that are not finite (a stream's NaN sum) print as null */
        printf("{\"mapping\": \"%s\", \"gamma\": %.17g, \"index_offset\": %.17g, \"count\": %s, \"sum\": %s, ",
               mapping_name(st.mapping), st.gamma, st.index_offset, json_number(a, st.count),
               json_number(b, st.count > 0 ? st.sum : 0));
        if (st.count > 0) printf("\"min\": %s, \"max\": %s, ", json_number(a, st.min), json_number(b, st.max));
        else printf("\"min\": null, \"max\": null, "); /* as quantiles --json: null where there is no answer */
        printf("\"exact\": %s, \"zero_count\": %s, \"positive_bins\": [", st.exact ? "true" : "false",
               json_number(c, st.zero_count));
        bin_printer p = {1};
        tschunk_sketch_bins(s, 0, print_bin_json, &p);
        printf("], \"negative_bins\": [");
        p.first = 1;
        tschunk_sketch_bins(s, 1, print_bin_json, &p);
        printf("], \"quantiles\": {");
    } else {
        printf("mapping      %s (gamma %.17g, offset %.17g, relative accuracy %.6g)\n", mapping_name(st.mapping),
               st.gamma, st.index_offset, st.relative_accuracy);
        printf("count        %.17g%s\n", st.count, st.exact ? "" : " (no exact statistics in the stream: from bins)");
        if (st.count > 0) printf("sum          %.17g\nmin          %.17g\nmax          %.17g\n", st.sum, st.min, st.max);
        printf("zero count   %.17g\npositive bins (%u):\n", st.zero_count, st.positive_bins);
        tschunk_sketch_bins(s, 0, print_bin_text, NULL);
        printf("negative bins (%u, by |value|):\n", st.negative_bins);
        tschunk_sketch_bins(s, 1, print_bin_text, NULL);
        printf("quantiles\n");
    }
    int first = 1;
    char qv[32];
    for (char *tok = strtok(qbuf, ","); tok; tok = strtok(NULL, ",")) {
        double q = strtod(tok, NULL), v;
        size_t r = tschunk_sketch_quantile(s, q, &v);
        if (o->json) {
            if (tschunk_is_error(r)) printf("%s\"%s\": null", first ? "" : ", ", tok);
            else printf("%s\"%s\": %s", first ? "" : ", ", tok, json_number(qv, v));
        } else if (tschunk_is_error(r)) { /* STAGE: an empty sketch has no quantiles */
            printf("  %-6s %s\n", tok, st.count > 0 ? tschunk_error_name(r) : "none (empty sketch)");
        } else {
            printf("  %-6s %.17g\n", tok, v);
        }
        first = 0;
    }
    printf(o->json ? "}}\n" : "");
}

static int sketch_decode(const sketch_opts *o)
{
    if (!o->hex) return sketch_fail("decode needs the hex encoding as argument", NULL);
    unsigned char *bytes;
    size_t n, at = 0;
    int bad = unhex(o->hex, &bytes, &n);
    if (bad == -2) return sketch_fail("out of memory", NULL);
    if (bad) return sketch_fail("not an even string of hex digits: ", o->hex);
    tschunk_sketch *s = NULL;
    size_t r;
    if (o->mapping_set) { /* a stream without a mapping block: the caller names it */
        s = new_sketch(o);
        r = s ? tschunk_sketch_decode_merge(s, bytes, n, &at) : TSC_CLI_ERROR;
    } else {
        tschunk_sketch_options so = {TSCHUNK_MAPPING_LOGARITHMIC, 0, CLI_MAX_BINS, 0, {NULL, NULL, NULL}, 0};
        r = tschunk_sketch_decode_new(&s, bytes, n, &so, &at);
    }
    free(bytes);
    if (tschunk_is_error(r)) {
        fprintf(stderr, "tschunk sketch: decode failed at byte %zu of %zu: %s%s\n", at, n, tschunk_error_name(r),
                !o->mapping_set && at == 0 ? " (a stream without a mapping block needs --mapping/--alpha)" : "");
        tschunk_sketch_free(s);
        return 1;
    }
    print_decoded(s, o);
    tschunk_sketch_free(s);
    return 0;
}

int cmd_sketch(int argc, char **argv)
{
    if (argc < 1) return sketch_fail("usage: tschunk sketch encode|decode ...", NULL), 2;
    sketch_opts o;
    if (parse_sketch_opts(argc - 1, argv + 1, &o)) return 2;
    if (!strcmp(argv[0], "encode")) return sketch_encode(&o);
    if (!strcmp(argv[0], "decode")) return sketch_decode(&o);
    return sketch_fail("unknown sketch command ", argv[0]), 2;
}
