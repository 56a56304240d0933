#define _GNU_SOURCE
#include "CLibuvPeer.h"
#include "CBenchSupport.h"

#include <pthread.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <uv.h>

enum { max_hooks = 16 };

struct bench_uv_peer {
    uv_loop_t loop;
    uv_idle_t idle;
    uv_timer_t timer;
    uv_async_t async;
    uv_async_t stop;
    uv_prepare_t prepares[max_hooks];
    uv_check_t checks[max_hooks];
    int prepare_count, check_count;
    int has_idle, has_timer, has_async, has_stop, restart_idle, restart_timer;
    long callouts;
    long hook_calls;
    int ack;
    int cpu;
    pthread_t thread;
    int started;
    uv_poll_t *polls;      // idle fd handles (bench_uv_polling_idle_fds_create)
    int *poll_fds;
    int poll_count;
};

static bench_uv_peer *peer_of(const void *handle) {
    return (bench_uv_peer *)((const uv_handle_t *)handle)->data;
}

static void on_idle(uv_idle_t *handle) { peer_of(handle)->callouts++; }
static void on_idle_once(uv_idle_t *handle) {
    peer_of(handle)->callouts++;
    uv_idle_stop(handle);
}
static void on_timer(uv_timer_t *handle) { peer_of(handle)->callouts++; }
static void on_prepare(uv_prepare_t *handle) { peer_of(handle)->hook_calls++; }
static void on_check(uv_check_t *handle) { peer_of(handle)->hook_calls++; }
// An idle fd is never written; a call would add a callout and fail the pass check.
static void on_poll(uv_poll_t *handle, int status, int events) {
    (void)status; (void)events;
    peer_of(handle)->callouts++;
}

static bench_uv_peer *peer_new(void) {
    bench_uv_peer *peer = calloc(1, sizeof *peer);
    if (!peer) return NULL;
    peer->ack = -1;
    if (uv_loop_init(&peer->loop) != 0) {
        free(peer);
        return NULL;
    }
    return peer;
}

static void add_hooks(bench_uv_peer *peer, int hooks) {
    peer->prepare_count = (hooks + 1) / 2;
    peer->check_count = hooks / 2;
    for (int i = 0; i < peer->prepare_count; i++) {
        uv_prepare_init(&peer->loop, &peer->prepares[i]);
        peer->prepares[i].data = peer;
        uv_prepare_start(&peer->prepares[i], on_prepare);
    }
    for (int i = 0; i < peer->check_count; i++) {
        uv_check_init(&peer->loop, &peer->checks[i]);
        peer->checks[i].data = peer;
        uv_check_start(&peer->checks[i], on_check);
    }
}

bench_uv_peer *bench_uv_polling_create(int hooks) {
    if (hooks < 0 || hooks > 2 * max_hooks) return NULL;
    bench_uv_peer *peer = peer_new();
    if (!peer) return NULL;
    uv_idle_init(&peer->loop, &peer->idle);
    peer->idle.data = peer;
    uv_idle_start(&peer->idle, on_idle);
    peer->has_idle = 1;
    add_hooks(peer, hooks);
    return peer;
}

bench_uv_peer *bench_uv_polling_idle_fds_create(int fds) {
    if (fds < 1) return NULL;
    bench_uv_peer *peer = bench_uv_polling_create(0);
    if (!peer) return NULL;
    peer->polls = calloc((size_t)fds, sizeof *peer->polls);
    peer->poll_fds = calloc((size_t)fds, sizeof *peer->poll_fds);
    if (!peer->polls || !peer->poll_fds) {
        bench_uv_destroy(peer);
        return NULL;
    }
    for (int i = 0; i < fds; i++) {
        int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        if (fd < 0) {
            bench_uv_destroy(peer);
            return NULL;
        }
        if (uv_poll_init(&peer->loop, &peer->polls[i], fd) != 0) {
            close(fd);
            bench_uv_destroy(peer);
            return NULL;
        }
        peer->poll_fds[i] = fd;
        peer->polls[i].data = peer;
        peer->poll_count = i + 1;
        if (uv_poll_start(&peer->polls[i], UV_READABLE, on_poll) != 0) {
            bench_uv_destroy(peer);
            return NULL;
        }
    }
    return peer;
}

bench_uv_peer *bench_uv_timer_create(int hooks) {
    if (hooks < 0 || hooks > 2 * max_hooks) return NULL;
    bench_uv_peer *peer = peer_new();
    if (!peer) return NULL;
    uv_timer_init(&peer->loop, &peer->timer);
    peer->timer.data = peer;
    peer->has_timer = 1;
    peer->restart_timer = 1;
    add_hooks(peer, hooks);
    return peer;
}

bench_uv_peer *bench_uv_idle_create(void) {
    bench_uv_peer *peer = peer_new();
    if (!peer) return NULL;
    uv_idle_init(&peer->loop, &peer->idle);
    peer->idle.data = peer;
    peer->has_idle = 1;
    peer->restart_idle = 1;
    return peer;
}

long bench_uv_hook_calls(const bench_uv_peer *peer) { return peer->hook_calls; }

long bench_uv_passes(bench_uv_peer *peer, long n) {
    peer->callouts = 0;
    peer->hook_calls = 0;
    for (long i = 0; i < n; i++) {
        if (peer->restart_timer) uv_timer_start(&peer->timer, on_timer, 0, 0);
        if (peer->restart_idle) uv_idle_start(&peer->idle, on_idle_once);
        uv_run(&peer->loop, UV_RUN_NOWAIT);
    }
    return peer->callouts;
}

static void close_all(bench_uv_peer *peer) {
    if (peer->has_idle) uv_close((uv_handle_t *)&peer->idle, NULL);
    if (peer->has_timer) uv_close((uv_handle_t *)&peer->timer, NULL);
    if (peer->has_async) uv_close((uv_handle_t *)&peer->async, NULL);
    if (peer->has_stop) uv_close((uv_handle_t *)&peer->stop, NULL);
    for (int i = 0; i < peer->prepare_count; i++) uv_close((uv_handle_t *)&peer->prepares[i], NULL);
    for (int i = 0; i < peer->check_count; i++) uv_close((uv_handle_t *)&peer->checks[i], NULL);
    for (int i = 0; i < peer->poll_count; i++) uv_close((uv_handle_t *)&peer->polls[i], NULL);
    uv_run(&peer->loop, UV_RUN_DEFAULT);
    uv_loop_close(&peer->loop);
    for (int i = 0; i < peer->poll_count; i++) bench_close(peer->poll_fds[i]);
    free(peer->polls);
    free(peer->poll_fds);
}

void bench_uv_destroy(bench_uv_peer *peer) {
    if (!peer) return;
    close_all(peer);
    if (peer->ack >= 0) bench_close(peer->ack);
    free(peer);
}

// MARK: cross-thread round trip

static void on_async(uv_async_t *handle) {
    if (bench_eventfd_post(peer_of(handle)->ack) != 0) abort();
}

static void on_stop(uv_async_t *handle) { uv_stop(handle->loop); }

static void *serve(void *arg) {
    bench_uv_peer *peer = arg;
    if (bench_pin_current_thread(peer->cpu) != 0) abort();
    uv_run(&peer->loop, UV_RUN_DEFAULT);
    return NULL;
}

bench_uv_peer *bench_uv_round_trip_start(int cpu) {
    bench_uv_peer *peer = peer_new();
    if (!peer) return NULL;
    peer->cpu = cpu;
    peer->ack = bench_eventfd();
    if (peer->ack < 0 || uv_async_init(&peer->loop, &peer->async, on_async) != 0) {
        bench_uv_destroy(peer);
        return NULL;
    }
    peer->async.data = peer;
    peer->has_async = 1;
    if (uv_async_init(&peer->loop, &peer->stop, on_stop) != 0) {
        bench_uv_destroy(peer);
        return NULL;
    }
    peer->has_stop = 1;
    if (pthread_create(&peer->thread, NULL, serve, peer) != 0) {
        bench_uv_destroy(peer);
        return NULL;
    }
    peer->started = 1;
    return peer;
}

int bench_uv_round_trip(bench_uv_peer *peer) {
    if (uv_async_send(&peer->async) != 0) return -1;
    return bench_eventfd_wait(peer->ack) > 0 ? 0 : -1;
}

void bench_uv_round_trip_stop(bench_uv_peer *peer) {
    if (!peer) return;
    if (peer->started) {
        uv_async_send(&peer->stop);
        pthread_join(peer->thread, NULL);
    }
    bench_uv_destroy(peer);
}
