/* Running the CLI from a test: test_cli.c and test_cli_oom.c. */
#ifndef TSCHUNK_CLI_UTIL_H
#define TSCHUNK_CLI_UTIL_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static inline const char *cli(void)
{
    const char *c = getenv("TSCHUNK_CLI");
    cr_assert(c && *c, "TSCHUNK_CLI is not set (make test sets it)");
    return c;
}

/* The preloadable shim `name` (oom_shim.so, sync_shim.so), which the Makefile builds beside run_tests, in path. */
static inline const char *shim_path(const char *name, char *path, size_t cap)
{
    ssize_t n = readlink("/proc/self/exe", path, cap - 64);
    cr_assert(n > 0);
    path[n] = 0;
    strcpy(strrchr(path, '/') + 1, name);
    cr_assert(access(path, R_OK) == 0, "%s is missing (the Makefile builds it beside run_tests)", path);
    return path;
}

/* Run a shell command line; returns the exit status (-1: killed by a signal), its output in *out (may be
 * NULL; the tail when it does not fit). */
static inline int run_line(char *out, size_t out_size, const char *cmd)
{
    FILE *p = popen(cmd, "r");
    cr_assert(p);
    size_t n = 0;
    char sink[4096];
    char *buf = out ? out : sink;
    size_t cap = out ? out_size : sizeof sink;
    size_t got;
    while ((got = fread(buf + n, 1, cap - 1 - n, p)) > 0) {
        n += got;
        if (n == cap - 1) n = 0; /* keep the tail */
    }
    buf[n] = 0;
    int status = pclose(p);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

#endif
