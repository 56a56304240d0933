// A chained hash table behind 64 striped spin locks: generations mode is a diagnostic mode,
// so a short lock per allocation is acceptable there (counting mode never comes here).
#include "CAllocationCounter.h"
#include "side_table.h"

#include <stdatomic.h>
#include <stdlib.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void __libc_free(void *pointer);

#define BUCKET_BITS 18
#define BUCKETS (1u << BUCKET_BITS)
#define STRIPES 64

typedef struct node {
    uintptr_t address;
    uint64_t usable;
    uint64_t generation;
    uint32_t site;
    struct node *next;
} node;

static node **_Atomic buckets = NULL;
static atomic_flag stripe_locks[STRIPES];
static _Atomic int prepare_lock = 0;
static _Atomic uint64_t current_generation = 0;
static _Atomic uint32_t site_count = 1;
static _Atomic int64_t site_live[RLK_ALLOC_MAX_SITES];
// Nodes removed from the table wait here for reuse, so steady churn calls glibc less.
static node *spare_nodes[STRIPES];

static inline uint32_t bucket_of(uintptr_t address) {
    return (uint32_t)(((address >> 4) * 0x9E3779B97F4A7C15ull) >> (64 - BUCKET_BITS));
}

static inline void lock(uint32_t stripe) {
    while (atomic_flag_test_and_set_explicit(&stripe_locks[stripe], memory_order_acquire)) {
        __builtin_ia32_pause();
    }
}

static inline void unlock(uint32_t stripe) { atomic_flag_clear_explicit(&stripe_locks[stripe], memory_order_release); }

int rlk_side_table_prepare(void) {
    if (atomic_load_explicit(&buckets, memory_order_acquire) != NULL) return 1;
    int expected = 0;
    while (!atomic_compare_exchange_weak(&prepare_lock, &expected, 1)) expected = 0;
    if (atomic_load_explicit(&buckets, memory_order_acquire) == NULL) {
        node **fresh = __libc_calloc(BUCKETS, sizeof(node *));
        atomic_store_explicit(&buckets, fresh, memory_order_release);
    }
    atomic_store(&prepare_lock, 0);
    return atomic_load_explicit(&buckets, memory_order_acquire) != NULL;
}

void rlk_side_table_insert(void *pointer, size_t usable, uint32_t site) {
    node **table = atomic_load_explicit(&buckets, memory_order_acquire);
    if (table == NULL) return;
    uint32_t bucket = bucket_of((uintptr_t)pointer);
    uint32_t stripe = bucket % STRIPES;
    lock(stripe);
    node *entry = spare_nodes[stripe];
    if (entry != NULL) {
        spare_nodes[stripe] = entry->next;
    } else {
        entry = __libc_malloc(sizeof(node));
    }
    if (entry != NULL) {
        entry->address = (uintptr_t)pointer;
        entry->usable = usable;
        entry->generation = atomic_load_explicit(&current_generation, memory_order_relaxed);
        entry->site = site;
        entry->next = table[bucket];
        table[bucket] = entry;
    }
    unlock(stripe);
    if (entry != NULL) atomic_fetch_add_explicit(&site_live[site], (int64_t)usable, memory_order_relaxed);
}

void rlk_side_table_remove(void *pointer) {
    node **table = atomic_load_explicit(&buckets, memory_order_acquire);
    if (table == NULL) return;
    uint32_t bucket = bucket_of((uintptr_t)pointer);
    uint32_t stripe = bucket % STRIPES;
    lock(stripe);
    node **link = &table[bucket];
    while (*link != NULL && (*link)->address != (uintptr_t)pointer) link = &(*link)->next;
    node *entry = *link;
    uint64_t usable = 0;
    uint32_t site = 0;
    if (entry != NULL) {
        *link = entry->next;
        usable = entry->usable;
        site = entry->site;
        entry->next = spare_nodes[stripe];
        spare_nodes[stripe] = entry;
    }
    unlock(stripe);
    if (entry != NULL) atomic_fetch_sub_explicit(&site_live[site], (int64_t)usable, memory_order_relaxed);
}

uint32_t rlk_side_table_site_count(void) { return atomic_load_explicit(&site_count, memory_order_relaxed); }

int64_t rlk_side_table_site_live(uint32_t site) {
    return site < RLK_ALLOC_MAX_SITES ? atomic_load_explicit(&site_live[site], memory_order_relaxed) : 0;
}

// MARK: Public generations API (CAllocationCounter.h)

uint64_t rlk_alloc_generation_mark(void) {
    rlk_side_table_prepare();
    return atomic_fetch_add_explicit(&current_generation, 1, memory_order_relaxed) + 1;
}

uint64_t rlk_alloc_generation_live(uint64_t generation, int64_t *bytes, uint64_t *counts, uint32_t sites) {
    node **table = atomic_load_explicit(&buckets, memory_order_acquire);
    if (table == NULL || sites == 0) return 0;
    uint64_t seen = 0;
    for (uint32_t stripe = 0; stripe < STRIPES; stripe++) {
        lock(stripe);
        for (uint32_t bucket = stripe; bucket < BUCKETS; bucket += STRIPES) {
            for (node *entry = table[bucket]; entry != NULL; entry = entry->next) {
                if (entry->generation < generation) continue;
                uint32_t site = entry->site < sites ? entry->site : sites - 1;
                bytes[site] += (int64_t)entry->usable;
                counts[site] += 1;
                seen += 1;
            }
        }
        unlock(stripe);
    }
    return seen;
}

int64_t rlk_alloc_site_live(uint32_t site) { return rlk_side_table_site_live(site); }

void rlk_alloc_set_site_count(uint32_t count) {
    atomic_store_explicit(&site_count, count > RLK_ALLOC_MAX_SITES ? RLK_ALLOC_MAX_SITES : count, memory_order_relaxed);
}
