/* Every shared dataset round-trips bit-exactly (when ../shared/datasets is present). */
#include "test_util.h"

static const char *datasets_dir(void)
{
    static char dir[600];
    snprintf(dir, sizeof dir, "%s/../shared/datasets", repo_dir());
    return dir;
}

Test(datasets, shipped_demo_data_round_trips)
{
    char path[700];
    snprintf(path, sizeof path, "%s/tests/data/nab_ambient_temperature_system_failure.csv.gz", repo_dir());
    wl_series s[1];
    cr_assert_eq(wl_load_dataset(path, s, 1), 1, "cannot read %s", path);
    cr_assert_eq(s[0].n, 7267);
    roundtrip_series(&s[0], 120);
    wl_free(&s[0]);
}

Test(datasets, every_shared_dataset_round_trips, .timeout = 300)
{
    static char paths[64][512];
    size_t n = wl_list_datasets(datasets_dir(), paths, 64);
    if (n == 0) {
        /* Said on stderr, not with cr_log_warn: Criterion 2.4.1 exits 1 after a warning even
         * when every test passes, and a user's clone has no ../shared. */
        fprintf(stderr, "no datasets at %s: shared datasets not checked\n", datasets_dir());
        return;
    }
    size_t samples = 0;
    for (size_t i = 0; i < n; i++) {
        wl_series s[8];
        size_t k = wl_load_dataset(paths[i], s, 8);
        cr_assert_gt(k, 0, "cannot load %s", paths[i]);
        for (size_t j = 0; j < k; j++) {
            cr_assert_gt(s[j].n, 1000, "%s: only %zu samples", s[j].name, s[j].n);
            roundtrip_series(&s[j], 120);
            roundtrip_series(&s[j], 1024);
            samples += s[j].n;
            wl_free(&s[j]);
        }
    }
    cr_log_info("%zu datasets, %zu samples round-tripped", n, samples);
    cr_assert_geq(n, 38);
}
