#define _GNU_SOURCE
#include "CRunLoopShims.h"
#include "fault_injection.h"

#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

// Fault injection: a per-thread table of plans, consulted before each system call. Without
// RLK_FAULT_INJECTION (release builds) RLK_FAULT(call) is the constant 0 and the compiler
// removes the branch: the shims are the same code as without injection.
#ifdef RLK_FAULT_INJECTION
typedef struct { int call, code; unsigned skip, times; } rlk_fault_plan;
static _Thread_local rlk_fault_plan rlk_fault_plans[8];
static _Thread_local int rlk_fault_plan_count;
static _Thread_local unsigned rlk_fault_counts[RLK_CALL_COUNT];

// 1 with errno set when a plan says this call fails now.
int rlk_fault_take(int call) {
    for (int i = 0; i < rlk_fault_plan_count; i++) {
        rlk_fault_plan *plan = &rlk_fault_plans[i];
        if (plan->call != call || plan->times == 0) continue;
        if (plan->skip > 0) { plan->skip--; return 0; }
        plan->times--;
        rlk_fault_counts[call]++;
        errno = plan->code;
        return 1;
    }
    return 0;
}
int rlk_fault_inject(int call, int code, unsigned skip, unsigned times) {
    if (call < 0 || call >= RLK_CALL_COUNT || rlk_fault_plan_count == 8) return -1;
    rlk_fault_plans[rlk_fault_plan_count++] = (rlk_fault_plan){call, code, skip, times};
    return 0;
}
unsigned rlk_fault_injected(int call) { return call >= 0 && call < RLK_CALL_COUNT ? rlk_fault_counts[call] : 0; }
void rlk_fault_clear(void) {
    rlk_fault_plan_count = 0;
    for (int i = 0; i < RLK_CALL_COUNT; i++) rlk_fault_counts[i] = 0;
}
#else
int rlk_fault_inject(int call, int code, unsigned skip, unsigned times) {
    (void)call; (void)code; (void)skip; (void)times;
    return -1;
}
unsigned rlk_fault_injected(int call) { (void)call; return 0; }
void rlk_fault_clear(void) {}
#endif

int rlk_eventfd_create(void) {
    if (RLK_FAULT(RLK_CALL_EVENTFD)) return -1;
    return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
}

// The wake-up descriptor's read and write and the loop's wait go through syscall(), not glibc's
// read, write and epoll_wait: those are cancellation points, and each call pays for switching
// asynchronous cancellation on and off (about 35 instructions). A loop thread is never
// cancelled: pthread_cancel would unwind through Swift frames, which Swift does not support.
int rlk_eventfd_signal(int fd) {
    uint64_t one = 1;
    ssize_t n = RLK_FAULT(RLK_CALL_WRITE) ? -1 : syscall(SYS_write, fd, &one, sizeof one);
    if (n == (ssize_t)sizeof one) return 0;
    // EAGAIN means the counter is saturated: the fd is readable already.
    if (n < 0 && errno == EAGAIN) return 0;
    if (n >= 0) errno = EIO;
    return -1;
}

int rlk_eventfd_read(int fd, uint64_t *value) {
    *value = 0;
    ssize_t n = RLK_FAULT(RLK_CALL_READ) ? -1 : syscall(SYS_read, fd, value, sizeof *value);
    if (n == (ssize_t)sizeof *value) return 0;
    if (n < 0 && errno == EAGAIN) return 0;  // not readable: nothing to drain
    if (n >= 0) errno = EIO;                 // a short read cannot happen on an eventfd
    *value = 0;
    return -1;
}

int rlk_close(int fd) {
    int status = close(fd);
    // An injected failure still releases the descriptor, as a real one (EIO) does.
    if (RLK_FAULT(RLK_CALL_CLOSE)) return -1;
    return status;
}

int rlk_epoll_create(void) {
    if (RLK_FAULT(RLK_CALL_EPOLL_CREATE)) return -1;
    return epoll_create1(EPOLL_CLOEXEC);
}

static uint32_t rlk_events(uint32_t interest, int edge) {
    // EPOLLHUP and EPOLLERR need no asking: epoll always reports them. EPOLLRDHUP (the peer
    // shut down its writing side) is an interest like EPOLLIN: once it happened it stays
    // ready, so a source that keeps it asked for would be woken on every pass.
    uint32_t ev = 0;
    if (interest & 1u) ev |= EPOLLIN;
    if (interest & 2u) ev |= EPOLLOUT;
    if (interest & 16u) ev |= EPOLLRDHUP;
    if (edge) ev |= EPOLLET;
    return ev;
}

int rlk_epoll_add(int epfd, int fd, uint32_t interest, uint64_t token, int edge) {
    if (RLK_FAULT(RLK_CALL_EPOLL_ADD)) return -1;
    struct epoll_event ev = {.events = rlk_events(interest, edge), .data.u64 = token};
    return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
}

int rlk_epoll_modify(int epfd, int fd, uint32_t interest, uint64_t token, int edge) {
    if (RLK_FAULT(RLK_CALL_EPOLL_MODIFY)) return -1;
    struct epoll_event ev = {.events = rlk_events(interest, edge), .data.u64 = token};
    return epoll_ctl(epfd, EPOLL_CTL_MOD, fd, &ev);
}

int rlk_epoll_remove(int epfd, int fd) {
    if (RLK_FAULT(RLK_CALL_EPOLL_REMOVE)) return -1;
    struct epoll_event ev = {0};
    return epoll_ctl(epfd, EPOLL_CTL_DEL, fd, &ev);
}

static int rlk_copy_events(struct epoll_event *events, int n, uint64_t *tokens, uint32_t *ready) {
    for (int i = 0; i < n; i++) {
        uint32_t r = 0;
        if (events[i].events & EPOLLIN) r |= 1u;
        if (events[i].events & EPOLLOUT) r |= 2u;
        if (events[i].events & EPOLLHUP) r |= 4u;
        if (events[i].events & EPOLLERR) r |= 8u;
        if (events[i].events & EPOLLRDHUP) r |= 16u;
        tokens[i] = events[i].data.u64;
        ready[i] = r;
    }
    return n;
}

#define RLK_MAX_EVENTS 64

int rlk_epoll_wait(int epfd, uint64_t *tokens, uint32_t *ready, int max, int timeout_ms) {
    return rlk_epoll_wait_ns(epfd, tokens, ready, max,
                             timeout_ms < 0 ? -1 : (int64_t)timeout_ms * 1000000LL);
}

// One epoll wait: epoll_pwait2 (nanoseconds) when the kernel has it, else epoll_wait with the
// timeout rounded up to milliseconds. A poll (0) or an endless wait (< 0) needs no nanoseconds:
// epoll_pwait with no signal mask (epoll_wait, which aarch64 lacks) skips copying a timespec in,
// which a polling pass on Loop.main pays each time.
static int rlk_epoll_wait_once(int epfd, struct epoll_event *events, int max, int64_t timeout_ns) {
    if (timeout_ns <= 0) return (int)syscall(SYS_epoll_pwait, epfd, events, max, timeout_ns < 0 ? -1 : 0, NULL, (size_t)(_NSIG / 8));
#ifdef SYS_epoll_pwait2
    struct timespec ts, *tsp = NULL;
    if (timeout_ns >= 0) {
        ts.tv_sec = timeout_ns / 1000000000LL;
        ts.tv_nsec = timeout_ns % 1000000000LL;
        tsp = &ts;
    }
    int n = (int)syscall(SYS_epoll_pwait2, epfd, events, max, tsp, NULL, 0);
    if (n >= 0 || errno != ENOSYS) return n;
#endif
    int ms = timeout_ns < 0 ? -1 : (int)((timeout_ns + 999999LL) / 1000000LL);
    return (int)syscall(SYS_epoll_pwait, epfd, events, max, ms, NULL, (size_t)(_NSIG / 8));
}

int rlk_epoll_wait_ns(int epfd, uint64_t *tokens, uint32_t *ready, int max, int64_t timeout_ns) {
    struct epoll_event events[RLK_MAX_EVENTS];
    if (max > RLK_MAX_EVENTS) max = RLK_MAX_EVENTS;
    if (max < 1) max = 1;
    uint64_t deadline = timeout_ns > 0 ? rlk_monotonic_ns() + (uint64_t)timeout_ns : 0;
    for (;;) {
        int n = RLK_FAULT(RLK_CALL_EPOLL_WAIT) ? -1 : rlk_epoll_wait_once(epfd, events, max, timeout_ns);
        if (n >= 0) return rlk_copy_events(events, n, tokens, ready);
        if (errno != EINTR) return -1;
        // Interrupted: wait for the rest of the time.
        if (timeout_ns > 0) {
            uint64_t now = rlk_monotonic_ns();
            timeout_ns = now >= deadline ? 0 : (int64_t)(deadline - now);
        }
    }
}

int rlk_timerfd_create(void) {
    if (RLK_FAULT(RLK_CALL_TIMERFD_CREATE)) return -1;
    return timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
}

int rlk_timerfd_arm(int fd, uint64_t deadline_ns) {
    if (RLK_FAULT(RLK_CALL_TIMERFD_SETTIME)) return -1;
    struct itimerspec spec = {0};
    spec.it_value.tv_sec = (time_t)(deadline_ns / 1000000000ULL);
    spec.it_value.tv_nsec = (long)(deadline_ns % 1000000000ULL);
    return timerfd_settime(fd, deadline_ns ? TFD_TIMER_ABSTIME : 0, &spec, NULL);
}

uint64_t rlk_monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

uint64_t rlk_monotonic_coarse_ns(void) {
#ifdef CLOCK_MONOTONIC_COARSE
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC_COARSE, &ts) != 0) return 0;
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
#else
    return 0;
#endif
}

int64_t rlk_gettid(void) { return (int64_t)syscall(SYS_gettid); }

int rlk_is_main_thread(void) { return rlk_gettid() == (int64_t)getpid(); }

// Loop.main must name the main thread from any thread: record it while the executable (or the
// library) is being loaded, which happens on the main thread.
static pthread_t rlk_recorded_main;
static int rlk_recorded_main_valid;
// Test hook: the real DispatchQueue.main path of Loop.main can only be exercised by a main
// thread that has not handed the main queue to dispatch_main() (swift-testing's async main
// does). RunLoopCoreTests defines `rlk_main_thread_probe` and re-executes itself with
// RLK_MAIN_THREAD_PROBE=1; the probe then runs here, on the main thread, before main(), and
// exits. In any other program the weak symbol is absent and nothing happens.
extern void rlk_main_thread_probe(void) __attribute__((weak));

__attribute__((constructor)) static void rlk_record_main_thread(void) {
    if (rlk_is_main_thread()) {
        rlk_recorded_main = pthread_self();
        rlk_recorded_main_valid = 1;
    }
    if (rlk_main_thread_probe && getenv("RLK_MAIN_THREAD_PROBE")) rlk_main_thread_probe();
}

unsigned long rlk_main_pthread(void) {
    if (!rlk_recorded_main_valid && rlk_is_main_thread()) {
        rlk_recorded_main = pthread_self();
        rlk_recorded_main_valid = 1;
    }
    return (unsigned long)rlk_recorded_main;
}

int rlk_set_current_thread_name(const char *name) {
    char shortened[16];
    snprintf(shortened, sizeof shortened, "%s", name);  // the kernel keeps 15 bytes
    return pthread_setname_np(pthread_self(), shortened);
}

int rlk_thread_name(unsigned long thread, char *buf, size_t len) {
    return pthread_getname_np((pthread_t)thread, buf, len);
}

int rlk_pin_current_thread(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

rlk_item_lock_stripe rlk_item_lock_stripes[256] = { [0 ... 255] = { PTHREAD_MUTEX_INITIALIZER } };

static _Thread_local int rlk_item_locks;

int *rlk_item_locks_held(void) { return &rlk_item_locks; }

size_t rlk_heap_in_use(void) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
    struct mallinfo2 info = mallinfo2();
    return info.uordblks;
#else
    return 0;
#endif
}

// Exported by libdispatch (swift-corelibs-libdispatch, queue.c) for CoreFoundation.
extern int _dispatch_get_main_queue_handle_4CF(void);
extern void _dispatch_main_queue_callback_4CF(void *msg);

int rlk_dispatch_main_queue_handle(void) { return _dispatch_get_main_queue_handle_4CF(); }
void rlk_dispatch_main_queue_drain(void) { _dispatch_main_queue_callback_4CF(NULL); }
