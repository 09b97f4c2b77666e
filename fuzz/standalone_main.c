/* Replays a corpus directory (or files) through a harness without libFuzzer. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "harness.h"

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = malloc(len > 0 ? (size_t)len : 1);
    size_t got = buf ? fread(buf, 1, (size_t)len, f) : 0;
    fclose(f);
    if (!buf || got != (size_t)len) { free(buf); return -1; }
    LLVMFuzzerTestOneInput(buf, got);
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    size_t files = 0;
    for (int a = 1; a < argc; a++) {
        struct stat st;
        if (stat(argv[a], &st) != 0) { fprintf(stderr, "replay: cannot read %s\n", argv[a]); return 1; }
        if (!S_ISDIR(st.st_mode)) { files += run_file(argv[a]) == 0; continue; }
        DIR *d = opendir(argv[a]);
        struct dirent *e;
        while (d && (e = readdir(d))) {
            if (e->d_name[0] == '.') continue;
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", argv[a], e->d_name);
            if (run_file(path) != 0) { fprintf(stderr, "replay: cannot read %s\n", path); return 1; }
            files++;
        }
        if (d) closedir(d);
    }
    printf("replay %s: %zu inputs, no failure\n", argv[0], files);
    return 0;
}
