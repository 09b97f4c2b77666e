/*
 * Files replaced durably: written under a temporary name of their own, synced, renamed into place, and their
 * directory synced. The segment writer, delete and the CLI's outputs use it (the CLI through -Ilib, as the
 * tests do). Internal: not part of the public API.
 */
#ifndef TSCHUNK_DURABLE_H
#define TSCHUNK_DURABLE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Room a temporary name needs beyond its path's length (".tmp." PID "." K, NUL). */
#define TSC_TEMP_SUFFIX 48

/* A new file beside path, for writing and reading, named into tmp (cap >= strlen(path) + TSC_TEMP_SUFFIX):
 * "path.tmp.PID", or "path.tmp.PID.K" for the first K that is free when that is taken (another writer of the same
 * path, a file a crash left, a planted link). Created exclusively (O_EXCL), so that no two writers share a file and
 * no link is followed. When `replaces` (the file the new one will be renamed over: path, or where a staged file will
 * go) names a regular file, the new one takes its permission bits, and its owner and group as far as the process
 * may set them. @return the file, or NULL with errno. */
FILE *tsc_create_temp(const char *path, const char *replaces, char *tmp, size_t cap);

/* A file as a tschunk_segment_io's ctx (tsc_file_write_at, tsc_file_read_at): writes in order need no seek. */
typedef struct {
    FILE *out;
    uint64_t at; /* where out's position is */
} tsc_file_io;

int tsc_file_write_at(void *ctx, const void *data, size_t n, uint64_t at);
int tsc_file_read_at(void *ctx, void *data, size_t n, uint64_t at);

/* Flush, fsync, close, rename tmp to final and fsync final's directory. @return 0; -1 with errno, the temporary file
 * removed and final untouched; or -2 with errno when only the directory's sync failed (the file is in place, whole). */
int tsc_commit_file(FILE *out, const char *tmp, const char *final_path);

/* The directory that holds path ("." for a bare name, "/" for a file at the root) into dir. @return 0, or -1 with
 * errno ENAMETOOLONG when it does not fit in cap bytes. */
int tsc_directory_of(const char *path, char *dir, size_t cap);

/* The directory that holds path synced: a file's fsync makes its bytes durable, not the name a rename gave it, so
 * without this a power loss right after a commit could leave the old file, or none, under the final name. A file
 * system that cannot sync a directory (EINVAL) and a directory that cannot be opened for reading (EACCES: rename
 * needs only write and search permission) are not errors. @return 0, or -1 with errno. */
int tsc_sync_directory_of(const char *path);

#endif
