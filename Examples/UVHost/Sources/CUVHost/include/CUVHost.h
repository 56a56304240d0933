#ifndef CUVHOST_H
#define CUVHOST_H

// A libuv loop that drives a RunLoopKit hosted run: which libuv handles do what.
//   uv_prepare_t  before libuv computes its poll timeout: the run's prepare(); its answer starts
//                 a uv_timer_t (the deadline) or a uv_idle_t (do not block); when the run may
//                 wait, libuv's poll is about to block: the run's BeforeWaiting
//   uv_poll_t     the run's descriptor, readable when the loop has work: wakes libuv's poll
//   uv_check_t    after libuv's poll: AfterWaiting (when it slept), then the run's dispatch()

#include <stdint.h>

#pragma clang assume_nonnull begin

/// What prepare answers: milliseconds libuv may block, or one of these.
enum {
    /// Block until the descriptor is readable.
    UVHOST_INDEFINITELY = -1,
    /// Do not block: the pass has work already.
    UVHOST_NO_WAIT = 0,
    /// The deadline has passed: a sleep of no length (BeforeWaiting and AfterWaiting, no block).
    UVHOST_DUE_NOW = -2,
};

/// The Swift side, called on the loop's thread (libuv's).
typedef struct uvhost_callbacks {
    void *_Nullable owner;
    int64_t (*_Nonnull prepare)(void *_Nullable owner);
    void (*_Nonnull will_sleep)(void *_Nullable owner);
    void (*_Nonnull did_wake)(void *_Nullable owner);
    /// Returns 1 when the run ended (libuv's loop then stops).
    int (*_Nonnull dispatch)(void *_Nullable owner);
} uvhost_callbacks;

typedef struct uvhost uvhost;

/// A new libuv loop whose handles drive the run watching `descriptor`; NULL when libuv fails
/// (then *error is libuv's code).
uvhost *_Nullable uvhost_create(int descriptor, uvhost_callbacks callbacks, int *error);
/// uv_run(UV_RUN_DEFAULT) until the run ends (dispatch returned 1) or uvhost_stop.
int uvhost_run(uvhost *host);
/// Stops uvhost_run at the end of this iteration.
void uvhost_stop(uvhost *host);
/// Closes the handles and the loop; frees `host`.
void uvhost_destroy(uvhost *host);
/// libuv iterations so far (uv_check_t callbacks), and those in which libuv blocked.
long uvhost_iterations(const uvhost *host);
long uvhost_sleeps(const uvhost *host);

#pragma clang assume_nonnull end

#endif
