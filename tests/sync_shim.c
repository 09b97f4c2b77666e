/*
 * Preloaded (LD_PRELOAD) into a CLI run by test_cli's durability test: every fsync the run makes is written to
 * the file TSCHUNK_SYNC_REPORT names, one line each, "file PATH" or "dir PATH" (PATH as /proc/self/fd shows it),
 * in call order, so that the test can see that each output's directory was synced after its rename.
 * Built without sanitizers, as oom_shim.c; single-threaded, as the CLI is.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int fsync(int fd);

static void report(int fd)
{
    const char *path = getenv("TSCHUNK_SYNC_REPORT");
    char link[64], target[4096], line[4200];
    struct stat st;
    if (!path || fstat(fd, &st) != 0) return;
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, target, sizeof target - 1);
    if (n < 0) return;
    target[n] = 0;
    int len = snprintf(line, sizeof line, "%s %s\n", S_ISDIR(st.st_mode) ? "dir" : "file", target);
    int out = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (out < 0) return;
    if (len > 0 && write(out, line, (size_t)len) != len) perror("sync_shim: report");
    close(out);
}

int fsync(int fd)
{
    static int (*next_fsync)(int);
    if (!next_fsync) *(void **)&next_fsync = dlsym(RTLD_NEXT, "fsync");
    report(fd);
    return next_fsync ? next_fsync(fd) : -1;
}
