// The floor under a consumer group's rate on this machine: one ROUTER hands out N messages
// of a Deliver's size, one per event, to M DEALER members over TCP loopback, each member
// holding at most K unacknowledged; each member acknowledges every batch its socket holds
// with one message listing the positions. No group logic, no log, no store: what libzmq
// and the kernel cost for one message per event out and batched acknowledgements back.
//
//   gcc -O2 -o /tmp/deliver-floor Benchmarks/tools/deliver-floor.c -lzmq -lpthread
//   /tmp/deliver-floor [EVENTS] [MEMBERS] [BYTES] [IN_FLIGHT]   (binds tcp://127.0.0.1:5987)
//
// Prints events delivered and acknowledged a second, and the processor time an event of
// the whole process (both ends and libzmq's I/O threads).
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <zmq.h>

static const char *endpoint = "tcp://127.0.0.1:5987";
static void *context;
static volatile int finished;

static double seconds_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static double processor_seconds(void) {
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6 + usage.ru_stime.tv_sec +
           usage.ru_stime.tv_usec / 1e6;
}

// A member: joins, then acknowledges what it holds, batch by batch, until told to stop.
static void *member(void *unused) {
    (void)unused;
    void *dealer = zmq_socket(context, ZMQ_DEALER);
    int linger = 0;
    zmq_setsockopt(dealer, ZMQ_LINGER, &linger, sizeof linger);
    zmq_connect(dealer, endpoint);
    zmq_send(dealer, "", 0, ZMQ_SNDMORE);
    zmq_send(dealer, "join", 4, 0);
    char buffer[65536];
    int64_t positions[4096];
    while (!finished) {
        zmq_pollitem_t item = {dealer, 0, ZMQ_POLLIN, 0};
        if (zmq_poll(&item, 1, 50) <= 0) continue;
        int count = 0;
        int flags = 0;
        while (count < 4096) {
            // [empty][deliver]
            if (zmq_recv(dealer, buffer, sizeof buffer, flags) < 0) break;
            int size = zmq_recv(dealer, buffer, sizeof buffer, 0);
            if (size >= 8) memcpy(&positions[count++], buffer, 8);
            flags = ZMQ_DONTWAIT;
        }
        if (count == 0) continue;
        zmq_send(dealer, "", 0, ZMQ_SNDMORE);
        zmq_send(dealer, positions, count * sizeof(int64_t), 0);
    }
    zmq_close(dealer);
    return NULL;
}

int main(int argc, char **argv) {
    long events = argc > 1 ? atol(argv[1]) : 1000000;
    int members = argc > 2 ? atoi(argv[2]) : 4;
    int bytes = argc > 3 ? atoi(argv[3]) : 400;
    int limit = argc > 4 ? atoi(argv[4]) : 256;
    if (members < 1 || members > 64 || bytes < 8 || bytes > 65536 || limit < 1) {
        fprintf(stderr, "usage: deliver-floor [EVENTS] [MEMBERS 1-64] [BYTES 8-65536] [IN_FLIGHT]\n");
        return 2;
    }
    context = zmq_ctx_new();
    void *router = zmq_socket(context, ZMQ_ROUTER);
    int hwm = 100000;
    zmq_setsockopt(router, ZMQ_SNDHWM, &hwm, sizeof hwm);
    zmq_setsockopt(router, ZMQ_RCVHWM, &hwm, sizeof hwm);
    if (zmq_bind(router, endpoint) != 0) {
        fprintf(stderr, "cannot bind %s: %s\n", endpoint, zmq_strerror(zmq_errno()));
        return 1;
    }
    pthread_t threads[64];
    for (int i = 0; i < members; i++) pthread_create(&threads[i], NULL, member, NULL);

    unsigned char identities[64][256];
    size_t identity_sizes[64];
    int credit[64];
    char frame[65536];
    for (int joined = 0; joined < members; joined++) {
        identity_sizes[joined] = zmq_recv(router, identities[joined], 256, 0);
        zmq_recv(router, frame, sizeof frame, 0);
        zmq_recv(router, frame, sizeof frame, 0);
        credit[joined] = limit;
    }
    char *payload = calloc(1, bytes);
    memset(payload + 8, 'x', bytes - 8);
    double started = seconds_now(), processor = processor_seconds();
    long sent = 0, acked = 0;
    int next = 0;
    while (acked < events) {
        // Hand out what the members have room for, round robin.
        for (int round = 0; round < members && sent < events; round++) {
            int m = (next + round) % members;
            while (credit[m] > 0 && sent < events) {
                int64_t position = ++sent;
                memcpy(payload, &position, 8);
                zmq_send(router, identities[m], identity_sizes[m], ZMQ_SNDMORE);
                zmq_send(router, "", 0, ZMQ_SNDMORE);
                zmq_send(router, payload, bytes, 0);
                credit[m]--;
            }
        }
        next = (next + 1) % members;
        // Take the acknowledgements waiting (wait for one when nothing can go out).
        int wait = 1;
        for (;;) {
            unsigned char identity[256];
            int size = zmq_recv(router, identity, sizeof identity, wait ? 0 : ZMQ_DONTWAIT);
            if (size < 0) break;
            zmq_recv(router, frame, sizeof frame, 0);
            int length = zmq_recv(router, frame, sizeof frame, 0);
            int n = length > 0 ? length / 8 : 0;
            for (int m = 0; m < members; m++) {
                if (identity_sizes[m] == (size_t)size && memcmp(identities[m], identity, size) == 0) {
                    credit[m] += n;
                    break;
                }
            }
            acked += n;
            wait = 0;
        }
    }
    double elapsed = seconds_now() - started;
    double used = processor_seconds() - processor;
    printf("events %ld, members %d, bytes %d, in flight %d each: %.0f events/s, %.2f us of processor an event\n",
           events, members, bytes, limit, events / elapsed, used * 1e6 / events);
    finished = 1;
    for (int i = 0; i < members; i++) pthread_join(threads[i], NULL);
    zmq_close(router);
    zmq_ctx_term(context);
    free(payload);
    return 0;
}
