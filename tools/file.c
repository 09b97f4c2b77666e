/* The CLI's files of chunks: Prometheus file writer (temp file + rename) and checked reader. */
#define _POSIX_C_SOURCE 200809L
#include "file.h"

#include "segment/durable.h"
#include "tschunk.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static const unsigned char magic[4] = {'T', 'S', 'C', 'F'};

static int put_uvarint(FILE *f, uint64_t v)
{
    unsigned char b[10];
    size_t n = 0;
    while (v >= 0x80) {
        b[n++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    b[n++] = (unsigned char)v;
    return fwrite(b, 1, n, f) == n ? (int)n : -1;
}

int tscf_create(tscf_writer *w, const char *path, const char *replaces)
{
    memset(w, 0, sizeof(*w));
    w->final_path = path;
    w->out = tsc_create_temp(path, replaces, w->tmp_path, sizeof w->tmp_path);
    if (!w->out) w->tmp_path[0] = 0; /* a name that is not this writer's to remove */
    return w->out ? 0 : -1;
}

int tscf_write_chunk(tscf_writer *w, const void *chunk, size_t size, uint32_t samples)
{
    int n = put_uvarint(w->out, size);
    if (n < 0 || fwrite(chunk, 1, size, w->out) != size) return -1;
    w->bytes += (uint64_t)n + size;
    w->samples += samples;
    w->chunks++;
    return 0;
}

int tscf_commit(tscf_writer *w)
{
    int rc = tsc_commit_file(w->out, w->tmp_path, w->final_path);
    w->out = NULL;
    w->tmp_path[0] = 0; /* renamed, or removed by the commit */
    return rc;
}

void tscf_abort(tscf_writer *w)
{
    if (w->out) fclose(w->out);
    w->out = NULL;
    if (w->tmp_path[0]) remove(w->tmp_path);
}

/* A stream (a FIFO, a device) read whole into memory, up to STREAM_MAX bytes: /dev/zero must end in a message,
 * not in the memory running out. 4 GiB, or 2 GiB where size_t has 32 bits (a buffer doubled past that wraps). */
#define STREAM_MAX (SIZE_MAX > UINT32_MAX ? UINT64_C(1) << 32 : UINT64_C(1) << 31)

static unsigned char *read_stream(int fd, size_t *size, const char *path, char *error, size_t error_size)
{
    size_t cap = 1 << 16, got = 0;
    unsigned char *data = malloc(cap);
    const char *why = NULL;
    while (data && !why) {
        ssize_t n = read(fd, data + got, cap - got);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) why = strerror(errno);
        if (n <= 0) break;
        got += (size_t)n;
        if (data[0] == 0) why = "not a segment, a chunk file or a Prometheus file"; /* none starts with 0 */
        else if (got == cap && (uint64_t)cap >= STREAM_MAX)
            why = SIZE_MAX > UINT32_MAX ? "a stream of more than 4 GiB (give a file)"
                                        : "a stream of more than 2 GiB (give a file)";
        else if (got == cap) {
            unsigned char *grown = realloc(data, cap *= 2);
            if (!grown) free(data);
            data = grown;
        }
    }
    if (data && !why) {
        *size = got;
        return data;
    }
    snprintf(error, error_size, "%s: %s", path, why ? why : "out of memory");
    free(data);
    return NULL;
}

int tscf_open(tscf_reader *r, const char *path)
{
    memset(r, 0, sizeof(*r));
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        snprintf(r->error, sizeof r->error, "cannot open %s: %s", path, strerror(errno));
        if (fd >= 0) close(fd);
        return -1;
    }
    if (S_ISDIR(st.st_mode)) {
        snprintf(r->error, sizeof r->error, "%s is a directory", path);
        close(fd);
        return -1;
    }
    /* A file is mapped, not read: a segment's reader touches the pages it needs (one series of a large file). */
    size_t size = 0, mapped = S_ISREG(st.st_mode) && st.st_size > 0 ? (size_t)st.st_size : 0;
    unsigned char *data = NULL;
    if (mapped) {
        void *m = mmap(NULL, mapped, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m != MAP_FAILED) {
            data = m;
            size = mapped;
        } else {
            snprintf(r->error, sizeof r->error, "cannot map %s: %s", path, strerror(errno));
        }
    } else if (!S_ISREG(st.st_mode)) {
        data = read_stream(fd, &size, path, r->error, sizeof r->error);
    } else {
        data = malloc(1); /* an empty file: tscf_open_bytes says so */
        if (!data) snprintf(r->error, sizeof r->error, "out of memory reading %s", path);
    }
    close(fd);
    if (!data) return -1;
    int rc = tscf_open_bytes(r, data, size, path);
    r->mapped = mapped;
    return rc;
}

/* The compressed forms a CSV may come in, by their magic bytes, and the tool that writes each out. */
static const struct {
    const char *tool;
    unsigned char magic[6];
    size_t len;
} packers[] = {
    {"gzip", {0x1f, 0x8b}, 2},
    {"bzip2", {'B', 'Z', 'h'}, 3},
    {"xz", {0xfd, '7', 'z', 'X', 'Z', 0}, 6},
    {"zstd", {0x28, 0xb5, 0x2f, 0xfd}, 4},
};

const char *packer_of_bytes(const unsigned char *head, size_t n)
{
    for (size_t k = 0; k < sizeof packers / sizeof packers[0]; k++)
        if (n >= packers[k].len && !memcmp(head, packers[k].magic, packers[k].len)) return packers[k].tool;
    return NULL;
}

/* Text: no control byte but tab and line breaks in the first 512 bytes. Every binary file tschunk reads has one
 * there (a segment's header, a Prometheus chunk's sample count, whose high byte is below 0x20 up to 8,191 samples). */
static int looks_like_text(const unsigned char *p, size_t size)
{
    size_t n = size < 512 ? size : 512;
    for (size_t i = 0; i < n; i++)
        if (p[i] < 0x20 && p[i] != '\t' && p[i] != '\n' && p[i] != '\r') return 0;
    return 1;
}

int tscf_open_bytes(tscf_reader *r, unsigned char *data, size_t size, const char *name)
{
    memset(r, 0, sizeof(*r));
    r->data = data;
    r->size = size;
    if (r->size < 8 || memcmp(r->data, magic, 4) != 0) {
        /* Not native: Prometheus records, checked as they are read. */
        r->format = FORMAT_PROM;
        r->unit = 2; /* Prometheus timestamps are milliseconds */
        if (r->size == 0) {
            snprintf(r->error, sizeof r->error, "%s: empty file", name);
            return -1;
        }
        if (looks_like_text(r->data, r->size)) {
            snprintf(r->error, sizeof r->error, "%s: a text file (CSV?), not a segment or a chunk file: "
                     "tschunk compress reads CSV", name);
            return -1;
        }
        const char *packer = packer_of_bytes(r->data, r->size);
        if (packer) {
            snprintf(r->error, sizeof r->error, "%s: a file compressed by %s (a CSV? tschunk compress reads it), not "
                     "a segment or a chunk file", name, packer);
            return -1;
        }
        return 0;
    }
    if (r->data[4] != 1 || r->data[5] > 4 || (r->data[6] & ~1u) || r->data[7]) {
        snprintf(r->error, sizeof r->error, "%s: unsupported file version or reserved bytes set", name);
        return -1;
    }
    r->unit = r->data[5];
    r->summaries = r->data[6] & 1;
    r->pos = 8;
    return 0;
}

static int get_uvarint(tscf_reader *r, uint64_t *v)
{
    *v = 0;
    for (unsigned shift = 0; shift < 64 && r->pos < r->size; shift += 7) {
        unsigned char b = r->data[r->pos++];
        *v |= (uint64_t)(b & 0x7f) << shift;
        if (b < 0x80) return 0;
    }
    return -1;
}

void tscf_rewind(tscf_reader *r)
{
    r->pos = r->format == FORMAT_NATIVE ? 8 : 0;
    r->chunks_seen = r->samples_seen = 0;
}

static int next_prom(tscf_reader *r, const unsigned char **chunk, size_t *size)
{
    if (r->pos == r->size) return 0;
    uint64_t len;
    size_t at = r->pos;
    if (get_uvarint(r, &len) != 0 || len == 0 || len > r->size - r->pos) {
        snprintf(r->error, sizeof r->error,
                 "not a tschunk file, nor Prometheus chunks: bad record length at byte %zu", at);
        return -1;
    }
    tschunk_prom_iter it;
    size_t err = tschunk_prom_iter_init(&it, r->data + r->pos, (size_t)len);
    if (tschunk_is_error(err)) {
        snprintf(r->error, sizeof r->error, "Prometheus chunk %llu at byte %zu: %s",
                 (unsigned long long)r->chunks_seen, at, tschunk_error_name(err));
        return -1;
    }
    *chunk = r->data + r->pos;
    *size = (size_t)len;
    r->pos += (size_t)len;
    r->chunks_seen++;
    r->samples_seen += tschunk_prom_count(*chunk, *size);
    return 1;
}

int tscf_next(tscf_reader *r, const unsigned char **chunk, size_t *size)
{
    if (r->format == FORMAT_PROM) return next_prom(r, chunk, size);
    uint64_t len;
    if (get_uvarint(r, &len) != 0) {
        snprintf(r->error, sizeof r->error, "truncated at byte %zu (no end record)", r->pos);
        return -1;
    }
    if (len == 0) {
        uint64_t samples, chunks;
        if (get_uvarint(r, &samples) || get_uvarint(r, &chunks) || r->pos != r->size ||
            samples != r->samples_seen || chunks != r->chunks_seen) {
            snprintf(r->error, sizeof r->error, "end record does not match the chunks read");
            return -1;
        }
        return 0;
    }
    if (len > r->size - r->pos) {
        snprintf(r->error, sizeof r->error, "chunk at byte %zu runs past the end of the file", r->pos);
        return -1;
    }
    tschunk_chunk_info info;
    size_t err = tschunk_chunk_info_get(r->data + r->pos, (size_t)len, &info);
    if (tschunk_is_error(err)) {
        snprintf(r->error, sizeof r->error, "chunk %llu at byte %zu: %s", (unsigned long long)r->chunks_seen,
                 r->pos, tschunk_error_name(err));
        return -1;
    }
    *chunk = r->data + r->pos;
    *size = (size_t)len;
    r->pos += (size_t)len;
    r->chunks_seen++;
    r->samples_seen += info.count;
    r->summary = NULL;
    r->summary_size = 0;
    if (r->summaries) {
        uint64_t slen;
        if (get_uvarint(r, &slen) != 0 || slen > r->size - r->pos) {
            snprintf(r->error, sizeof r->error, "summary of chunk %llu runs past the end of the file",
                     (unsigned long long)r->chunks_seen - 1);
            return -1;
        }
        r->summary = r->data + r->pos;
        r->summary_size = (size_t)slen;
        r->pos += (size_t)slen;
    }
    return 1;
}

void tscf_close(tscf_reader *r)
{
    if (r->mapped && r->data) munmap(r->data, r->mapped);
    else free(r->data);
    r->data = NULL;
    r->mapped = 0;
}
