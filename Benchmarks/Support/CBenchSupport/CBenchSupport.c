#define _GNU_SOURCE
#include "CBenchSupport.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

// The affinity a thread had before its first bench_pin_current_thread, so that unpinning
// gives back what `taskset` (or the parent) chose rather than every CPU.
static _Thread_local cpu_set_t saved_affinity;
static _Thread_local int has_saved_affinity;

int bench_pin_current_thread(int cpu) {
    if (!has_saved_affinity) {
        int status = pthread_getaffinity_np(pthread_self(), sizeof saved_affinity, &saved_affinity);
        if (status != 0) return status;
        has_saved_affinity = 1;
    }
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

int bench_unpin_current_thread(void) {
    if (!has_saved_affinity) return 0;
    has_saved_affinity = 0;
    return pthread_setaffinity_np(pthread_self(), sizeof saved_affinity, &saved_affinity);
}

int bench_current_cpu(void) { return sched_getcpu(); }

int bench_eventfd(void) { return eventfd(0, EFD_CLOEXEC); }

int bench_eventfd_post(int fd) {
    uint64_t one = 1;
    ssize_t n;
    do { n = write(fd, &one, sizeof one); } while (n < 0 && errno == EINTR);
    return n == (ssize_t)sizeof one ? 0 : -1;
}

uint64_t bench_eventfd_wait(int fd) {
    uint64_t value = 0;
    ssize_t n;
    do { n = read(fd, &value, sizeof value); } while (n < 0 && errno == EINTR);
    return n == (ssize_t)sizeof value ? value : 0;
}

int bench_epoll_for(int fd) {
    int epfd = epoll_create1(EPOLL_CLOEXEC);
    if (epfd < 0) return -1;
    struct epoll_event event = { .events = EPOLLIN, .data = { .fd = fd } };
    if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &event) != 0) { close(epfd); return -1; }
    return epfd;
}

int bench_epoll_wait_readable(int epfd) {
    struct epoll_event event;
    int n;
    do { n = epoll_wait(epfd, &event, 1, -1); } while (n < 0 && errno == EINTR);
    return n;
}

void bench_close(int fd) { close(fd); }
