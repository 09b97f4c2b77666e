/*
 * Preloaded (LD_PRELOAD) into a CLI run by test_cli's durability test: every fsync the run makes is written to
 * the file TSCHUNK_SYNC_REPORT names, one line each, "file PATH" or "dir PATH" (PATH as /proc/self/fd shows it),
 * in call order, so that the test can see that each output's directory was synced after its rename. With
 * TSCHUNK_SYNC_SLEEP=file (or dir), the first fsync of that kind sleeps 30 s once reported, so that the test can
 * interrupt the run there: before the rename, or (dir) right after it.
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

/* @return whether fd is a directory. */
static int report(int fd)
{
    const char *path = getenv("TSCHUNK_SYNC_REPORT");
    char link[64], target[4096], line[4200];
    struct stat st;
    if (!path || fstat(fd, &st) != 0) return 0;
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, target, sizeof target - 1);
    if (n < 0) return 0;
    target[n] = 0;
    int len = snprintf(line, sizeof line, "%s %s\n", S_ISDIR(st.st_mode) ? "dir" : "file", target);
    int out = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (out < 0) return 0;
    if (len > 0 && write(out, line, (size_t)len) != len) perror("sync_shim: report");
    close(out);
    return S_ISDIR(st.st_mode);
}

int fsync(int fd)
{
    static int (*next_fsync)(int);
    static int slept;
    if (!next_fsync) *(void **)&next_fsync = dlsym(RTLD_NEXT, "fsync");
    const char *sleep_at = getenv("TSCHUNK_SYNC_SLEEP");
    int dir = report(fd);
    if (sleep_at && !slept && !strcmp(sleep_at, dir ? "dir" : "file")) {
        slept = 1;
        sleep(30);
    }
    return next_fsync ? next_fsync(fd) : -1;
}
