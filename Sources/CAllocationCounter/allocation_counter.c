// The interposed allocator entry points and the per-thread counters (see CAllocationCounter.h).
#define _GNU_SOURCE
#include "CAllocationCounter.h"
#include "side_table.h"

#include <errno.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#if defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer) || __has_feature(memory_sanitizer)
#define RLK_ALLOC_UNDER_SANITIZER 1
#endif
#endif

#if defined(__ELF__)
#define RLK_ALLOC_TLS_MODEL __attribute__((tls_model("initial-exec")))
#else
#define RLK_ALLOC_TLS_MODEL
#endif

#define RLK_LIKELY(x) __builtin_expect(!!(x), 1)
#define RLK_UNLIKELY(x) __builtin_expect(!!(x), 0)

// glibc's own allocator, which the replacements forward to (no dlsym: it would allocate).
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void __libc_free(void *pointer);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void *__libc_valloc(size_t size);
extern void *__libc_pvalloc(size_t size);

static _Atomic int counter_mode = RLK_ALLOC_OFF;
static _Atomic uint64_t sample_interval = 512 * 1024;

typedef struct thread_state {
    rlk_alloc_thread_figures figures;
    uint32_t category;
    uint32_t saved_category;
    // Byte offset of bucket[category] in `figures`, so the hot path adds instead of multiplying.
    uint32_t bucket_offset;
    uint32_t site;
    int64_t sample_countdown;
    // Peak snapshot (generations mode).
    int64_t *snapshot_buffer;
    uint32_t snapshot_capacity;
    int snapshot_pending;
    int64_t snapshot_threshold;
    int64_t snapshot_live;
} thread_state;

// Zero-initialised, initial-exec: touching it never calls into the dynamic loader or malloc,
// so a thread's first allocation (glibc's own TLS setup included) cannot recurse.
static _Thread_local thread_state state RLK_ALLOC_TLS_MODEL;

// What malloc_usable_size returns for a live block, read inline from glibc's chunk header (the
// size word before the block: chunk size | flags; bit 1 marks an mmapped chunk, whose header is
// 16 bytes instead of 8). malloc_usable_size is a call plus checks a live block never needs;
// the tests compare every figure with it.
static inline size_t usable_size(void *pointer) {
    size_t word = ((const size_t *)pointer)[-1];
    return (word & ~(size_t)7) - ((word & 2) ? 16 : 8);
}

static inline int current_mode(void) {
    return atomic_load_explicit(&counter_mode, memory_order_relaxed);
}

static void take_peak_snapshot(thread_state *t) {
    uint32_t count = rlk_side_table_site_count();
    if (count > t->snapshot_capacity) count = t->snapshot_capacity;
    for (uint32_t site = 0; site < count; site++) t->snapshot_buffer[site] = rlk_side_table_site_live(site);
    t->snapshot_live = t->figures.bucket[RLK_ALLOC_USER].live_bytes;
    t->snapshot_pending = 0;
}

static __attribute__((noinline, cold)) void sample(thread_state *t) {
    uint64_t interval = atomic_load_explicit(&sample_interval, memory_order_relaxed);
    uint64_t taken = 1 + (uint64_t)(-t->sample_countdown) / interval;
    t->figures.samples += taken;
    t->sample_countdown += (int64_t)(taken * interval);
}

static inline rlk_alloc_counts *current_bucket(thread_state *t) {
    return (rlk_alloc_counts *)((char *)&t->figures + t->bucket_offset);
}

// Counting mode, inlined into every entry point: a handful of adds on thread-local memory.
static inline __attribute__((always_inline)) void count_allocation_fast(void *pointer, size_t requested) {
    thread_state *t = &state;
    size_t usable = usable_size(pointer);
    rlk_alloc_counts *c = current_bucket(t);
    c->allocations += 1;
    c->allocated_bytes += usable;
    c->requested_bytes += requested;
    int64_t live = c->live_bytes + (int64_t)usable;
    c->live_bytes = live;
    if (live > c->peak_live_bytes) c->peak_live_bytes = live;
}

static inline __attribute__((always_inline)) void count_free_fast(void *pointer) {
    thread_state *t = &state;
    size_t usable = usable_size(pointer);
    rlk_alloc_counts *c = current_bucket(t);
    c->frees += 1;
    c->freed_bytes += usable;
    c->live_bytes -= (int64_t)usable;
}

// Generations mode, out of line.
static __attribute__((noinline)) void count_allocation(void *pointer, size_t requested, int mode) {
    thread_state *t = &state;
    count_allocation_fast(pointer, requested);
    if (mode == RLK_ALLOC_GENERATIONS && t->category == RLK_ALLOC_USER) {
        rlk_side_table_insert(pointer, usable_size(pointer), t->site);
        int64_t live = t->figures.bucket[RLK_ALLOC_USER].live_bytes;
        if (t->snapshot_buffer && live > t->snapshot_threshold) {
            t->snapshot_threshold = live;
            t->snapshot_pending = 1;
        }
    }
}

static __attribute__((noinline)) void count_free(void *pointer, int mode) {
    thread_state *t = &state;
    if (mode == RLK_ALLOC_GENERATIONS) {
        // The state at the first fall after a new high is the peak: copy it before the fall.
        if (t->snapshot_pending) take_peak_snapshot(t);
        rlk_side_table_remove(pointer);
    }
    count_free_fast(pointer);
}

// One allocation of `pointer` (non-null) in `mode` (not off).
static inline __attribute__((always_inline)) void counted(void *pointer, size_t requested, int mode) {
    if (RLK_LIKELY(mode == RLK_ALLOC_COUNTING)) {
        count_allocation_fast(pointer, requested);
    } else if (mode == RLK_ALLOC_SAMPLING) {
        thread_state *t = &state;
        if (t->category != RLK_ALLOC_USER) return;
        t->sample_countdown -= (int64_t)requested;
        if (RLK_UNLIKELY(t->sample_countdown <= 0)) sample(t);
    } else {
        count_allocation(pointer, requested, mode);
    }
}

#if !defined(RLK_ALLOC_UNDER_SANITIZER)

// Each entry point tests the mode first and tail-calls: with the counter off it is a load, a
// branch and a jump to glibc (no frame); the counting work sits in a separate function, so the
// compiler cannot merge the two glibc calls and keep a frame for both.
#define RLK_TAIL

static __attribute__((noinline)) void *malloc_counted(size_t size, int mode) {
    void *pointer = __libc_malloc(size);
    if (RLK_LIKELY(pointer != NULL)) counted(pointer, size, mode);
    return pointer;
}

void *malloc(size_t size) {
    int mode = current_mode();
    if (RLK_LIKELY(mode == RLK_ALLOC_OFF)) RLK_TAIL return __libc_malloc(size);
    RLK_TAIL return malloc_counted(size, mode);
}

static __attribute__((noinline)) void *calloc_counted(size_t count, size_t size, int mode) {
    void *pointer = __libc_calloc(count, size);
    if (RLK_LIKELY(pointer != NULL)) counted(pointer, count * size, mode);
    return pointer;
}

void *calloc(size_t count, size_t size) {
    int mode = current_mode();
    if (RLK_LIKELY(mode == RLK_ALLOC_OFF)) RLK_TAIL return __libc_calloc(count, size);
    RLK_TAIL return calloc_counted(count, size, mode);
}

static __attribute__((noinline)) void free_counted(void *pointer, int mode) {
    if (RLK_LIKELY(pointer != NULL)) {
        if (RLK_LIKELY(mode == RLK_ALLOC_COUNTING)) {
            count_free_fast(pointer);
        } else if (mode == RLK_ALLOC_GENERATIONS) {
            count_free(pointer, mode);
        }
    }
    __libc_free(pointer);
}

void free(void *pointer) {
    int mode = current_mode();
    // Sampling does not look at frees.
    if (RLK_LIKELY(mode == RLK_ALLOC_OFF || mode == RLK_ALLOC_SAMPLING)) RLK_TAIL return __libc_free(pointer);
    RLK_TAIL return free_counted(pointer, mode);
}

// realloc of a live block counts as one free of the old block and one allocation of the new.
void *realloc(void *pointer, size_t size) {
    int mode = current_mode();
    if (RLK_LIKELY(mode == RLK_ALLOC_OFF)) return __libc_realloc(pointer, size);
    if (pointer == NULL) {
        void *fresh = __libc_realloc(NULL, size);
        if (fresh != NULL) counted(fresh, size, mode);
        return fresh;
    }
    if (size == 0) {  // glibc frees the block and returns NULL
        if (mode != RLK_ALLOC_SAMPLING) count_free(pointer, mode);
        return __libc_realloc(pointer, 0);
    }
    // Read the old block's size before glibc may reuse it; a failed realloc leaves it counted.
    size_t old_usable = usable_size(pointer);
    void *fresh = __libc_realloc(pointer, size);
    if (fresh == NULL) return NULL;
    thread_state *t = &state;
    if (mode != RLK_ALLOC_SAMPLING) {
        if (mode == RLK_ALLOC_GENERATIONS) {
            if (t->snapshot_pending) take_peak_snapshot(t);
            rlk_side_table_remove(pointer);
        }
        rlk_alloc_counts *c = current_bucket(t);
        c->frees += 1;
        c->freed_bytes += old_usable;
        c->live_bytes -= (int64_t)old_usable;
    }
    counted(fresh, size, mode);
    return fresh;
}

void *reallocarray(void *pointer, size_t count, size_t size) {
    size_t total;
    if (__builtin_mul_overflow(count, size, &total)) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc(pointer, total);
}

static __attribute__((noinline)) void *aligned_counted(size_t alignment, size_t size, int mode) {
    void *pointer = __libc_memalign(alignment, size);
    if (RLK_LIKELY(pointer != NULL)) counted(pointer, size, mode);
    return pointer;
}

static void *aligned(size_t alignment, size_t size) {
    int mode = current_mode();
    if (RLK_LIKELY(mode == RLK_ALLOC_OFF)) RLK_TAIL return __libc_memalign(alignment, size);
    RLK_TAIL return aligned_counted(alignment, size, mode);
}

int posix_memalign(void **out, size_t alignment, size_t size) {
    if (alignment % sizeof(void *) != 0 || (alignment & (alignment - 1)) != 0 || alignment == 0) return EINVAL;
    void *pointer = aligned(alignment, size);
    if (pointer == NULL) return ENOMEM;
    *out = pointer;
    return 0;
}

void *aligned_alloc(size_t alignment, size_t size) {
    if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
        errno = EINVAL;
        return NULL;
    }
    return aligned(alignment, size);
}

void *memalign(size_t alignment, size_t size) { return aligned(alignment, size); }

void *valloc(size_t size) {
    int mode = current_mode();
    if (RLK_LIKELY(mode == RLK_ALLOC_OFF)) return __libc_valloc(size);
    void *pointer = __libc_valloc(size);
    if (RLK_LIKELY(pointer != NULL)) counted(pointer, size, mode);
    return pointer;
}

void *pvalloc(size_t size) {
    int mode = current_mode();
    if (RLK_LIKELY(mode == RLK_ALLOC_OFF)) return __libc_pvalloc(size);
    void *pointer = __libc_pvalloc(size);
    if (RLK_LIKELY(pointer != NULL)) counted(pointer, size, mode);
    return pointer;
}

int rlk_alloc_is_interposing(void) { return 1; }

#else

int rlk_alloc_is_interposing(void) { return 0; }

#endif

// MARK: Control

// RLK_ALLOC_MODE=counting | sampling[:bytes] | generations switches the counter on at start-up,
// for programs that cannot call rlk_alloc_set_mode (LD_PRELOAD). getenv does not allocate.
__attribute__((constructor)) static void mode_from_environment(void) {
    const char *text = getenv("RLK_ALLOC_MODE");
    if (text == NULL) return;
    if (strcmp(text, "counting") == 0) {
        rlk_alloc_set_mode(RLK_ALLOC_COUNTING);
    } else if (strncmp(text, "sampling", 8) == 0) {
        if (text[8] == ':') rlk_alloc_set_sample_interval(strtoull(text + 9, NULL, 10));
        rlk_alloc_set_mode(RLK_ALLOC_SAMPLING);
    } else if (strcmp(text, "generations") == 0) {
        rlk_alloc_set_mode(RLK_ALLOC_GENERATIONS);
    }
}

void rlk_alloc_set_mode(rlk_alloc_mode mode) {
    // The side table exists before the first allocation that would use it.
    if (mode == RLK_ALLOC_GENERATIONS && !rlk_side_table_prepare()) mode = RLK_ALLOC_COUNTING;
    atomic_store_explicit(&counter_mode, (int)mode, memory_order_relaxed);
}
rlk_alloc_mode rlk_alloc_get_mode(void) { return (rlk_alloc_mode)current_mode(); }

void rlk_alloc_set_sample_interval(uint64_t bytes) {
    atomic_store_explicit(&sample_interval, bytes == 0 ? 1 : bytes, memory_order_relaxed);
}
uint64_t rlk_alloc_get_sample_interval(void) { return atomic_load_explicit(&sample_interval, memory_order_relaxed); }

void rlk_alloc_read(rlk_alloc_thread_figures *out) { *out = state.figures; }

void rlk_alloc_reset_peak(void) {
    for (int i = 0; i < 3; i++) state.figures.bucket[i].peak_live_bytes = state.figures.bucket[i].live_bytes;
}

void rlk_alloc_pool_page_scope(int entering) {
    if (entering) {
        state.saved_category = state.category;
        state.category = RLK_ALLOC_POOL_PAGE;
    } else {
        state.category = state.saved_category;
    }
    state.bucket_offset = (uint32_t)(state.category * sizeof(rlk_alloc_counts));
}

rlk_alloc_category rlk_alloc_set_category(rlk_alloc_category category) {
    rlk_alloc_category previous = (rlk_alloc_category)state.category;
    state.category = (uint32_t)category;
    state.bucket_offset = (uint32_t)(state.category * sizeof(rlk_alloc_counts));
    return previous;
}

uint32_t rlk_alloc_set_site(uint32_t site) {
    uint32_t previous = state.site;
    state.site = site < RLK_ALLOC_MAX_SITES ? site : RLK_ALLOC_MAX_SITES - 1;
    return previous;
}

void rlk_alloc_peak_snapshot_begin(int64_t *buffer, uint32_t capacity) {
    thread_state *t = &state;
    t->snapshot_buffer = buffer;
    t->snapshot_capacity = capacity;
    t->snapshot_pending = 0;
    t->snapshot_threshold = t->figures.bucket[RLK_ALLOC_USER].live_bytes;
    t->snapshot_live = -1;
}

int64_t rlk_alloc_peak_snapshot_end(void) {
    thread_state *t = &state;
    if (t->snapshot_pending) take_peak_snapshot(t);
    t->snapshot_buffer = NULL;
    return t->snapshot_live;
}
