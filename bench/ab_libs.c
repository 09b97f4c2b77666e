/*
 * Same-process A/B of two libtschunk.so builds: the steadiest wall-time
 * comparison a noisy VM allows. Both libraries are loaded with dlopen; the
 * same 1,024-sample chunks (codec 2, default options) are encoded and decoded
 * by each in turn, and each keeps its fastest of PASSES passes per chunk, so
 * that a slow moment of the machine hits both alike.
 *
 *   ab_libs A.so B.so [DATASET.gz ...]     (no datasets: gauge-2dp, counter, const-jitter)
 *
 * Pin it to one core (taskset -c 1) for the figures in the README.
 */
#include "workloads.h" /* first: it sets _POSIX_C_SOURCE for popen */

#include <dlfcn.h>

#include "tschunk.h"
#include "timing.h"

#define CHUNK 1024
#define CHUNKS_PER_SERIES 8
#define PASSES 300
#define MAX_SERIES 64

typedef struct {
    size_t (*init)(tschunk_encoder *, void *, size_t, const tschunk_encoder_options *);
    size_t (*append)(tschunk_encoder *, int64_t, uint64_t);
    size_t (*finish)(tschunk_encoder *);
    size_t (*decode)(const void *, size_t, int64_t *, double *, size_t);
} library;

static void *symbol(void *handle, const char *name)
{
    void *p = dlsym(handle, name);
    if (!p) {
        fprintf(stderr, "ab_libs: %s\n", dlerror());
        exit(2);
    }
    return p;
}

static library load(const char *path)
{
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        fprintf(stderr, "ab_libs: %s\n", dlerror());
        exit(2);
    }
    library lib;
    *(void **)&lib.init = symbol(handle, "tschunk_encoder_init");
    *(void **)&lib.append = symbol(handle, "tschunk_append_bits");
    *(void **)&lib.finish = symbol(handle, "tschunk_encoder_finish");
    *(void **)&lib.decode = symbol(handle, "tschunk_decode");
    return lib;
}

static unsigned char chunk[TSCHUNK_BOUND(CHUNK)];
static int64_t ts_out[CHUNK];
static double values_out[CHUNK];

/* Fastest append and decode of one chunk (samples from..from+CHUNK), in ns for the whole chunk. */
static void time_chunk(const library *lib, const wl_series *s, size_t from, double *best_append, double *best_decode)
{
    tschunk_encoder enc;
    double start = now_ns();
    lib->init(&enc, chunk, sizeof chunk, NULL);
    for (size_t i = from; i < from + CHUNK; i++) lib->append(&enc, s->ts[i], s->bits[i]);
    size_t size = lib->finish(&enc);
    double t = now_ns() - start;
    if (t < *best_append) *best_append = t;
    start = now_ns();
    lib->decode(chunk, size, ts_out, values_out, CHUNK);
    t = now_ns() - start;
    if (t < *best_decode) *best_decode = t;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: ab_libs A.so B.so [DATASET.gz ...]\n");
        return 2;
    }
    library libs[2] = {load(argv[1]), load(argv[2])};
    static wl_series series[MAX_SERIES];
    size_t count = 0;
    for (int a = 3; a < argc && count < MAX_SERIES; a++) count += wl_load_dataset(argv[a], series + count, MAX_SERIES - count);
    if (argc == 3) {
        int kinds[] = {WL_GAUGE_2DP, WL_COUNTER, WL_CONST_JITTER};
        for (size_t k = 0; k < 3; k++) wl_synthetic(&series[count++], kinds[k], CHUNK * CHUNKS_PER_SERIES, 7);
    }
    double total[2][2] = {{0}};
    size_t samples = 0;
    printf("| series | append A | append B | decode A | decode B |\n|---|---:|---:|---:|---:|\n");
    for (size_t s = 0; s < count; s++) {
        size_t chunks = series[s].n / CHUNK < CHUNKS_PER_SERIES ? series[s].n / CHUNK : CHUNKS_PER_SERIES;
        double sum[2][2] = {{0}};
        for (size_t c = 0; c < chunks; c++) {
            double best[2][2] = {{1e18, 1e18}, {1e18, 1e18}};
            for (int pass = 0; pass < PASSES; pass++)
                for (int l = 0; l < 2; l++) time_chunk(&libs[l], &series[s], c * CHUNK, &best[l][0], &best[l][1]);
            for (int l = 0; l < 2; l++) sum[l][0] += best[l][0], sum[l][1] += best[l][1];
        }
        if (!chunks) continue;
        double n = (double)(chunks * CHUNK);
        printf("| %s | %.2f | %.2f | %.2f | %.2f |\n", series[s].name, sum[0][0] / n, sum[1][0] / n, sum[0][1] / n,
               sum[1][1] / n);
        for (int l = 0; l < 2; l++) total[l][0] += sum[l][0], total[l][1] += sum[l][1];
        samples += chunks * CHUNK;
    }
    printf("| all | %.2f | %.2f | %.2f | %.2f |\n\nns per sample: each library's fastest of %d passes per chunk.\n",
           total[0][0] / (double)samples, total[1][0] / (double)samples, total[0][1] / (double)samples,
           total[1][1] / (double)samples, PASSES);
    for (size_t s = 0; s < count; s++) wl_free(&series[s]);
    return 0;
}
