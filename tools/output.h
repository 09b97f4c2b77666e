/* The CLI's output files: written under a temporary name of their own, committed durably, and removed when the CLI
 * is interrupted (SIGINT, SIGTERM, SIGHUP) before the commit. */
#ifndef TSCHUNK_OUTPUT_H
#define TSCHUNK_OUTPUT_H

#include "segment/durable.h"
#include "tschunk.h"

typedef struct {
    tsc_file_io file;      /* the temporary file */
    tschunk_segment_io io; /* over it, for the library's _io calls */
    char tmp[4200];
    const char *path;      /* the final name */
} output_file;

/* A temporary file beside path (tsc_create_temp: it takes the owner and mode of `replaces`, the file it will end up
 * replacing: path, or the output a staged file becomes), removed if a signal ends the CLI before output_commit or
 * output_discard. @return 0, or 1 after a message. */
int output_create(output_file *f, const char *path, const char *replaces);
/* Synced and renamed into place, its directory synced (tsc_commit_file). @return 0, or 1 after a message. */
int output_commit(output_file *f);
/* Closed and removed. */
void output_discard(output_file *f);

/* The handlers that remove the files named to signal_removes_temp and signal_removes_staged, then end the CLI by the
 * same signal (SIGINT, SIGTERM, SIGHUP; one ignored on entry stays ignored). */
void remove_on_signals(void);
/* The temporary file a signal removes from now on (NULL: none; its name is copied); output_create and output_commit
 * set it. */
void signal_removes_temp(const char *path);
/* The staged output (--verify's, before publish_staged) a signal removes (NULL: none). */
void signal_removes_staged(const char *path);

#endif
