/*
 * The CLI's files of chunks. The chunk file ("TSCF" v1, tschunk 0.1 to the segments' arrival) is read only, so that
 * old files still open; the CLI writes segments (lib/segment) and, for export-prom, Prometheus files atomically.
 *
 *   bytes 0-3  "TSCF"
 *   byte  4    file version (1)
 *   byte  5    timestamp unit (0 raw integers, 1 s, 2 ms, 3 us, 4 ns)
 *   byte  6    flags: bit 0 = every record carries a summary blob; other bits zero
 *   byte  7    reserved, zero
 *   records    uvarint chunk length (> 0), then the chunk bytes; with flag bit 0,
 *              then uvarint summary length and the summary blob (README "Summary blob v1")
 *   end        uvarint 0, uvarint total samples, uvarint chunk count
 *
 * The end record lets a reader tell a complete file from a truncated one.
 *
 * A Prometheus file (export-prom) is only records: uvarint length, then the
 * chunk bytes exactly as Prometheus' XORChunk.Bytes() returns them; no header
 * and no end record. tscf_open tells the two apart by the magic.
 */

#ifndef TSCHUNK_CLI_FILE_H
#define TSCHUNK_CLI_FILE_H

enum file_format { FORMAT_NATIVE = 0, FORMAT_PROM = 1 };

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The tool that unpacks a file whose first bytes are head[0, n): "gzip", "bzip2", "xz" or "zstd" by their magic,
 * else NULL. */
const char *packer_of_bytes(const unsigned char *head, size_t n);

/* A Prometheus file being written: to a temporary file, renamed into place by tscf_commit. */
typedef struct {
    FILE *out;
    char tmp_path[4200];
    const char *final_path;
    uint64_t samples;
    uint64_t chunks;
    uint64_t bytes;
} tscf_writer;

/* A temporary file for path that takes the mode of `replaces` (path, or the output a staged file will become:
 * tsc_create_temp). @return 0, or -1 with errno set. */
int tscf_create(tscf_writer *w, const char *path, const char *replaces);
int tscf_write_chunk(tscf_writer *w, const void *chunk, size_t size, uint32_t samples);
/* Flush, fsync, rename into place and sync the directory (tsc_commit_file). @return 0, -1 (not written) or -2 (written,
 * the directory not synced), with errno. */
int tscf_commit(tscf_writer *w);
/* Remove the temporary file: the final path is never left half-written. */
void tscf_abort(tscf_writer *w);

typedef struct {
    unsigned char *data; /* whole file: mapped read-only (a regular file), else read into memory */
    size_t size;
    size_t mapped; /* bytes mapped at data; 0: malloc'd */
    size_t pos;
    int unit;
    int format;
    int summaries;
    const unsigned char *summary; /* of the chunk tscf_next returned last, or NULL */
    size_t summary_size;
    uint64_t chunks_seen;
    uint64_t samples_seen;
    char error[256];
} tscf_reader;

/* @return 0, or -1 with r->error set (r->data then NULL: tscf_close is harmless). */
int tscf_open(tscf_reader *r, const char *path);
/* The same over bytes already read (malloc'd: tscf_close frees them), named `name` in errors. */
int tscf_open_bytes(tscf_reader *r, unsigned char *data, size_t size, const char *name);
/* Back to the first chunk. */
void tscf_rewind(tscf_reader *r);
/* @return 1 with the next chunk, 0 after a valid end record, -1 on damage (r->error). */
int tscf_next(tscf_reader *r, const unsigned char **chunk, size_t *size);
void tscf_close(tscf_reader *r);

#endif
