#ifndef CLIBUVPEER_H
#define CLIBUVPEER_H

// libuv doing the work the loop benchmarks measure, one C call per sample. Each "passes"
// function runs `n` uv_run(UV_RUN_NOWAIT) passes and returns how many callouts ran, so the
// caller can check that every pass did its work.

#ifdef __cplusplus
extern "C" {
#endif

/// A private uv_loop_t with its handles.
typedef struct bench_uv_peer bench_uv_peer;

/// Polling pass: one active idle handle (the callout of the pass) plus `hooks` observer-like
/// handles, half uv_prepare_t and half uv_check_t (an odd count gets one more prepare).
bench_uv_peer *bench_uv_polling_create(int hooks);
/// The polling peer (no hooks) beside `fds` idle eventfds, each watched for reading by a
/// uv_poll_t and never written; NULL if any eventfd or handle cannot be made.
bench_uv_peer *bench_uv_polling_idle_fds_create(int fds);
/// Due timer re-armed by the caller: one uv_timer_t restarted with uv_timer_start(timer, cb, 0, 0)
/// before each pass (due at the loop's cached time, no clock read), plus `hooks` handles as in
/// bench_uv_polling_create.
bench_uv_peer *bench_uv_timer_create(int hooks);
/// Idle-handle activation: an idle handle started before each pass stops itself in its callback,
/// libuv's counterpart of signalling a version-0 source.
bench_uv_peer *bench_uv_idle_create(void);
/// Runs `n` passes of the work the peer was created for; returns the callouts made.
long bench_uv_passes(bench_uv_peer *peer, long n);
/// The hook calls the last bench_uv_passes made (one per hook per pass when all is well).
long bench_uv_hook_calls(const bench_uv_peer *peer);
/// Closes every handle, runs the loop until they are closed and frees the peer.
void bench_uv_destroy(bench_uv_peer *peer);

/// Cross-thread round trip: a loop thread pinned to `cpu` runs uv_run(UV_RUN_DEFAULT) with a
/// uv_async_t whose callback writes an ack eventfd. NULL if a thread or handle failed.
bench_uv_peer *bench_uv_round_trip_start(int cpu);
/// One round trip: uv_async_send, then a blocking read of the ack eventfd. 0 or -1.
int bench_uv_round_trip(bench_uv_peer *peer);
/// Stops the loop thread, joins it and frees the peer.
void bench_uv_round_trip_stop(bench_uv_peer *peer);

#ifdef __cplusplus
}
#endif

#endif
