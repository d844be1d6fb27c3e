/* The timing loop of bench/host_memory.py (which builds and runs it).
 *
 * usage: host_memory DURATION_S INTERVAL_MS READS SIZE_B...
 * Every INTERVAL_MS, for each working set of SIZE_B bytes in turn, times
 * READS random 8-byte reads from it (xorshift64 addresses, seeded, so the
 * same reads every run) and prints "MONOTONIC_S SIZE_B NS_A_READ", until
 * DURATION_S have passed. The caller pins it to a CPU. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: host_memory DURATION_S INTERVAL_MS READS SIZE_B...\n");
        return 2;
    }
    double duration_s = atof(argv[1]), interval_ms = atof(argv[2]);
    long reads = atol(argv[3]);
    int n_sets = argc - 4;
    uint64_t **sets = calloc(n_sets, sizeof *sets), *words = calloc(n_sets, sizeof *words);
    for (int s = 0; s < n_sets; s++) {
        words[s] = strtoull(argv[4 + s], NULL, 10) / 8;   /* a power of two, checked by the caller */
        sets[s] = malloc(words[s] * 8);
        for (uint64_t i = 0; i < words[s]; i++) sets[s][i] = i;
    }
    volatile uint64_t sink = 0;
    struct timespec pause = {0, (long)(interval_ms * 1e6)};
    uint64_t end = now_ns() + (uint64_t)(duration_s * 1e9);
    while (now_ns() < end) {
        for (int s = 0; s < n_sets; s++) {
            uint64_t x = 88172645463325252u, acc = 0, mask = words[s] - 1, t0 = now_ns();
            for (long k = 0; k < reads; k++) {
                x ^= x << 13; x ^= x >> 7; x ^= x << 17;
                acc += sets[s][x & mask];
            }
            uint64_t t1 = now_ns();
            sink += acc;
            printf("%.6f %llu %.4f\n", t0 / 1e9, (unsigned long long)(words[s] * 8), (double)(t1 - t0) / reads);
        }
        fflush(stdout);
        nanosleep(&pause, NULL);
    }
    (void)sink;
    return 0;
}
