/* Durable file replacement: lib/segment/durable.h. */
#define _POSIX_C_SOURCE 200809L
#include "durable.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int tsc_directory_of(const char *path, char *dir, size_t cap)
{
    const char *slash = strrchr(path, '/');
    size_t len = !slash ? 1 : slash == path ? 1 : (size_t)(slash - path);
    if (len >= cap) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(dir, slash ? path : ".", len);
    dir[len] = 0;
    return 0;
}

int tsc_sync_directory_of(const char *path)
{
    char dir[4096]; /* PATH_MAX: a longer path could not have been renamed to */
    if (tsc_directory_of(path, dir, sizeof dir)) return -1;
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return errno == EACCES ? 0 : -1;
    int rc = fsync(fd), failed = errno;
    close(fd);
    if (rc == 0 || failed == EINVAL) return 0;
    errno = failed;
    return -1;
}

/* A file that replaces another takes its owner, group and permission bits: a private segment rewritten by a delete
 * must not come back readable by all (the umask's default). It is created for its owner alone, so that no one else
 * can open it before it has them. Owner and group only as far as the process may set them (fchown fails for anyone
 * but root and members of the group); set-id and sticky bits are not copied. */
static void take_mode(int fd, const struct stat *old)
{
    struct stat now;
    if (fstat(fd, &now) != 0) return;
    if ((old->st_uid != now.st_uid || old->st_gid != now.st_gid) && fchown(fd, old->st_uid, old->st_gid) != 0)
        (void)!fchown(fd, (uid_t)-1, old->st_gid);
    (void)!fchmod(fd, old->st_mode & 0777);
}

FILE *tsc_create_temp(const char *path, const char *replaces, char *tmp, size_t cap)
{
    long pid = (long)getpid();
    struct stat old;
    int keeps = stat(replaces, &old) == 0 && S_ISREG(old.st_mode);
    for (unsigned k = 0; k < 1000; k++) {
        int n = k ? snprintf(tmp, cap, "%s.tmp.%ld.%u", path, pid, k) : snprintf(tmp, cap, "%s.tmp.%ld", path, pid);
        if (n < 0 || (size_t)n >= cap) {
            errno = ENAMETOOLONG;
            return NULL;
        }
        int fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, keeps ? 0600 : 0666);
        if (fd < 0 && errno == EEXIST) continue;
        if (fd < 0) return NULL;
        if (keeps) take_mode(fd, &old);
        FILE *f = fdopen(fd, "w+b");
        if (!f) {
            int failed = errno;
            close(fd);
            remove(tmp);
            errno = failed;
        }
        return f;
    }
    return NULL; /* errno: EEXIST */
}

int tsc_file_write_at(void *ctx, const void *data, size_t n, uint64_t at)
{
    tsc_file_io *f = ctx;
    if (at != f->at && fseeko(f->out, (off_t)at, SEEK_SET)) return -1;
    f->at = at + n;
    return fwrite(data, 1, n, f->out) == n ? 0 : -1;
}

int tsc_file_read_at(void *ctx, void *data, size_t n, uint64_t at)
{
    tsc_file_io *f = ctx;
    return fflush(f->out) == 0 && pread(fileno(f->out), data, n, (off_t)at) == (ssize_t)n ? 0 : -1;
}

int tsc_commit_file(FILE *out, const char *tmp, const char *final_path)
{
    int ok = fflush(out) == 0 && fsync(fileno(out)) == 0;
    ok = fclose(out) == 0 && ok;
    ok = ok && rename(tmp, final_path) == 0;
    if (!ok) {
        int failed = errno; /* the failed call's, for the caller's message (GENERIC: errno says which) */
        remove(tmp);
        errno = failed;
        return -1;
    }
    return tsc_sync_directory_of(final_path) ? -2 : 0; /* the file is in place and whole even when this fails */
}

