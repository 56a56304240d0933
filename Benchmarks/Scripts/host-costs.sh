#!/usr/bin/env bash
# What the machine charges for the operations the passes are made of, so two hosts' ratios can be
# compared (Benchmarks/NOTES.md, "The same code on a second host"): a system call, epoll_wait
# with timeout 0, a vDSO clock read, an uncontended mutex lock + unlock, an atomic add. Each is
# timed back to back, three times, on CPU 0.
#
#   Scripts/host-costs.sh
set -euo pipefail
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cat > "$work/host-costs.c" <<'C'
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
static long long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}
#define TIME(label, count, body) do { long long s = now_ns(); for (long i = 0; i < (count); i++) { body; } \
    printf("%-44s %6.1f ns\n", label, (double)(now_ns() - s) / (count)); } while (0)
int main(void) {
    pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
    _Atomic long counter = 0;
    volatile long long sink = 0;
    struct epoll_event events[4];
    int epoll = epoll_create1(EPOLL_CLOEXEC);
    if (epoll < 0) { perror("epoll_create1"); return 1; }
    for (int round = 0; round < 3; round++) {
        TIME("a system call (getppid)", 2000000L, syscall(SYS_getppid));
        TIME("epoll_wait, timeout 0, empty set", 2000000L, epoll_wait(epoll, events, 4, 0));
        TIME("clock_gettime(CLOCK_MONOTONIC)", 20000000L, sink += now_ns());
        TIME("pthread_mutex_lock + unlock, uncontended", 20000000L, pthread_mutex_lock(&mutex); pthread_mutex_unlock(&mutex));
        TIME("atomic add (lock xadd)", 20000000L, atomic_fetch_add(&counter, 1));
    }
    return 0;
}
C
cc -O2 -o "$work/host-costs" "$work/host-costs.c" -lpthread
taskset -c 0 "$work/host-costs"
