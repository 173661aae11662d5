// libzmq, plus the one POSIX call the socket layer needs that Swift's Glibc module hides
// (pipe2 is a GNU extension): a wake-up pipe created non-blocking and close-on-exec in
// one step, so a child process started at the same moment never inherits it.
#define _GNU_SOURCE
#include <fcntl.h>
#include <unistd.h>
#include <zmq.h>

static inline int logbook_wakeup_pipe(int descriptors[2]) {
    return pipe2(descriptors, O_NONBLOCK | O_CLOEXEC);
}
