#define _GNU_SOURCE
#include "CGLibPeer.h"
#include "CBenchSupport.h"

#include <glib.h>
#include <pthread.h>
#include <stdlib.h>

enum { max_hooks = 32 };

struct bench_glib_peer {
    GMainContext *context;
    GMainLoop *main_loop;
    GSource *sources[max_hooks + 1];
    int source_count;
    GSource *ready;      // made ready before each pass (or by the other thread)
    long callouts;
    long hook_calls;
    int ack;
    int cpu;
    pthread_t thread;
    int started;
};

/// A custom source that points back at its peer.
typedef struct {
    GSource source;
    bench_glib_peer *peer;
} peer_source;

// A hook is called once per pass, as libuv's prepare and check handles and the loop's
// before-timers and before-sources observers are: half the hooks are sources with a prepare
// only, half sources with a check only (an odd count gets one more prepare).
static gboolean hook_prepare(GSource *source, gint *timeout) {
    ((peer_source *)source)->peer->hook_calls++;
    *timeout = -1;
    return FALSE;
}
static gboolean hook_check(GSource *source) {
    ((peer_source *)source)->peer->hook_calls++;
    return FALSE;
}
static gboolean hook_dispatch(GSource *source, GSourceFunc callback, gpointer data) {
    (void)source; (void)callback; (void)data;
    return G_SOURCE_CONTINUE;
}
static GSourceFuncs prepare_hook_funcs = { hook_prepare, NULL, hook_dispatch, NULL, NULL, NULL };
static GSourceFuncs check_hook_funcs = { NULL, hook_check, hook_dispatch, NULL, NULL, NULL };

static gboolean ready_dispatch(GSource *source, GSourceFunc callback, gpointer data) {
    (void)callback; (void)data;
    bench_glib_peer *peer = ((peer_source *)source)->peer;
    g_source_set_ready_time(source, -1);
    peer->callouts++;
    if (peer->ack >= 0 && bench_eventfd_post(peer->ack) != 0) abort();
    return G_SOURCE_CONTINUE;
}
static GSourceFuncs ready_funcs = { NULL, NULL, ready_dispatch, NULL, NULL, NULL };

static gboolean count_callout(gpointer data) {
    ((bench_glib_peer *)data)->callouts++;
    return G_SOURCE_CONTINUE;
}

static bench_glib_peer *peer_new(void) {
    bench_glib_peer *peer = calloc(1, sizeof *peer);
    if (!peer) return NULL;
    peer->ack = -1;
    peer->context = g_main_context_new();
    return peer;
}

static void attach(bench_glib_peer *peer, GSource *source) {
    g_source_attach(source, peer->context);
    peer->sources[peer->source_count++] = source;
}

static GSource *new_peer_source(bench_glib_peer *peer, GSourceFuncs *funcs) {
    GSource *source = g_source_new(funcs, sizeof(peer_source));
    ((peer_source *)source)->peer = peer;
    return source;
}

static void attach_hooks(bench_glib_peer *peer, int hooks) {
    for (int i = 0; i < hooks; i++) {
        attach(peer, new_peer_source(peer, i % 2 == 0 ? &prepare_hook_funcs : &check_hook_funcs));
    }
}

bench_glib_peer *bench_glib_polling_create(int hooks) {
    if (hooks < 0 || hooks > max_hooks) return NULL;
    bench_glib_peer *peer = peer_new();
    if (!peer) return NULL;
    GSource *idle = g_idle_source_new();
    g_source_set_callback(idle, count_callout, peer, NULL);
    attach(peer, idle);
    attach_hooks(peer, hooks);
    return peer;
}

bench_glib_peer *bench_glib_ready_source_create(int hooks) {
    if (hooks < 0 || hooks > max_hooks) return NULL;
    bench_glib_peer *peer = peer_new();
    if (!peer) return NULL;
    peer->ready = new_peer_source(peer, &ready_funcs);
    attach(peer, peer->ready);
    attach_hooks(peer, hooks);
    return peer;
}

long bench_glib_hook_calls(const bench_glib_peer *peer) { return peer->hook_calls; }

long bench_glib_passes(bench_glib_peer *peer, long n) {
    peer->callouts = 0;
    peer->hook_calls = 0;
    for (long i = 0; i < n; i++) {
        if (peer->ready) g_source_set_ready_time(peer->ready, 0);
        g_main_context_iteration(peer->context, FALSE);
    }
    return peer->callouts;
}

void bench_glib_destroy(bench_glib_peer *peer) {
    if (!peer) return;
    for (int i = 0; i < peer->source_count; i++) {
        g_source_destroy(peer->sources[i]);
        g_source_unref(peer->sources[i]);
    }
    if (peer->main_loop) g_main_loop_unref(peer->main_loop);
    g_main_context_unref(peer->context);
    if (peer->ack >= 0) bench_close(peer->ack);
    free(peer);
}

// MARK: cross-thread round trip

static void *serve(void *arg) {
    bench_glib_peer *peer = arg;
    if (bench_pin_current_thread(peer->cpu) != 0) abort();
    g_main_context_push_thread_default(peer->context);
    g_main_loop_run(peer->main_loop);
    g_main_context_pop_thread_default(peer->context);
    return NULL;
}

bench_glib_peer *bench_glib_round_trip_start(int cpu) {
    bench_glib_peer *peer = bench_glib_ready_source_create(0);
    if (!peer) return NULL;
    peer->cpu = cpu;
    peer->ack = bench_eventfd();
    peer->main_loop = g_main_loop_new(peer->context, FALSE);
    if (peer->ack < 0 || pthread_create(&peer->thread, NULL, serve, peer) != 0) {
        bench_glib_destroy(peer);
        return NULL;
    }
    peer->started = 1;
    return peer;
}

int bench_glib_round_trip(bench_glib_peer *peer) {
    g_source_set_ready_time(peer->ready, 0);
    return bench_eventfd_wait(peer->ack) > 0 ? 0 : -1;
}

void bench_glib_round_trip_stop(bench_glib_peer *peer) {
    if (!peer) return;
    if (peer->started) {
        g_main_loop_quit(peer->main_loop);
        pthread_join(peer->thread, NULL);
    }
    bench_glib_destroy(peer);
}
