/* Runtime version of the linked library. */
#include "common.h"

unsigned tschunk_version_number(void) { return TSCHUNK_VERSION_NUMBER; }
const char *tschunk_version_string(void) { return TSCHUNK_VERSION_STRING; }
