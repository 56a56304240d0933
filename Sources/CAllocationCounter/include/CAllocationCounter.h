#ifndef CALLOCATIONCOUNTER_H
#define CALLOCATIONCOUNTER_H

// An opt-in allocation counter. Linking this target replaces malloc, calloc, realloc,
// reallocarray, free, posix_memalign, aligned_alloc, memalign, valloc and pvalloc for the whole
// process with strong definitions that forward to glibc's __libc_* entry points and count on the
// calling thread. Built as a shared object (see Docs/Memory.md) the same file works through
// LD_PRELOAD. Nothing in RunLoopKit's libraries depends on it.
//
// Counting is per thread in _Thread_local (initial-exec) storage: no lock, no atomic, nothing
// allocated on the hot path. Bytes are the allocator's usable sizes (malloc_usable_size), so a
// block's allocation and its free always cancel; the requested sizes are kept beside them. On
// x86-64 malloc, free and their counting and sampling paths are written in assembly.

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// What the counter does on each call. malloc and free take the mode's path (on x86-64 by a
/// byte compare and a direct branch, elsewhere through a pointer the mode sets; off: the
/// compare, then one indirect jump to glibc); the other entry points test the mode.
typedef enum rlk_alloc_mode {
    RLK_ALLOC_OFF = 0,
    /// Counts, bytes, live and peak per thread.
    RLK_ALLOC_COUNTING = 1,
    /// One sample every `sample interval` requested bytes (a failed request counts too); frees
    /// go straight to glibc.
    RLK_ALLOC_SAMPLING = 2,
    /// Counting, plus a side table keyed by pointer: site and generation of every live block.
    RLK_ALLOC_GENERATIONS = 3,
} rlk_alloc_mode;

/// Which bucket the calling thread's allocations and frees go to.
typedef enum rlk_alloc_category {
    RLK_ALLOC_USER = 0,
    /// Autorelease pool pages (set around the pool's page allocation and free).
    RLK_ALLOC_POOL_PAGE = 1,
    /// The instruments' own bookkeeping.
    RLK_ALLOC_IGNORED = 2,
} rlk_alloc_category;

/// One bucket's figures on one thread since the thread started (or since the mode was on).
typedef struct rlk_alloc_counts {
    uint64_t allocations;
    uint64_t frees;
    /// Usable bytes of the blocks allocated.
    uint64_t allocated_bytes;
    /// Usable bytes of the blocks freed.
    uint64_t freed_bytes;
    /// Bytes asked for (allocations only).
    uint64_t requested_bytes;
    /// allocated_bytes - freed_bytes, as a signed running value.
    int64_t live_bytes;
    /// The highest live_bytes since the last rlk_alloc_reset_peak().
    int64_t peak_live_bytes;
} rlk_alloc_counts;

/// The calling thread's buckets and sampling figures.
typedef struct rlk_alloc_thread_figures {
    rlk_alloc_counts bucket[3];
    /// Samples taken (sampling mode); each stands for `sample interval` bytes.
    uint64_t samples;
} rlk_alloc_thread_figures;

/// 1 when this build interposes the allocator (0 under a sanitizer, which owns malloc).
int rlk_alloc_is_interposing(void);

void rlk_alloc_set_mode(rlk_alloc_mode mode);
rlk_alloc_mode rlk_alloc_get_mode(void);
/// Bytes between two samples in sampling mode (at least 1).
void rlk_alloc_set_sample_interval(uint64_t bytes);
uint64_t rlk_alloc_get_sample_interval(void);

/// Copies the calling thread's figures.
void rlk_alloc_read(rlk_alloc_thread_figures *out);
/// Sets every bucket's peak to its current live bytes on the calling thread.
void rlk_alloc_reset_peak(void);
/// Sets the calling thread's category; returns the previous one.
rlk_alloc_category rlk_alloc_set_category(rlk_alloc_category category);
/// The autorelease pool's page hook: 1 before a page is allocated or freed, 0 after. Installed
/// by LoopAllocationCounter, so pool pages land in RLK_ALLOC_POOL_PAGE.
void rlk_alloc_pool_page_scope(int entering);
/// Sets the site (a callout identity) new blocks of the calling thread are tagged with in
/// generations mode; returns the previous one. Site 0 is "outside any callout".
uint32_t rlk_alloc_set_site(uint32_t site);

// MARK: Generations (side table, generations mode only)

/// The most sites the per-site figures hold; higher sites are folded into the last one.
#define RLK_ALLOC_MAX_SITES 4096

/// Starts a new generation and returns its number: blocks allocated from now on carry it.
uint64_t rlk_alloc_generation_mark(void);
/// Adds, per site, the usable bytes and count of live blocks whose generation is at least
/// `generation` into bytes[site] and counts[site] (arrays of `sites` entries). Returns the
/// number of live blocks seen.
uint64_t rlk_alloc_generation_live(uint64_t generation, int64_t *bytes, uint64_t *counts, uint32_t sites);
/// Live bytes per site of every tracked block, as kept on each allocation and free.
int64_t rlk_alloc_site_live(uint32_t site);
/// Tells the counter how many sites exist (the peak snapshot copies that many).
void rlk_alloc_set_site_count(uint32_t count);

/// Starts watching the calling thread's user peak: when live bytes reach a new high and then
/// first fall (or at rlk_alloc_peak_snapshot_end), the live bytes per site are copied into
/// `buffer` (`capacity` entries). Generations mode only.
void rlk_alloc_peak_snapshot_begin(int64_t *buffer, uint32_t capacity);
/// Stops watching; returns the user live bytes at the snapshot, or -1 when none was taken.
int64_t rlk_alloc_peak_snapshot_end(void);

#ifdef __cplusplus
}
#endif

#endif
