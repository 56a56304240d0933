#define _GNU_SOURCE
#include "CBenchSupport.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

int bench_pin_current_thread(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

int bench_unpin_current_thread(void) {
    cpu_set_t set;
    CPU_ZERO(&set);
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    for (long cpu = 0; cpu < online && cpu < CPU_SETSIZE; cpu++) CPU_SET((int)cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
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
