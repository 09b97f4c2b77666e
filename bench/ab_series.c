/*
 * Same-process A/B of two libtschunk.so builds over whole series: every pass
 * appends (or decodes) every chunk of every series once, passes alternate
 * between the two libraries, and each keeps the median of its passes.
 *
 *   ab_series [--many | --decode | --prom] [--passes N] [--chunk N] A.so B.so DATASET.gz ...
 *
 * ab_libs keeps each library's fastest of 300 passes over one chunk: the
 * steadiest figure on this VM, but by the 300th pass the branch predictor
 * knows the chunk, so a cost that comes from mispredicted branches on the
 * values (0.23.0: codec 2's decimal exceptions) does not show there. Here no
 * chunk is seen again before every other chunk of the run has been.
 * Codec 2 (the default options), 1,024-sample chunks unless --chunk says
 * fewer, one chunk per buffer; --prom: Prometheus XOR chunks appended one
 * sample a call (tschunk_prom_append_bits).
 * Pin it to one core (taskset -c 1).
 */
#include "workloads.h" /* first: it sets _POSIX_C_SOURCE for popen */

#include "dl_load.h"

#include "tschunk.h"
#include "timing.h"

#define MAX_CHUNK 1024
static size_t chunk = MAX_CHUNK, bound = TSCHUNK_BOUND(MAX_CHUNK); /* samples a chunk, its buffer's bytes */
#define MAX_SERIES 64
#define MAX_PASSES 101

typedef struct {
    size_t (*init)(tschunk_encoder *, void *, size_t, const tschunk_encoder_options *);
    size_t (*restart)(tschunk_encoder *, void *, size_t);
    size_t (*append)(tschunk_encoder *, int64_t, uint64_t);
    size_t (*append_many)(tschunk_encoder *, const int64_t *, const double *, size_t, size_t *);
    size_t (*finish)(tschunk_encoder *);
    size_t (*decode)(const void *, size_t, int64_t *, double *, size_t);
    size_t (*prom_init)(tschunk_prom_encoder *, void *, size_t, const tschunk_encoder_options *);
    size_t (*prom_append)(tschunk_prom_encoder *, int64_t, uint64_t);
    size_t (*prom_finish)(tschunk_prom_encoder *);
} library;

enum { APPEND, MANY, DECODE, PROM };
static volatile double sink;

static void *symbol(void *handle, const char *name) { return bench_symbol("ab_series", handle, name); }

static library load(const char *path)
{
    void *handle = bench_open_library("ab_series", path);
    library lib;
    *(void **)&lib.init = symbol(handle, "tschunk_encoder_init");
    *(void **)&lib.restart = symbol(handle, "tschunk_encoder_restart");
    *(void **)&lib.append = symbol(handle, "tschunk_append_bits");
    *(void **)&lib.append_many = symbol(handle, "tschunk_append_many");
    *(void **)&lib.finish = symbol(handle, "tschunk_encoder_finish");
    *(void **)&lib.decode = symbol(handle, "tschunk_decode");
    *(void **)&lib.prom_init = symbol(handle, "tschunk_prom_encoder_init");
    *(void **)&lib.prom_append = symbol(handle, "tschunk_prom_append_bits");
    *(void **)&lib.prom_finish = symbol(handle, "tschunk_prom_encoder_finish");
    return lib;
}

typedef struct {
    wl_series series[MAX_SERIES];
    size_t nseries, samples, nchunks;
    unsigned char *buffers; /* one `bound`-byte buffer per chunk, as a TSDB's head chunks */
    size_t *sizes;
} workload;

/* Every chunk of every series appended once, a series' chunks cut by restart as the CLI does. @return bytes. */
static size_t append_all(const library *lib, workload *w, int mode)
{
    size_t bytes = 0, at = 0;
    for (size_t k = 0; k < w->nseries; k++) {
        const wl_series *s = &w->series[k];
        tschunk_encoder enc;
        for (size_t from = 0; from < s->n; from += chunk, at++) {
            size_t take = s->n - from < chunk ? s->n - from : chunk;
            unsigned char *buffer = w->buffers + at * bound;
            if (mode == PROM) {
                tschunk_prom_encoder prom;
                lib->prom_init(&prom, buffer, bound, NULL);
                for (size_t i = from; i < from + take; i++) lib->prom_append(&prom, s->ts[i], s->bits[i]);
                w->sizes[at] = lib->prom_finish(&prom);
                bytes += w->sizes[at];
                continue;
            }
            if (from == 0) lib->init(&enc, buffer, bound, NULL);
            else lib->restart(&enc, buffer, bound);
            if (mode == MANY)
                lib->append_many(&enc, s->ts + from, (const double *)(const void *)(s->bits + from), take, NULL);
            else
                for (size_t i = from; i < from + take; i++) lib->append(&enc, s->ts[i], s->bits[i]);
            w->sizes[at] = lib->finish(&enc);
            bytes += w->sizes[at];
        }
    }
    return bytes;
}

static double decode_all(const library *lib, const workload *w)
{
    static int64_t ts[MAX_CHUNK];
    static double values[MAX_CHUNK];
    double sum = 0;
    for (size_t c = 0; c < w->nchunks; c++) {
        size_t got = lib->decode(w->buffers + c * bound, w->sizes[c], ts, values, MAX_CHUNK);
        sum += got <= MAX_CHUNK && got ? values[got - 1] : 0;
    }
    return sum;
}

static int load_workload(workload *w, char **paths, int npaths)
{
    memset(w, 0, sizeof *w);
    for (int p = 0; p < npaths && w->nseries < MAX_SERIES; p++)
        w->nseries += wl_load_dataset(paths[p], w->series + w->nseries, MAX_SERIES - w->nseries);
    for (size_t k = 0; k < w->nseries; k++) {
        w->samples += w->series[k].n;
        w->nchunks += (w->series[k].n + chunk - 1) / chunk;
    }
    w->buffers = malloc(w->nchunks * bound + 1);
    w->sizes = calloc(w->nchunks + 1, sizeof *w->sizes);
    return w->samples && w->buffers && w->sizes;
}

int main(int argc, char **argv)
{
    int mode = APPEND, passes = 21, arg = 1;
    for (; arg < argc && argv[arg][0] == '-'; arg++) {
        if (!strcmp(argv[arg], "--many")) mode = MANY;
        else if (!strcmp(argv[arg], "--decode")) mode = DECODE;
        else if (!strcmp(argv[arg], "--prom")) mode = PROM;
        else if (!strcmp(argv[arg], "--passes") && arg + 1 < argc) passes = atoi(argv[++arg]);
        else if (!strcmp(argv[arg], "--chunk") && arg + 1 < argc) chunk = (size_t)atoi(argv[++arg]);
    }
    bound = mode == PROM ? TSCHUNK_PROM_BOUND(chunk) : TSCHUNK_BOUND(chunk);
    if (argc - arg < 3 || passes < 1 || passes > MAX_PASSES || chunk < 2 || chunk > MAX_CHUNK) {
        fprintf(stderr,
                "usage: ab_series [--many | --decode | --prom] [--passes N<=%d] [--chunk 2..%d] A.so B.so DATASET ...\n",
                MAX_PASSES, MAX_CHUNK);
        return 2;
    }
    library lib[2] = {load(argv[arg]), load(argv[arg + 1])};
    static workload w;
    if (!load_workload(&w, argv + arg + 2, argc - arg - 2)) {
        fprintf(stderr, "ab_series: no samples loaded\n");
        return 2;
    }
    int warm = mode == PROM ? PROM : MANY; /* warm-up; decode's input */
    size_t bytes[2] = {append_all(&lib[0], &w, warm), append_all(&lib[1], &w, warm)};
    double took[2][MAX_PASSES], sum = 0;
    for (int pass = 0; pass < 2 * passes; pass++) {
        const library *l = &lib[pass & 1];
        double start = now_ns();
        if (mode == DECODE) sum += decode_all(l, &w);
        else bytes[pass & 1] = append_all(l, &w, mode);
        took[pass & 1][pass / 2] = (now_ns() - start) / (double)w.samples;
    }
    double a = median(took[0], passes), b = median(took[1], passes);
    const char *what = mode == DECODE ? "decode" : mode == MANY ? "append_many"
                       : mode == PROM ? "Prometheus XOR append one at a time" : "append one at a time";
    printf("%s, %zu series, %zu samples, %zu-sample chunks, %d passes each: A %.3f  B %.3f ns a sample (%+.1f%%); "
           "bytes A %zu B %zu\n",
           what, w.nseries, w.samples, chunk, passes, a, b, 100 * (b / a - 1), bytes[0], bytes[1]);
    sink = sum; /* the decoded values are used */
    return 0;
}
