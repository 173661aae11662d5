// A disk baseline for the worker's WAL: per "commit", FRAMES frames of 24 + 4,096 bytes
// written one after another with two pwrite calls each (header, page), as SQLite writes a
// WAL frame, then one fdatasync; the file is preallocated to a 4,000-page span and reused
// from its start, as the WAL is between checkpoints. Prints commits/s and MB/s.
//
//   cc -O2 -o /tmp/walsim Benchmarks/tools/walsim.c && /tmp/walsim /path/on/the/disk/wal.test 128 4
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: walsim FILE FRAMES-PER-COMMIT SECONDS\n");
        return 2;
    }
    int frames = atoi(argv[2]);
    double seconds = atof(argv[3]);
    int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || frames < 1 || seconds <= 0) {
        perror("walsim");
        return 1;
    }
    char header[24] = {0};
    char page[4096];
    memset(page, 7, sizeof page);
    const long span = 4000L * (24 + 4096);
    for (long offset = 0; offset < span; offset += 4096) {
        if (pwrite(fd, page, 4096, offset) != 4096) { perror("pwrite"); return 1; }
    }
    fdatasync(fd);
    long position = 0, commits = 0, bytes = 0;
    double start = now();
    while (now() - start < seconds) {
        for (int i = 0; i < frames; i++) {
            if (position + 24 + 4096 > span) position = 0;
            if (pwrite(fd, header, 24, position) != 24 || pwrite(fd, page, 4096, position + 24) != 4096) {
                perror("pwrite");
                return 1;
            }
            position += 24 + 4096;
            bytes += 24 + 4096;
        }
        if (fdatasync(fd) != 0) { perror("fdatasync"); return 1; }
        commits++;
    }
    double elapsed = now() - start;
    printf("frames/commit %d: %.0f commits/s, %.1f MB/s\n", frames, commits / elapsed, bytes / elapsed / 1e6);
    close(fd);
    unlink(argv[1]);
    return 0;
}
