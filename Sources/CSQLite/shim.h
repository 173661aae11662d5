// SQLite, plus one POSIX call Swift's Glibc module hides (a GNU extension): naming the
// calling thread, so that `top -H`, `perf` and /proc tell the checkpoint thread apart.
#define _GNU_SOURCE
#include <pthread.h>
#include <sqlite3.h>

/// Names the calling thread; `name` is at most 15 bytes.
static inline int logbook_sqlite_name_this_thread(const char *name) {
    return pthread_setname_np(pthread_self(), name);
}
