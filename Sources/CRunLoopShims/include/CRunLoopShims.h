#ifndef CRUNLOOPSHIMS_H
#define CRUNLOOPSHIMS_H

// Thin, allocation-free wrappers over the Linux primitives RunLoopKit needs and that Glibc's
// Swift overlay does not expose (eventfd, epoll, timerfd, gettid, mallinfo2), plus the two
// functions libdispatch exports for CoreFoundation to drain the main queue.

#include <stdint.h>
#include <stddef.h>
#include <pthread.h>

#ifdef __cplusplus
extern "C" {
#endif

/// eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); -1 on error (errno set).
int rlk_eventfd_create(void);
/// Adds 1 to the eventfd counter; returns 0 (also when the counter is saturated, which leaves
/// it readable) or -1 with errno set. EINTR is the caller's to retry.
int rlk_eventfd_signal(int fd);
/// Reads (and so resets) an eventfd or timerfd counter into `value`; returns 0 (value 0 when
/// it was not readable) or -1 with errno set. EINTR is the caller's to retry.
int rlk_eventfd_read(int fd, uint64_t *value);

/// close(fd): 0, or -1 with errno set. The descriptor is released either way (Linux releases
/// it even when close reports an error), so the caller never retries.
int rlk_close(int fd);

/// epoll_create1(EPOLL_CLOEXEC).
int rlk_epoll_create(void);
/// Registers `fd` for the given readiness (bit 0: readable; bit 1: writable; bit 4: the peer
/// shut down its writing side, EPOLLRDHUP) with `token` as the event's data; `edge` selects
/// EPOLLET. Hang-up (EPOLLHUP) and error (EPOLLERR) are always reported. Returns 0 or -1.
int rlk_epoll_add(int epfd, int fd, uint32_t interest, uint64_t token, int edge);
/// Changes the interest of an already registered fd.
int rlk_epoll_modify(int epfd, int fd, uint32_t interest, uint64_t token, int edge);
/// Unregisters `fd`; returns 0 or -1.
int rlk_epoll_remove(int epfd, int fd);
/// Waits up to `timeout_ms` (-1 = forever) for at most `max` events; fills `tokens` and
/// `ready` (bit 0 readable, bit 1 writable, bit 2 hang-up, bit 3 error, bit 4 read side closed by
/// the peer). EINTR is retried with the remaining time. Returns the number of events, or -1.
int rlk_epoll_wait(int epfd, uint64_t *tokens, uint32_t *ready, int max, int timeout_ms);
/// Like rlk_epoll_wait with a nanosecond timeout (negative = forever), via epoll_pwait2 when
/// available and a rounded-up millisecond timeout otherwise.
int rlk_epoll_wait_ns(int epfd, uint64_t *tokens, uint32_t *ready, int max, int64_t timeout_ns);

/// timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK).
int rlk_timerfd_create(void);
/// Arms the timerfd at absolute CLOCK_MONOTONIC nanoseconds (0 disarms).
int rlk_timerfd_arm(int fd, uint64_t deadline_ns);

/// CLOCK_MONOTONIC in nanoseconds.
uint64_t rlk_monotonic_ns(void);
/// CLOCK_MONOTONIC_COARSE in nanoseconds: CLOCK_MONOTONIC as of the kernel's last tick, read
/// without the time counter (about a quarter of the cost). 0 when the system has no such clock
/// or the read fails.
uint64_t rlk_monotonic_coarse_ns(void);
/// The kernel thread id.
int64_t rlk_gettid(void);
/// 1 when the calling thread is the process's main thread (gettid == getpid), as CF decides.
int rlk_is_main_thread(void);
/// The main thread's pthread_t, recorded by a load-time constructor (valid from any thread).
unsigned long rlk_main_pthread(void);
/// Names the calling thread (first 15 bytes); returns 0 or an errno.
int rlk_set_current_thread_name(const char *name);
/// Copies the thread's name (pthread_getname_np) into `buf`; returns 0 or an errno.
int rlk_thread_name(unsigned long thread, char *buf, size_t len);
/// Pins the calling thread to one CPU (benchmarks); returns 0 or an errno.
int rlk_pin_current_thread(int cpu);

/// The loop items' locks: 256 mutexes, each on a cache line of its own, which every item shares
/// by the low bits of its id (ItemLock.swift says why that is safe). A static table, statically
/// initialised: an item stores no pointer to its lock, and Swift reaches one without the
/// once-check of a lazy global.
typedef struct { pthread_mutex_t mutex; } __attribute__((aligned(64))) rlk_item_lock_stripe;
extern rlk_item_lock_stripe rlk_item_lock_stripes[256];
/// The lock of the item numbered `item_id`.
static inline pthread_mutex_t *rlk_item_lock(uint64_t item_id) {
    return &rlk_item_lock_stripes[item_id & 255].mutex;
}
/// The calling thread's count of item locks held (a thread-local counter), for debug builds'
/// check that a thread holds at most one.
int *rlk_item_locks_held(void);

/// Heap bytes in use according to glibc (mallinfo2().uordblks); 0 when unavailable.
size_t rlk_heap_in_use(void);

/// Fault injection (tests): the system calls the shims make, by number. Debug builds compile
/// the shims with RLK_FAULT_INJECTION; release builds contain no check at all.
enum {
    RLK_CALL_EPOLL_CREATE = 0,
    RLK_CALL_EPOLL_ADD = 1,
    RLK_CALL_EPOLL_MODIFY = 2,
    RLK_CALL_EPOLL_REMOVE = 3,
    RLK_CALL_EPOLL_WAIT = 4,
    RLK_CALL_EVENTFD = 5,
    RLK_CALL_TIMERFD_CREATE = 6,
    RLK_CALL_TIMERFD_SETTIME = 7,
    RLK_CALL_READ = 8,
    RLK_CALL_WRITE = 9,
    RLK_CALL_RING_SETUP = 10,
    RLK_CALL_CLOSE = 11,
    RLK_CALL_COUNT = 12
};
/// On the calling thread only: the next `times` calls of `call` after `skip` successful ones
/// fail with `code` instead of reaching the kernel. Returns 0, or -1 when the shims were built
/// without RLK_FAULT_INJECTION (release) or the table of 8 plans is full.
int rlk_fault_inject(int call, int code, unsigned skip, unsigned times);
/// How many faults were injected into `call` on the calling thread since the last clear.
unsigned rlk_fault_injected(int call);
/// Drops the calling thread's plans and counts.
void rlk_fault_clear(void);

/// A readiness watch on one descriptor (readiness_ring.c): an io_uring multishot poll whose
/// completions land in memory shared with the kernel, so a check costs no system call. Used by
/// Loop.main for libdispatch's main-queue eventfd, so a polling pass with the queue idle makes
/// no system call. Not thread-safe: one thread checks a ring.
typedef struct rlk_readiness_ring rlk_readiness_ring;
/// A watch on `fd` (which stays the caller's), or NULL with errno set when the kernel offers no
/// io_uring multishot poll (ENOSYS, EPERM under seccomp or sysctl, EINVAL before 5.13).
rlk_readiness_ring *rlk_readiness_ring_create(int fd);
/// 1 when `fd` was woken (written to) since the last check, 0 when not: two loads, no system
/// call. When the kernel ended the poll (its completion ring overflowed) this re-arms it with
/// one system call and returns 1. -1 with errno set when that fails: the watch is then useless.
int rlk_readiness_ring_check(rlk_readiness_ring *ring);
/// Ends the watch and frees it (NULL is ignored).
void rlk_readiness_ring_destroy(rlk_readiness_ring *ring);

/// libdispatch's main-queue handle (an eventfd on Linux) and drain function, exported for
/// CoreFoundation. Declared here so the run loop can service DispatchQueue.main as CF does.
int rlk_dispatch_main_queue_handle(void);
void rlk_dispatch_main_queue_drain(void);

#ifdef __cplusplus
}
#endif

#endif
