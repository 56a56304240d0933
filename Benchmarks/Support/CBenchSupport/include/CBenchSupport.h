#ifndef CBENCHSUPPORT_H
#define CBENCHSUPPORT_H

// The benchmarks' own raw primitives: thread pinning and the eventfd/epoll ping-pong that is the
// floor for a cross-thread wake-up. Kept apart from the library's C shims on purpose: the floor
// must not share code with what it is compared against.

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Pins the calling thread to `cpu` (remembering its affinity before the first pin); returns 0
/// or an errno.
int bench_pin_current_thread(int cpu);
/// Gives the calling thread back the affinity it had before bench_pin_current_thread (the
/// process's, e.g. from `taskset`); returns 0 or an errno.
int bench_unpin_current_thread(void);
/// The CPU the calling thread runs on right now (sched_getcpu), or -1.
int bench_current_cpu(void);

/// A blocking eventfd (EFD_CLOEXEC), or -1.
int bench_eventfd(void);
/// Adds 1 to the counter (write(2)); returns 0 or -1.
int bench_eventfd_post(int fd);
/// Blocks until the counter is non-zero and resets it (read(2)); returns the value, 0 on error.
uint64_t bench_eventfd_wait(int fd);

/// An epoll instance watching `fd` for readability, or -1.
int bench_epoll_for(int fd);
/// Blocks in epoll_wait until the watched fd is readable; returns the number of events or -1.
int bench_epoll_wait_readable(int epfd);

/// Closes a descriptor.
void bench_close(int fd);

#ifdef __cplusplus
}
#endif

#endif
