// The interposed allocator entry points and the per-thread counters (see CAllocationCounter.h).
#define _GNU_SOURCE
#include "CAllocationCounter.h"
#include "side_table.h"

#include <errno.h>
#include <stddef.h>
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

#define RLK_HIDDEN __attribute__((visibility("hidden")))
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

// The running figures of the calling thread's current category. They sit first in the
// thread-local block, so the hot paths address them at a fixed offset (no bucket index);
// switching categories swaps them with the stored copy. Freed bytes are not kept: they are
// allocated_bytes - live_bytes, derived on read.
typedef struct running_counts {
    uint64_t allocations;
    uint64_t frees;
    uint64_t allocated_bytes;
    uint64_t requested_bytes;
    int64_t live_bytes;
    int64_t peak_live_bytes;
} running_counts;

typedef struct thread_state {
    running_counts current;
    // Requested bytes left until the next sample. Outside the user category it is parked at
    // INT64_MAX (the user's countdown waits in user_sample_countdown), so the sampling path
    // needs no category test.
    int64_t sample_countdown;
    int64_t user_sample_countdown;
    uint64_t samples;
    // The categories that are not current (stored[category] is stale while it is current).
    running_counts stored[3];
    uint32_t category;
    uint32_t saved_category;
    uint32_t site;
    // Peak snapshot (generations mode).
    int64_t *snapshot_buffer;
    uint32_t snapshot_capacity;
    int snapshot_pending;
    int64_t snapshot_threshold;
    int64_t snapshot_live;
} thread_state;

// Zero-initialised (user category, countdown 0), initial-exec: touching it never calls into
// the dynamic loader or malloc, so a thread's first allocation (glibc's own TLS setup
// included) cannot recurse.
RLK_HIDDEN _Thread_local thread_state rlk_alloc_thread_state RLK_ALLOC_TLS_MODEL;

// The x86-64 entry points below address these fields by offset.
_Static_assert(offsetof(thread_state, current.allocations) == 0, "allocations at 0");
_Static_assert(offsetof(thread_state, current.frees) == 8, "frees at 8");
_Static_assert(offsetof(thread_state, current.allocated_bytes) == 16, "allocated_bytes at 16");
_Static_assert(offsetof(thread_state, current.requested_bytes) == 24, "requested_bytes at 24");
_Static_assert(offsetof(thread_state, current.live_bytes) == 32, "live_bytes at 32");
_Static_assert(offsetof(thread_state, current.peak_live_bytes) == 40, "peak_live_bytes at 40");
_Static_assert(offsetof(thread_state, sample_countdown) == 48, "sample_countdown at 48");

// What malloc_usable_size returns for a live block, read inline from glibc's chunk header (the
// size word before the block: chunk size | flags; bit 1 marks an mmapped chunk, whose header is
// 16 bytes instead of 8). malloc_usable_size is a call plus checks a live block never needs;
// the tests compare every figure with it.
static inline size_t usable_size(void *pointer) {
    size_t word = ((const size_t *)pointer)[-1];
    if (RLK_UNLIKELY(word & 2)) return (word & ~(size_t)7) - 16;
    return (word & ~(size_t)7) - 8;
}

static inline int current_mode(void) {
    return atomic_load_explicit(&counter_mode, memory_order_relaxed);
}

static inline running_counts *counts_of(thread_state *t, uint32_t category) {
    return category == t->category ? &t->current : &t->stored[category];
}

static void switch_category(uint32_t category) {
    thread_state *t = &rlk_alloc_thread_state;
    if (category == t->category) return;
    t->stored[t->category] = t->current;
    if (t->category == RLK_ALLOC_USER) t->user_sample_countdown = t->sample_countdown;
    t->category = category;
    t->current = t->stored[category];
    t->sample_countdown = category == RLK_ALLOC_USER ? t->user_sample_countdown : INT64_MAX;
}

static void take_peak_snapshot(thread_state *t) {
    uint32_t count = rlk_side_table_site_count();
    if (count > t->snapshot_capacity) count = t->snapshot_capacity;
    for (uint32_t site = 0; site < count; site++) t->snapshot_buffer[site] = rlk_side_table_site_live(site);
    t->snapshot_live = counts_of(t, RLK_ALLOC_USER)->live_bytes;
    t->snapshot_pending = 0;
}

// The countdown reached zero: count every interval it crossed and start the next one.
static __attribute__((noinline, cold)) void take_samples(void) {
    thread_state *t = &rlk_alloc_thread_state;
    uint64_t interval = atomic_load_explicit(&sample_interval, memory_order_relaxed);
    uint64_t taken = 1 + (uint64_t)(-t->sample_countdown) / interval;
    t->samples += taken;
    t->sample_countdown += (int64_t)(taken * interval);
}

// Sampling: `requested` more bytes off the countdown; true when a sample is due. Outside the
// user category the countdown is parked far from zero.
static inline __attribute__((always_inline)) int sample_due(size_t requested) {
    int64_t left = (int64_t)((uint64_t)rlk_alloc_thread_state.sample_countdown - requested);
    rlk_alloc_thread_state.sample_countdown = left;
    return left <= 0;
}

// Counting: plain adds on the current category, at fixed thread-local offsets.
static inline __attribute__((always_inline)) void count_allocation_fast(void *pointer, size_t requested) {
    size_t usable = usable_size(pointer);
    rlk_alloc_thread_state.current.allocations += 1;
    rlk_alloc_thread_state.current.allocated_bytes += usable;
    rlk_alloc_thread_state.current.requested_bytes += requested;
    int64_t live = rlk_alloc_thread_state.current.live_bytes + (int64_t)usable;
    rlk_alloc_thread_state.current.live_bytes = live;
    if (RLK_UNLIKELY(live > rlk_alloc_thread_state.current.peak_live_bytes)) rlk_alloc_thread_state.current.peak_live_bytes = live;
}

static inline __attribute__((always_inline)) void count_free_fast(void *pointer) {
    size_t usable = usable_size(pointer);
    rlk_alloc_thread_state.current.frees += 1;
    rlk_alloc_thread_state.current.live_bytes -= (int64_t)usable;
}

// Generations mode, out of line.
static __attribute__((noinline)) void count_allocation(void *pointer, size_t requested, int mode) {
    thread_state *t = &rlk_alloc_thread_state;
    count_allocation_fast(pointer, requested);
    if (mode == RLK_ALLOC_GENERATIONS && t->category == RLK_ALLOC_USER) {
        rlk_side_table_insert(pointer, usable_size(pointer), t->site);
        int64_t live = t->current.live_bytes;
        if (t->snapshot_buffer && live > t->snapshot_threshold) {
            t->snapshot_threshold = live;
            t->snapshot_pending = 1;
        }
    }
}

static __attribute__((noinline)) void count_free(void *pointer, int mode) {
    thread_state *t = &rlk_alloc_thread_state;
    if (mode == RLK_ALLOC_GENERATIONS) {
        // The state at the first fall after a new high is the peak: copy it before the fall.
        if (t->snapshot_pending) take_peak_snapshot(t);
        rlk_side_table_remove(pointer);
    }
    count_free_fast(pointer);
}

// One allocation of `pointer` (non-null) in `mode` (not off), for the entry points other than
// malloc and free, which have a function per mode.
static inline __attribute__((always_inline)) void counted(void *pointer, size_t requested, int mode) {
    if (RLK_LIKELY(mode == RLK_ALLOC_COUNTING)) {
        count_allocation_fast(pointer, requested);
    } else if (mode == RLK_ALLOC_SAMPLING) {
        if (RLK_UNLIKELY(sample_due(requested))) take_samples();
    } else {
        count_allocation(pointer, requested, mode);
    }
}

#if !defined(RLK_ALLOC_UNDER_SANITIZER)

typedef void *(*malloc_function)(size_t size);
typedef void (*free_function)(void *pointer);

// glibc's malloc and free as hidden globals: the compiler cannot fold them into PLT calls, so
// reaching glibc from a counting path is one memory-indirect call or jump.
RLK_HIDDEN malloc_function rlk_alloc_glibc_malloc = __libc_malloc;
RLK_HIDDEN free_function rlk_alloc_glibc_free = __libc_free;

// What malloc and free jump to in the current mode (rlk_alloc_set_mode swaps them): with the
// counter off they are glibc's own functions. The portable entry points always jump through
// them; on x86-64 only generations mode does (see the path bytes below).
RLK_HIDDEN _Atomic(malloc_function) rlk_alloc_malloc_entry = __libc_malloc;
RLK_HIDDEN _Atomic(free_function) rlk_alloc_free_entry = __libc_free;
// On x86-64 malloc and free pick the mode's path by a direct branch on these bytes instead of
// jumping through the pointers above: reaching glibc takes an indirect jump on every path, and a
// second one in a row (pointer to the counting path, then on to glibc) cost more time than its
// few instructions (paired timing, Benchmarks/AllocationOverhead, fresh-object works: counting
// 1.08x -> 1.045x of off, sampling 1.037x -> 1.008x). Generations keeps the pointer. malloc
// tests sampling second and counting third: with counting second, sampling's path took three
// branches and read 1.016-1.017x of off (medians of 40 processes, alternating builds; half the
// processes 1.015-1.021x), with sampling second 1.009-1.010x (at most 1.012x), counting the same
// (1.039-1.043x either way). The counting paths sit in line after their compare, not behind a
// jump to a function of their own (counting 1.049-1.056x -> 1.037-1.044x of off).
enum entry_path { PATH_GLIBC = 0, PATH_COUNTING = 1, PATH_SAMPLING = 2, PATH_POINTER = 3 };
RLK_HIDDEN _Atomic unsigned char rlk_alloc_malloc_path = PATH_GLIBC;
RLK_HIDDEN _Atomic unsigned char rlk_alloc_free_path = PATH_GLIBC;

RLK_HIDDEN void *rlk_alloc_malloc_counting(size_t size);
RLK_HIDDEN void rlk_alloc_free_counting(void *pointer);
RLK_HIDDEN void *rlk_alloc_malloc_sampling(size_t size);
RLK_HIDDEN void *rlk_alloc_malloc_sampled(size_t size);

// A sample is due: counted before the allocation (a failed request still moves the countdown).
__attribute__((noinline, cold)) void *rlk_alloc_malloc_sampled(size_t size) {
    take_samples();
    return rlk_alloc_glibc_malloc(size);
}

#if defined(__x86_64__) && !defined(RLK_ALLOC_PORTABLE_ENTRY_POINTS)

// malloc, free and their counting and sampling paths in assembly; they do what the C versions
// after #else do, in fewer instructions: compilers load the entry pointer into a register
// before jumping (clang), test the countdown apart from the subtraction, compute the usable
// size branch-free, and keep the size across glibc's call in the stack slot that aligns the
// stack (no callee-saved register to save and restore). Thread-state offsets are checked by the _Static_asserts above; the
// mmapped-chunk and new-peak cases are out of line.
__asm__(
    "    .text\n"
    "    .globl malloc\n"
    "    .type malloc, @function\n"
    "    .p2align 4\n"
    "malloc:\n"
    "    .cfi_startproc\n"
    "    cmpb $0, rlk_alloc_malloc_path(%rip)\n"   // PATH_GLIBC: off
    "    jne 1f\n"
    "    jmp *rlk_alloc_glibc_malloc(%rip)\n"
    "1:  cmpb $2, rlk_alloc_malloc_path(%rip)\n"
    "    je rlk_alloc_malloc_sampling\n"           // PATH_SAMPLING
    "    cmpb $1, rlk_alloc_malloc_path(%rip)\n"
    "    jne 5f\n"
    // PATH_COUNTING, in line: allocations += 1, allocated_bytes += usable,
    // requested_bytes += size, live_bytes += usable, and peak_live_bytes = live_bytes when it
    // is higher. The size waits in the slot that aligns the stack for the call.
    "    .globl rlk_alloc_malloc_counting\n"
    "    .hidden rlk_alloc_malloc_counting\n"
    "rlk_alloc_malloc_counting:\n"
    "    pushq %rdi\n"
    "    .cfi_adjust_cfa_offset 8\n"
    "    call *rlk_alloc_glibc_malloc(%rip)\n"
    "    popq %rsi\n"
    "    .cfi_adjust_cfa_offset -8\n"
    "    testq %rax, %rax\n"
    "    je 2f\n"
    "    movq -8(%rax), %rdx\n"
    "    testb $2, %dl\n"
    "    jne 3f\n"
    "    andq $-8, %rdx\n"
    "    subq $8, %rdx\n"
    "4:  movq rlk_alloc_thread_state@gottpoff(%rip), %rcx\n"
    "    addq $1, %fs:0(%rcx)\n"
    "    addq %rdx, %fs:16(%rcx)\n"
    "    addq %rsi, %fs:24(%rcx)\n"
    "    addq %fs:32(%rcx), %rdx\n"
    "    movq %rdx, %fs:32(%rcx)\n"
    "    cmpq %fs:40(%rcx), %rdx\n"
    "    jg 6f\n"
    "2:  ret\n"
    "3:  andq $-8, %rdx\n"      // mmapped chunk: a 16-byte header
    "    subq $16, %rdx\n"
    "    jmp 4b\n"
    "6:  movq %rdx, %fs:40(%rcx)\n"
    "    ret\n"
    "5:  jmp *rlk_alloc_malloc_entry(%rip)\n"
    "    .cfi_endproc\n"
    "    .size malloc, .-malloc\n"

    "    .globl free\n"
    "    .type free, @function\n"
    "    .p2align 4\n"
    "free:\n"
    "    .cfi_startproc\n"
    "    cmpb $0, rlk_alloc_free_path(%rip)\n"     // PATH_GLIBC: off, sampling
    "    jne 1f\n"
    "    jmp *rlk_alloc_glibc_free(%rip)\n"
    "1:  cmpb $1, rlk_alloc_free_path(%rip)\n"
    "    jne 5f\n"
    // PATH_COUNTING, in line: frees += 1, live_bytes -= usable, then glibc's free.
    "    .globl rlk_alloc_free_counting\n"
    "    .hidden rlk_alloc_free_counting\n"
    "rlk_alloc_free_counting:\n"
    "    testq %rdi, %rdi\n"
    "    je 2f\n"
    "    movq -8(%rdi), %rax\n"
    "    testb $2, %al\n"
    "    jne 3f\n"
    "    andq $-8, %rax\n"
    "    subq $8, %rax\n"
    "4:  movq rlk_alloc_thread_state@gottpoff(%rip), %rcx\n"
    "    addq $1, %fs:8(%rcx)\n"
    "    subq %rax, %fs:32(%rcx)\n"
    "2:  jmp *rlk_alloc_glibc_free(%rip)\n"
    "3:  andq $-8, %rax\n"
    "    subq $16, %rax\n"
    "    jmp 4b\n"
    "5:  jmp *rlk_alloc_free_entry(%rip)\n"
    "    .cfi_endproc\n"
    "    .size free, .-free\n"

    // sample_countdown -= size; at or below zero a sample is due.
    "    .globl rlk_alloc_malloc_sampling\n"
    "    .hidden rlk_alloc_malloc_sampling\n"
    "    .type rlk_alloc_malloc_sampling, @function\n"
    "    .p2align 4\n"
    "rlk_alloc_malloc_sampling:\n"
    "    .cfi_startproc\n"
    "    movq rlk_alloc_thread_state@gottpoff(%rip), %rax\n"
    "    subq %rdi, %fs:48(%rax)\n"
    "    jle 1f\n"
    "    jmp *rlk_alloc_glibc_malloc(%rip)\n"
    "1:  jmp rlk_alloc_malloc_sampled\n"
    "    .cfi_endproc\n"
    "    .size rlk_alloc_malloc_sampling, .-rlk_alloc_malloc_sampling\n");

#else

void *malloc(size_t size) { return atomic_load_explicit(&rlk_alloc_malloc_entry, memory_order_relaxed)(size); }

void free(void *pointer) { atomic_load_explicit(&rlk_alloc_free_entry, memory_order_relaxed)(pointer); }

void *rlk_alloc_malloc_counting(size_t size) {
    void *pointer = rlk_alloc_glibc_malloc(size);
    if (RLK_LIKELY(pointer != NULL)) count_allocation_fast(pointer, size);
    return pointer;
}

void rlk_alloc_free_counting(void *pointer) {
    if (RLK_LIKELY(pointer != NULL)) count_free_fast(pointer);
    rlk_alloc_glibc_free(pointer);
}

void *rlk_alloc_malloc_sampling(size_t size) {
    if (RLK_UNLIKELY(sample_due(size))) return rlk_alloc_malloc_sampled(size);
    return rlk_alloc_glibc_malloc(size);
}

#endif

static __attribute__((noinline)) void *malloc_generations(size_t size) {
    void *pointer = rlk_alloc_glibc_malloc(size);
    if (RLK_LIKELY(pointer != NULL)) count_allocation(pointer, size, RLK_ALLOC_GENERATIONS);
    return pointer;
}

static __attribute__((noinline)) void free_generations(void *pointer) {
    if (RLK_LIKELY(pointer != NULL)) count_free(pointer, RLK_ALLOC_GENERATIONS);
    rlk_alloc_glibc_free(pointer);
}

static void install_entry_points(int mode) {
    malloc_function allocate = __libc_malloc;
    free_function release = __libc_free;
    unsigned char malloc_path = PATH_GLIBC, free_path = PATH_GLIBC;
    switch (mode) {
    case RLK_ALLOC_COUNTING:
        allocate = rlk_alloc_malloc_counting; release = rlk_alloc_free_counting;
        malloc_path = PATH_COUNTING; free_path = PATH_COUNTING;
        break;
    case RLK_ALLOC_SAMPLING: allocate = rlk_alloc_malloc_sampling; malloc_path = PATH_SAMPLING; break;
    case RLK_ALLOC_GENERATIONS:
        allocate = malloc_generations; release = free_generations;
        malloc_path = PATH_POINTER; free_path = PATH_POINTER;
        break;
    default: break;
    }
    atomic_store_explicit(&rlk_alloc_free_entry, release, memory_order_relaxed);
    atomic_store_explicit(&rlk_alloc_malloc_entry, allocate, memory_order_relaxed);
    atomic_store_explicit(&rlk_alloc_free_path, free_path, memory_order_relaxed);
    atomic_store_explicit(&rlk_alloc_malloc_path, malloc_path, memory_order_relaxed);
}

// The other entry points are rarer: they test the mode and share `counted`.
void *calloc(size_t count, size_t size) {
    int mode = current_mode();
    if (RLK_LIKELY(mode == RLK_ALLOC_OFF)) return __libc_calloc(count, size);
    void *pointer = __libc_calloc(count, size);
    if (RLK_LIKELY(pointer != NULL)) counted(pointer, count * size, mode);
    return pointer;
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
    if (mode != RLK_ALLOC_SAMPLING) {
        thread_state *t = &rlk_alloc_thread_state;
        if (mode == RLK_ALLOC_GENERATIONS) {
            if (t->snapshot_pending) take_peak_snapshot(t);
            rlk_side_table_remove(pointer);
        }
        t->current.frees += 1;
        t->current.live_bytes -= (int64_t)old_usable;
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

static void *aligned(size_t alignment, size_t size) {
    int mode = current_mode();
    if (RLK_LIKELY(mode == RLK_ALLOC_OFF)) return __libc_memalign(alignment, size);
    void *pointer = __libc_memalign(alignment, size);
    if (RLK_LIKELY(pointer != NULL)) counted(pointer, size, mode);
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

static void install_entry_points(int mode) { (void)mode; }

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
    if (mode != RLK_ALLOC_COUNTING && mode != RLK_ALLOC_SAMPLING && mode != RLK_ALLOC_GENERATIONS) mode = RLK_ALLOC_OFF;
    atomic_store_explicit(&counter_mode, (int)mode, memory_order_relaxed);
    install_entry_points((int)mode);
}
rlk_alloc_mode rlk_alloc_get_mode(void) { return (rlk_alloc_mode)current_mode(); }

void rlk_alloc_set_sample_interval(uint64_t bytes) {
    atomic_store_explicit(&sample_interval, bytes == 0 ? 1 : bytes, memory_order_relaxed);
}
uint64_t rlk_alloc_get_sample_interval(void) { return atomic_load_explicit(&sample_interval, memory_order_relaxed); }

void rlk_alloc_read(rlk_alloc_thread_figures *out) {
    thread_state *t = &rlk_alloc_thread_state;
    for (uint32_t category = 0; category < 3; category++) {
        const running_counts *in = counts_of(t, category);
        rlk_alloc_counts *bucket = &out->bucket[category];
        bucket->allocations = in->allocations;
        bucket->frees = in->frees;
        bucket->allocated_bytes = in->allocated_bytes;
        bucket->freed_bytes = in->allocated_bytes - (uint64_t)in->live_bytes;
        bucket->requested_bytes = in->requested_bytes;
        bucket->live_bytes = in->live_bytes;
        bucket->peak_live_bytes = in->peak_live_bytes;
    }
    out->samples = t->samples;
}

void rlk_alloc_reset_peak(void) {
    thread_state *t = &rlk_alloc_thread_state;
    for (uint32_t category = 0; category < 3; category++) {
        running_counts *counts = counts_of(t, category);
        counts->peak_live_bytes = counts->live_bytes;
    }
}

void rlk_alloc_pool_page_scope(int entering) {
    if (entering) {
        rlk_alloc_thread_state.saved_category = rlk_alloc_thread_state.category;
        switch_category(RLK_ALLOC_POOL_PAGE);
    } else {
        switch_category(rlk_alloc_thread_state.saved_category);
    }
}

rlk_alloc_category rlk_alloc_set_category(rlk_alloc_category category) {
    rlk_alloc_category previous = (rlk_alloc_category)rlk_alloc_thread_state.category;
    switch_category((uint32_t)category < 3 ? (uint32_t)category : RLK_ALLOC_USER);
    return previous;
}

uint32_t rlk_alloc_set_site(uint32_t site) {
    uint32_t previous = rlk_alloc_thread_state.site;
    rlk_alloc_thread_state.site = site < RLK_ALLOC_MAX_SITES ? site : RLK_ALLOC_MAX_SITES - 1;
    return previous;
}

void rlk_alloc_peak_snapshot_begin(int64_t *buffer, uint32_t capacity) {
    thread_state *t = &rlk_alloc_thread_state;
    t->snapshot_buffer = buffer;
    t->snapshot_capacity = capacity;
    t->snapshot_pending = 0;
    t->snapshot_threshold = counts_of(t, RLK_ALLOC_USER)->live_bytes;
    t->snapshot_live = -1;
}

int64_t rlk_alloc_peak_snapshot_end(void) {
    thread_state *t = &rlk_alloc_thread_state;
    if (t->snapshot_pending) take_peak_snapshot(t);
    t->snapshot_buffer = NULL;
    return t->snapshot_live;
}
