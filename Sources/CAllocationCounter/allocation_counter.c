// The interposed allocator entry points and the per-thread counters (see CAllocationCounter.h).
#define _GNU_SOURCE
#include "CAllocationCounter.h"
#include "side_table.h"

#include <errno.h>
#include <malloc.h>
#include <stdatomic.h>
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

static void sample(thread_state *t) {
    uint64_t interval = atomic_load_explicit(&sample_interval, memory_order_relaxed);
    uint64_t taken = 1 + (uint64_t)(-t->sample_countdown) / interval;
    t->figures.samples += taken;
    t->sample_countdown += (int64_t)(taken * interval);
}

static inline void count_allocation(void *pointer, size_t requested, int mode) {
    thread_state *t = &state;
    if (mode == RLK_ALLOC_SAMPLING) {
        if (t->category != RLK_ALLOC_USER) return;
        t->sample_countdown -= (int64_t)requested;
        if (RLK_UNLIKELY(t->sample_countdown <= 0)) sample(t);
        return;
    }
    size_t usable = malloc_usable_size(pointer);
    rlk_alloc_counts *c = &t->figures.bucket[t->category];
    c->allocations += 1;
    c->allocated_bytes += usable;
    c->requested_bytes += requested;
    c->live_bytes += (int64_t)usable;
    if (c->live_bytes > c->peak_live_bytes) c->peak_live_bytes = c->live_bytes;
    if (RLK_UNLIKELY(mode == RLK_ALLOC_GENERATIONS) && t->category == RLK_ALLOC_USER) {
        rlk_side_table_insert(pointer, usable, t->site);
        if (t->snapshot_buffer && c->live_bytes > t->snapshot_threshold) {
            t->snapshot_threshold = c->live_bytes;
            t->snapshot_pending = 1;
        }
    }
}

static inline void count_free(void *pointer, int mode) {
    if (mode == RLK_ALLOC_SAMPLING) return;
    thread_state *t = &state;
    if (RLK_UNLIKELY(mode == RLK_ALLOC_GENERATIONS)) {
        // The state at the first fall after a new high is the peak: copy it before the fall.
        if (t->snapshot_pending) take_peak_snapshot(t);
        rlk_side_table_remove(pointer);
    }
    size_t usable = malloc_usable_size(pointer);
    rlk_alloc_counts *c = &t->figures.bucket[t->category];
    c->frees += 1;
    c->freed_bytes += usable;
    c->live_bytes -= (int64_t)usable;
}

#if !defined(RLK_ALLOC_UNDER_SANITIZER)

void *malloc(size_t size) {
    void *pointer = __libc_malloc(size);
    int mode = current_mode();
    if (RLK_UNLIKELY(mode != RLK_ALLOC_OFF) && RLK_LIKELY(pointer != NULL)) count_allocation(pointer, size, mode);
    return pointer;
}

void *calloc(size_t count, size_t size) {
    void *pointer = __libc_calloc(count, size);
    int mode = current_mode();
    if (RLK_UNLIKELY(mode != RLK_ALLOC_OFF) && RLK_LIKELY(pointer != NULL)) count_allocation(pointer, count * size, mode);
    return pointer;
}

void free(void *pointer) {
    int mode = current_mode();
    if (RLK_UNLIKELY(mode != RLK_ALLOC_OFF) && RLK_LIKELY(pointer != NULL)) count_free(pointer, mode);
    __libc_free(pointer);
}

// realloc of a live block counts as one free of the old block and one allocation of the new.
void *realloc(void *pointer, size_t size) {
    int mode = current_mode();
    if (RLK_LIKELY(mode == RLK_ALLOC_OFF) || pointer == NULL) {
        void *fresh = __libc_realloc(pointer, size);
        if (mode != RLK_ALLOC_OFF && fresh != NULL) count_allocation(fresh, size, mode);
        return fresh;
    }
    if (size == 0) {  // glibc frees the block and returns NULL
        count_free(pointer, mode);
        return __libc_realloc(pointer, 0);
    }
    // Read the old block's figures before glibc may reuse it; undo them if realloc fails.
    size_t old_usable = malloc_usable_size(pointer);
    void *fresh = __libc_realloc(pointer, size);
    if (fresh == NULL) return NULL;  // the old block is untouched and still counted
    thread_state *t = &state;
    if (mode != RLK_ALLOC_SAMPLING) {
        if (RLK_UNLIKELY(mode == RLK_ALLOC_GENERATIONS)) {
            if (t->snapshot_pending) take_peak_snapshot(t);
            rlk_side_table_remove(pointer);
        }
        rlk_alloc_counts *c = &t->figures.bucket[t->category];
        c->frees += 1;
        c->freed_bytes += old_usable;
        c->live_bytes -= (int64_t)old_usable;
    }
    count_allocation(fresh, size, mode);
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

static void *aligned(size_t alignment, size_t size) {
    void *pointer = __libc_memalign(alignment, size);
    int mode = current_mode();
    if (RLK_UNLIKELY(mode != RLK_ALLOC_OFF) && RLK_LIKELY(pointer != NULL)) count_allocation(pointer, size, mode);
    return pointer;
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
    void *pointer = __libc_valloc(size);
    int mode = current_mode();
    if (RLK_UNLIKELY(mode != RLK_ALLOC_OFF) && RLK_LIKELY(pointer != NULL)) count_allocation(pointer, size, mode);
    return pointer;
}

void *pvalloc(size_t size) {
    void *pointer = __libc_pvalloc(size);
    int mode = current_mode();
    if (RLK_UNLIKELY(mode != RLK_ALLOC_OFF) && RLK_LIKELY(pointer != NULL)) count_allocation(pointer, size, mode);
    return pointer;
}

int rlk_alloc_is_interposing(void) { return 1; }

#else

int rlk_alloc_is_interposing(void) { return 0; }

#endif

// MARK: Control

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
}

rlk_alloc_category rlk_alloc_set_category(rlk_alloc_category category) {
    rlk_alloc_category previous = (rlk_alloc_category)state.category;
    state.category = (uint32_t)category;
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
