#ifndef CHELDMUTEXES_H
#define CHELDMUTEXES_H

// Debug builds: how many of RunLoopKit's mutexes the calling thread holds. PThreads counts every
// lock and unlock of its mutexes into it (debug builds only; release builds never touch it), and
// `Diagnostics.report` checks that it is 0: a diagnostic's handler never runs under a library
// lock, so it may call back into the library. A C thread-local because Swift has none of its own.

#ifdef __cplusplus
extern "C" {
#endif

/// The calling thread's count of held RunLoopKit mutexes.
int *_Nonnull rlk_held_mutexes(void);

#ifdef __cplusplus
}
#endif

#endif
