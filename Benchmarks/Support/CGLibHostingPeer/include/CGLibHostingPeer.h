#ifndef CGLIBHOSTINGPEER_H
#define CGLIBHOSTINGPEER_H

// GLib's side of the hosting comparisons (Tools/GLibHosting): GLib's main loop on the default
// context, the swift-cross-ui "run loop tickler" (a GLib timeout that runs one pass of
// Foundation's main run loop every 50 ms or sooner), g_main_context_invoke, and a count of the
// polls in which GLib could block.

#ifdef __cplusplus
extern "C" {
#endif

/// Runs g_main_loop_run on the default context, on the calling thread, until hosting_glib_quit.
void hosting_glib_run(void);
/// Quits hosting_glib_run's loop; any thread.
void hosting_glib_quit(void);

/// Returns the next delay in milliseconds.
typedef int (*hosting_tick)(void);
/// Starts the tickler: a GLib timeout at G_PRIORITY_DEFAULT after `first_delay_ms` that calls
/// `tick` and re-arms itself after the delay `tick` returns.
void hosting_tickler_start(int first_delay_ms, hosting_tick tick);
/// Stops the tickler (on the thread running the loop).
void hosting_tickler_stop(void);
/// How many times the tickler ticked.
long hosting_tickler_ticks(void);

/// g_main_context_invoke(NULL, …): runs `function(data)` on the thread running the default
/// context's loop; from another thread GLib adds an idle source and wakes the loop.
void hosting_invoke(void (*function)(void *data), void *data);

/// Wraps the default context's poll function to count the polls whose timeout is not zero
/// (GLib may block in them: each return is a wake-up). Call before hosting_glib_run.
void hosting_count_blocking_polls(void);
/// The polls counted so far.
long hosting_blocking_polls(void);

/// Runs `n` iterations of `context` (a GMainContext *) that do not block.
void hosting_iterate(void *context, long n);

#ifdef __cplusplus
}
#endif

#endif
