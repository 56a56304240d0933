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
/// GSources, each called once per pass: half have only a prepare, half only a check (an odd
/// count gets one more prepare), and each call counts and returns FALSE.
bench_glib_peer *bench_glib_polling_create(int hooks);
/// Source activation, and the due timer re-armed by the caller: a custom GSource made ready
/// with g_source_set_ready_time(source, 0) before each pass (0 is a time already past: GLib's
/// timeout sources are this same ready time, set by GLib itself); its dispatch clears the
/// ready time. Plus `hooks` hooks as in bench_glib_polling_create.
bench_glib_peer *bench_glib_ready_source_create(int hooks);
/// Runs `n` passes of the work the peer was created for; returns the callouts made.
long bench_glib_passes(bench_glib_peer *peer, long n);
/// The hook calls the last bench_glib_passes made (one per hook per pass when all is well).
long bench_glib_hook_calls(const bench_glib_peer *peer);
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
