#ifndef CPOOLTHREADWORD_H
#define CPOOLTHREADWORD_H

// The autorelease pool's two per-thread values as C thread-local variables: the word (hot page
// address | flags, see ThreadWord.swift) and the statistics state (ThreadState.swift). Swift has
// no thread-local storage of its own; reading these from Swift is a single %fs-relative load,
// where pthread_getspecific is a call through the PLT. The pool keeps a pthread key beside each
// only for its destructor (the thread-exit drain, and retiring the state).

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__ELF__)
// initial-exec: no __tls_get_addr call. Valid for executables and for libraries loaded at
// start-up; a library dlopen'd later takes the 16 bytes from glibc's static TLS surplus.
#define RLK_POOL_TLS_MODEL __attribute__((tls_model("initial-exec")))
#else
#define RLK_POOL_TLS_MODEL
#endif

/// The calling thread's pool word; 0 for a thread that never used a pool.
extern _Thread_local uintptr_t rlk_pool_thread_word RLK_POOL_TLS_MODEL;

/// Reads the calling thread's pool word.
static inline __attribute__((always_inline)) uintptr_t rlk_pool_load_word(void) {
    return rlk_pool_thread_word;
}

/// Replaces the calling thread's pool word.
static inline __attribute__((always_inline)) void rlk_pool_store_word(uintptr_t word) {
    rlk_pool_thread_word = word;
}

/// The calling thread's statistics state (a `ThreadStateData *`), or NULL before its first use.
extern _Thread_local void *rlk_pool_thread_state RLK_POOL_TLS_MODEL;

/// Reads the calling thread's statistics state.
static inline __attribute__((always_inline)) void *rlk_pool_load_state(void) {
    return rlk_pool_thread_state;
}

/// Replaces the calling thread's statistics state.
static inline __attribute__((always_inline)) void rlk_pool_store_state(void *state) {
    rlk_pool_thread_state = state;
}

/// Called with 1 before and 0 after the pool allocates or frees a page, when installed; an
/// allocation counter uses it to report pool pages apart from other memory. Unset by default,
/// which costs a page allocation one relaxed load and a branch.
typedef void (*rlk_pool_page_hook_fn)(int entering);

/// The installed hook (kept as a plain pointer so Swift never sees an _Atomic type).
extern void *rlk_pool_page_hook_storage;

/// Installs (or, with NULL, removes) the page hook.
static inline void rlk_pool_set_page_hook(rlk_pool_page_hook_fn hook) {
    __atomic_store_n(&rlk_pool_page_hook_storage, (void *)hook, __ATOMIC_RELEASE);
}

/// Calls the hook, if any, with `entering`.
static inline __attribute__((always_inline)) void rlk_pool_page_scope(int entering) {
    void *hook = __atomic_load_n(&rlk_pool_page_hook_storage, __ATOMIC_ACQUIRE);
    if (__builtin_expect(hook != 0, 0)) ((rlk_pool_page_hook_fn)hook)(entering);
}

#ifdef __cplusplus
}
#endif

#endif
