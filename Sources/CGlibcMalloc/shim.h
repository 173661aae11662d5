// glibc's malloc tuning (mallopt, M_ARENA_MAX), which Swift's Glibc module does not export.
#include <malloc.h>
