#include "CUVHost.h"

#include <stdlib.h>
#include <uv.h>

struct uvhost {
    uv_loop_t loop;
    uv_prepare_t prepare;
    uv_check_t check;
    uv_poll_t poll;
    uv_timer_t deadline;
    uv_idle_t no_wait;
    uvhost_callbacks callbacks;
    int sleeping;
    int poll_ready;  // uv_poll_init succeeded: the handle must be closed
    long iterations;
    long sleeps;
};

static void nothing_poll(uv_poll_t *handle, int status, int events) { (void)handle; (void)status; (void)events; }
static void nothing_timer(uv_timer_t *handle) { (void)handle; }
static void nothing_idle(uv_idle_t *handle) { (void)handle; }

static void before_poll(uv_prepare_t *handle) {
    uvhost *host = handle->data;
    int64_t wait = host->callbacks.prepare(host->callbacks.owner);
    if (wait == UVHOST_NO_WAIT || wait == UVHOST_DUE_NOW) {
        uv_timer_stop(&host->deadline);
        uv_idle_start(&host->no_wait, nothing_idle);  // an active idle handle: libuv polls without blocking
    } else {
        uv_idle_stop(&host->no_wait);
        if (wait > 0) uv_timer_start(&host->deadline, nothing_timer, (uint64_t)wait, 0);
        else uv_timer_stop(&host->deadline);
    }
    // The loop is the run's own: with no idle handle started, libuv's poll blocks (public
    // uv_backend_timeout says 0 while a handle's descriptor change is queued, so it cannot tell).
    // A deadline that has passed is a sleep of no length, as the loop's own wait makes it.
    if (wait != UVHOST_NO_WAIT) {
        host->sleeping = 1;
        host->sleeps += 1;
        host->callbacks.will_sleep(host->callbacks.owner);
    }
}

static void after_poll(uv_check_t *handle) {
    uvhost *host = handle->data;
    host->iterations += 1;
    if (host->sleeping) {
        host->sleeping = 0;
        host->callbacks.did_wake(host->callbacks.owner);
    }
    if (host->callbacks.dispatch(host->callbacks.owner)) uv_stop(&host->loop);
}

uvhost *uvhost_create(int descriptor, uvhost_callbacks callbacks, int *error) {
    uvhost *host = calloc(1, sizeof *host);
    if (host == NULL) {
        *error = UV_ENOMEM;
        return NULL;
    }
    host->callbacks = callbacks;
    int status = uv_loop_init(&host->loop);
    if (status != 0) {
        free(host);
        *error = status;
        return NULL;
    }
    uv_prepare_init(&host->loop, &host->prepare);
    uv_check_init(&host->loop, &host->check);
    uv_timer_init(&host->loop, &host->deadline);
    uv_idle_init(&host->loop, &host->no_wait);
    host->prepare.data = host->check.data = host;
    status = uv_poll_init(&host->loop, &host->poll, descriptor);
    host->poll_ready = status == 0;
    if (status == 0) status = uv_poll_start(&host->poll, UV_READABLE, nothing_poll);
    if (status != 0) {
        *error = status;
        uvhost_destroy(host);
        return NULL;
    }
    uv_prepare_start(&host->prepare, before_poll);
    uv_check_start(&host->check, after_poll);
    return host;
}

int uvhost_run(uvhost *host) { return uv_run(&host->loop, UV_RUN_DEFAULT); }

void uvhost_stop(uvhost *host) { uv_stop(&host->loop); }

void uvhost_destroy(uvhost *host) {
    uv_close((uv_handle_t *)&host->prepare, NULL);
    uv_close((uv_handle_t *)&host->check, NULL);
    uv_close((uv_handle_t *)&host->deadline, NULL);
    uv_close((uv_handle_t *)&host->no_wait, NULL);
    if (host->poll_ready) uv_close((uv_handle_t *)&host->poll, NULL);
    uv_run(&host->loop, UV_RUN_NOWAIT);  // runs the close callbacks
    (void)uv_loop_close(&host->loop);
    free(host);
}

long uvhost_iterations(const uvhost *host) { return host->iterations; }
long uvhost_sleeps(const uvhost *host) { return host->sleeps; }
