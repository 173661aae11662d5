// libzmq, plus the two POSIX calls the socket layer needs that Swift's Glibc module hides
// (GNU extensions): a wake-up pipe created non-blocking and close-on-exec in one step, so
// a child process started at the same moment never inherits it; and naming the calling
// thread, so that `top -H`, `perf` and /proc tell the serving threads apart.
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>
#include <zmq.h>

static inline int logbook_wakeup_pipe(int descriptors[2]) {
    return pipe2(descriptors, O_NONBLOCK | O_CLOEXEC);
}

/// Names the calling thread (the kernel keeps at most 15 bytes; longer names are cut).
static inline void logbook_name_this_thread(const char *name) {
    char kept[16];
    int i = 0;
    for (; i < 15 && name[i] != 0; i++) kept[i] = name[i];
    kept[i] = 0;
    pthread_setname_np(pthread_self(), kept);
}
