#include "CGLibHostingPeer.h"

#include <glib.h>
#include <stdatomic.h>

static GMainLoop *main_loop;
static guint tickler_id;
static hosting_tick tickler_tick;
static atomic_long tickler_count;
static GPollFunc previous_poll;
static atomic_long blocking_polls;

void hosting_glib_run(void) {
    main_loop = g_main_loop_new(NULL, FALSE);
    g_main_loop_run(main_loop);
    g_main_loop_unref(main_loop);
    main_loop = NULL;
}

void hosting_glib_quit(void) {
    // g_main_loop_quit is thread-safe; the loop exists while hosting_glib_run runs.
    if (main_loop != NULL) g_main_loop_quit(main_loop);
}

static gboolean tickle(gpointer data) {
    (void)data;
    atomic_fetch_add(&tickler_count, 1);
    int next = tickler_tick();
    tickler_id = g_timeout_add_full(G_PRIORITY_DEFAULT, (guint)(next < 0 ? 0 : next), tickle, NULL, NULL);
    return G_SOURCE_REMOVE;
}

void hosting_tickler_start(int first_delay_ms, hosting_tick tick) {
    tickler_tick = tick;
    tickler_id = g_timeout_add_full(G_PRIORITY_DEFAULT, (guint)first_delay_ms, tickle, NULL, NULL);
}

void hosting_tickler_stop(void) {
    if (tickler_id != 0) g_source_remove(tickler_id);
    tickler_id = 0;
}

long hosting_tickler_ticks(void) { return atomic_load(&tickler_count); }

typedef struct invocation {
    void (*function)(void *);
    void *data;
} invocation;

static gboolean invoked(gpointer data) {
    invocation *call = data;
    call->function(call->data);
    g_free(call);
    return G_SOURCE_REMOVE;
}

void hosting_invoke(void (*function)(void *data), void *data) {
    invocation *call = g_new(invocation, 1);
    call->function = function;
    call->data = data;
    g_main_context_invoke(NULL, invoked, call);
}

static gint counting_poll(GPollFD *fds, guint nfds, gint timeout) {
    if (timeout != 0) atomic_fetch_add(&blocking_polls, 1);
    return previous_poll(fds, nfds, timeout);
}

void hosting_count_blocking_polls(void) {
    previous_poll = g_main_context_get_poll_func(NULL);
    g_main_context_set_poll_func(NULL, counting_poll);
}

long hosting_blocking_polls(void) { return atomic_load(&blocking_polls); }

void hosting_iterate(void *context, long n) {
    for (long i = 0; i < n; i++) g_main_context_iteration(context, FALSE);
}
