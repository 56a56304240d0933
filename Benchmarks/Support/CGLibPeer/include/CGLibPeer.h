#ifndef CGLIBPEER_H
#define CGLIBPEER_H

// GLib's main loop doing the work the loop benchmarks measure, one C call per sample. Each
// "passes" function runs `n` g_main_context_iteration(context, FALSE) passes on a private
// GMainContext and returns how many callouts ran.

#ifdef __cplusplus
extern "C" {
#endif

/// A private GMainContext with its sources.
typedef struct bench_glib_peer bench_glib_peer;

/// Polling pass: one idle source (the callout of the pass) plus `hooks` observer-like custom
/// GSources whose prepare and check count and return FALSE.
bench_glib_peer *bench_glib_polling_create(int hooks);
/// Due timer: g_timeout_source_new(0), which stays due on every pass.
bench_glib_peer *bench_glib_timer_create(void);
/// Source activation: a custom GSource made ready with g_source_set_ready_time(source, 0)
/// before each pass; its dispatch clears the ready time (GLib's counterpart of signalling a
/// version-0 source).
bench_glib_peer *bench_glib_ready_source_create(void);
/// Runs `n` passes of the work the peer was created for; returns the callouts made.
long bench_glib_passes(bench_glib_peer *peer, long n);
/// Destroys the sources and the context and frees the peer.
void bench_glib_destroy(bench_glib_peer *peer);

/// Cross-thread round trip: a thread pinned to `cpu` runs g_main_loop_run on the context; the
/// caller makes a custom source ready with g_source_set_ready_time(source, 0) and its dispatch
/// writes an ack eventfd. NULL if the thread or eventfd failed.
bench_glib_peer *bench_glib_round_trip_start(int cpu);
/// One round trip: set the ready time, then a blocking read of the ack eventfd. 0 or -1.
int bench_glib_round_trip(bench_glib_peer *peer);
/// Quits the loop, joins its thread and frees the peer.
void bench_glib_round_trip_stop(bench_glib_peer *peer);

#ifdef __cplusplus
}
#endif

#endif
