// A readiness watch on one descriptor through an io_uring completion ring (see
// CRunLoopShims.h): a multishot poll posts a completion each time the descriptor is woken, into
// memory shared with the kernel, so asking "was it woken since I last asked?" is two loads and
// no system call. Only Linux has io_uring; elsewhere, or when the kernel refuses it (too old,
// disabled by sysctl, blocked by seccomp), create fails and the caller keeps polling.
#define _GNU_SOURCE
#include "CRunLoopShims.h"
#include "fault_injection.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#if defined(__linux__) && __has_include(<linux/io_uring.h>)
#include <linux/io_uring.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

// Version 5.13 added multishot poll; the constant is what tells this header is new enough.
#ifdef IORING_POLL_ADD_MULTI
#define RLK_HAS_RING 1
#endif
#endif

#ifdef RLK_HAS_RING

// Room for bursts between two checks: each poke of the descriptor is one completion. If the
// ring overflows anyway, the kernel ends the multishot poll and the check re-arms it.
enum { RLK_RING_COMPLETIONS = 64 };

struct rlk_readiness_ring {
    int ring_fd;
    int watched_fd;
    // Submission side.
    void *sq_map;
    size_t sq_map_size;
    unsigned *sq_tail;
    unsigned *sq_mask;
    unsigned *sq_array;
    unsigned *sq_flags;
    struct io_uring_sqe *sqes;
    size_t sqes_size;
    // Completion side (shares sq_map when the kernel has IORING_FEAT_SINGLE_MMAP).
    void *cq_map;
    size_t cq_map_size;
    unsigned *cq_head;
    unsigned *cq_tail;
    unsigned *cq_mask;
    struct io_uring_cqe *cqes;
};

static int ring_setup(unsigned entries, struct io_uring_params *params) {
    return (int)syscall(__NR_io_uring_setup, entries, params);
}

static int ring_enter(int fd, unsigned submit, unsigned complete, unsigned flags) {
    int n;
    do { n = (int)syscall(__NR_io_uring_enter, fd, submit, complete, flags, NULL, 0); } while (n < 0 && errno == EINTR);
    return n;
}

// Queues the multishot poll and submits it; 0, or -1 with errno set.
static int arm(rlk_readiness_ring *ring) {
    unsigned tail = *ring->sq_tail;
    unsigned index = tail & *ring->sq_mask;
    struct io_uring_sqe *sqe = &ring->sqes[index];
    memset(sqe, 0, sizeof *sqe);
    sqe->opcode = IORING_OP_POLL_ADD;
    sqe->fd = ring->watched_fd;
    sqe->poll32_events = POLLIN;
    sqe->len = IORING_POLL_ADD_MULTI;
    sqe->user_data = 1;
    ring->sq_array[index] = index;
    __atomic_store_n(ring->sq_tail, tail + 1, __ATOMIC_RELEASE);
    int submitted = ring_enter(ring->ring_fd, 1, 0, 0);
    if (submitted == 1) return 0;
    if (submitted >= 0) errno = EAGAIN;
    return -1;
}

static void unmap(rlk_readiness_ring *ring) {
    if (ring->sqes && ring->sqes != MAP_FAILED) munmap(ring->sqes, ring->sqes_size);
    if (ring->cq_map && ring->cq_map != MAP_FAILED && ring->cq_map != ring->sq_map) munmap(ring->cq_map, ring->cq_map_size);
    if (ring->sq_map && ring->sq_map != MAP_FAILED) munmap(ring->sq_map, ring->sq_map_size);
}

rlk_readiness_ring *rlk_readiness_ring_create(int fd) {
    if (RLK_FAULT(RLK_CALL_RING_SETUP)) return NULL;
    rlk_readiness_ring *ring = calloc(1, sizeof *ring);
    if (!ring) return NULL;
    ring->watched_fd = fd;
    struct io_uring_params params;
    memset(&params, 0, sizeof params);
    params.flags = IORING_SETUP_CQSIZE;
    params.cq_entries = RLK_RING_COMPLETIONS;
    ring->ring_fd = ring_setup(1, &params);
    if (ring->ring_fd < 0) {
        int saved = errno;
        free(ring);
        errno = saved;
        return NULL;
    }
    ring->sq_map_size = params.sq_off.array + params.sq_entries * sizeof(unsigned);
    ring->cq_map_size = params.cq_off.cqes + params.cq_entries * sizeof(struct io_uring_cqe);
    int single = params.features & IORING_FEAT_SINGLE_MMAP;
    if (single && ring->cq_map_size > ring->sq_map_size) ring->sq_map_size = ring->cq_map_size;
    ring->sq_map = mmap(NULL, ring->sq_map_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring->ring_fd, IORING_OFF_SQ_RING);
    if (ring->sq_map == MAP_FAILED) goto fail;
    ring->cq_map = single ? ring->sq_map
        : mmap(NULL, ring->cq_map_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring->ring_fd, IORING_OFF_CQ_RING);
    if (ring->cq_map == MAP_FAILED) goto fail;
    ring->sqes_size = params.sq_entries * sizeof(struct io_uring_sqe);
    ring->sqes = mmap(NULL, ring->sqes_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring->ring_fd, IORING_OFF_SQES);
    if (ring->sqes == MAP_FAILED) goto fail;
    char *sq = ring->sq_map, *cq = ring->cq_map;
    ring->sq_tail = (unsigned *)(sq + params.sq_off.tail);
    ring->sq_mask = (unsigned *)(sq + params.sq_off.ring_mask);
    ring->sq_array = (unsigned *)(sq + params.sq_off.array);
    ring->sq_flags = (unsigned *)(sq + params.sq_off.flags);
    ring->cq_head = (unsigned *)(cq + params.cq_off.head);
    ring->cq_tail = (unsigned *)(cq + params.cq_off.tail);
    ring->cq_mask = (unsigned *)(cq + params.cq_off.ring_mask);
    ring->cqes = (struct io_uring_cqe *)(cq + params.cq_off.cqes);
    if (arm(ring) != 0) goto fail;
    return ring;
fail:;
    int saved = errno;
    unmap(ring);
    close(ring->ring_fd);
    free(ring);
    errno = saved;
    return NULL;
}

int rlk_readiness_ring_check(rlk_readiness_ring *ring) {
    unsigned head = *ring->cq_head;
    unsigned tail = __atomic_load_n(ring->cq_tail, __ATOMIC_ACQUIRE);
    if (head == tail) {
        // Completions the ring had no room for wait in the kernel; this flag says so.
        if (!(__atomic_load_n(ring->sq_flags, __ATOMIC_ACQUIRE) & IORING_SQ_CQ_OVERFLOW)) return 0;
        if (ring_enter(ring->ring_fd, 0, 0, IORING_ENTER_GETEVENTS) < 0) return -1;
        tail = __atomic_load_n(ring->cq_tail, __ATOMIC_ACQUIRE);
        if (head == tail) return 1;  // flushed elsewhere: say "woken" to be safe
    }
    int ended = 0;
    for (; head != tail; head++) {
        const struct io_uring_cqe *cqe = &ring->cqes[head & *ring->cq_mask];
        // Without F_MORE the kernel ended the poll (overflow, or an error in res).
        if (!(cqe->flags & IORING_CQE_F_MORE)) ended = 1;
    }
    __atomic_store_n(ring->cq_head, head, __ATOMIC_RELEASE);
    if (ended && arm(ring) != 0) return -1;
    return 1;
}

void rlk_readiness_ring_destroy(rlk_readiness_ring *ring) {
    if (!ring) return;
    unmap(ring);
    close(ring->ring_fd);
    free(ring);
}

#else

rlk_readiness_ring *rlk_readiness_ring_create(int fd) {
    (void)fd;
    errno = ENOSYS;
    return NULL;
}

int rlk_readiness_ring_check(rlk_readiness_ring *ring) {
    (void)ring;
    errno = ENOSYS;
    return -1;
}

void rlk_readiness_ring_destroy(rlk_readiness_ring *ring) { (void)ring; }

#endif
