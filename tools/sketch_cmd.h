/* tschunk sketch encode|decode. */
#ifndef TSCHUNK_CLI_SKETCH_H
#define TSCHUNK_CLI_SKETCH_H

/* A non-error result that is not 0, for "could not even start". */
#define TSC_CLI_ERROR ((size_t)-1)

int cmd_sketch(int argc, char **argv);

#endif
