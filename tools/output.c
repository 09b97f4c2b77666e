/* The CLI's output files: tools/output.h. */
#define _POSIX_C_SOURCE 200809L
#include "output.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* The files the handler removes: the temporary file being written and a staged output (--verify) not yet published
 * (the CLI writes one output at a time). Their names are copied here, so that none dangles whatever path a command
 * returns by; a slot's pointer is cleared before its name changes and set after, a pointer store being atomic on
 * the platforms tschunk builds on. The handler only reads them and calls unlink, which is async-signal-safe. */
static char temp_name[4200], staged_name[4200];
static const char *volatile removed_temp, *volatile removed_staged;

static void name_slot(const char *volatile *slot, char *name, size_t cap, const char *path)
{
    *slot = NULL;
    if (!path || strlen(path) >= cap) return;
    memcpy(name, path, strlen(path) + 1);
    *slot = name;
}

void signal_removes_temp(const char *path) { name_slot(&removed_temp, temp_name, sizeof temp_name, path); }
void signal_removes_staged(const char *path) { name_slot(&removed_staged, staged_name, sizeof staged_name, path); }

static void on_signal(int sig)
{
    const char *temp = removed_temp, *staged = removed_staged;
    if (temp) unlink(temp);
    if (staged) unlink(staged);
    raise(sig); /* the default action, restored by SA_RESETHAND: the CLI ends as the signal says */
}

void remove_on_signals(void)
{
    static const int signals[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof signals / sizeof signals[0]; i++) {
        struct sigaction sa, was;
        /* A signal ignored on entry stays ignored (a background job's SIGINT, nohup's SIGHUP). */
        if (sigaction(signals[i], NULL, &was) != 0 || was.sa_handler == SIG_IGN) continue;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sa.sa_flags = SA_RESETHAND;
        sigemptyset(&sa.sa_mask);
        sigaction(signals[i], &sa, NULL);
    }
}

int output_create(output_file *f, const char *path, const char *replaces)
{
    memset(f, 0, sizeof *f);
    f->path = path;
    f->file.out = tsc_create_temp(path, replaces, f->tmp, sizeof f->tmp);
    if (!f->file.out) return fail("cannot create %s: %s", path, strerror(errno));
    signal_removes_temp(f->tmp);
    f->io = (tschunk_segment_io){tsc_file_write_at, tsc_file_read_at, &f->file};
    return 0;
}

int output_commit(output_file *f)
{
    int rc = committed(tsc_commit_file(f->file.out, f->tmp, f->path), f->path);
    signal_removes_temp(NULL);
    f->file.out = NULL;
    return rc;
}

void output_discard(output_file *f)
{
    if (!f->file.out) return;
    fclose(f->file.out);
    f->file.out = NULL;
    remove(f->tmp);
    signal_removes_temp(NULL);
}
