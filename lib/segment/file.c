/*
 * tschunk_segment_open_file: a segment file mapped read-only and opened in place, the mapping owned by the
 * segment. Segments are immutable files replaced by rename (writer, delete, compaction, merge), so a mapping
 * keeps reading the bytes it was opened on, whatever is renamed over the path afterwards.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format.h"

void tsc_seg_unmap(void *mapping, size_t size) { munmap(mapping, size); }

/* Map fd whole; a file that is not a regular one, or is larger than the address space, is a file error. */
static size_t map_file(int fd, void **mapping, size_t *size)
{
    struct stat st;
    if (fstat(fd, &st) != 0) return TSC_ERROR(GENERIC);
    if (!S_ISREG(st.st_mode)) {
        errno = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
        return TSC_ERROR(GENERIC);
    }
    if (st.st_size == 0) return TSC_ERROR(TRUNCATED); /* mmap refuses an empty length */
    if ((uintmax_t)st.st_size > SIZE_MAX) {
        errno = EFBIG;
        return TSC_ERROR(GENERIC);
    }
    void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) return TSC_ERROR(GENERIC);
    *mapping = map;
    *size = (size_t)st.st_size;
    return 0;
}

size_t tschunk_segment_open_file(tschunk_segment **out, const char *path, unsigned flags,
                                 const tschunk_allocator *allocator)
{
    if (out) *out = NULL;
    if (!out || !path) return TSC_ERROR(BAD_PARAMETER);
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY); /* a FIFO must not wait for a writer */
    if (fd < 0) return TSC_ERROR(GENERIC);
    void *mapping = NULL;
    size_t size = 0, err = map_file(fd, &mapping, &size);
    int saved_errno = errno;
    close(fd); /* the mapping holds the file */
    errno = saved_errno;
    if (err) return err;
    err = tschunk_segment_open(out, mapping, size, flags, allocator);
    if (err) {
        munmap(mapping, size);
        return err;
    }
    (*out)->mapping = mapping;
    (*out)->mapping_size = size;
    return 0;
}
