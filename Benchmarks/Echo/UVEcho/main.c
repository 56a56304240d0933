// uv-echo: libuv's echo server, the peer of runloopkit-echo in Scripts/run-echo.sh. One loop
// (uv_default_loop) on the main thread; TCP_NODELAY on each connection; a malloc'd 64 KiB read
// buffer per read handed to uv_write and freed in its callback (libuv's own echo-server pattern).
//
//   uv-echo   (prints "listening on 127.0.0.1:PORT"; SIGTERM or SIGINT stops it)
#include <stdio.h>
#include <stdlib.h>
#include <uv.h>

typedef struct {
    uv_write_t request;
    uv_buf_t buffer;
} write_request;

static void check(int status, const char *what) {
    if (status < 0) {
        fprintf(stderr, "uv-echo: %s: %s\n", what, uv_strerror(status));
        exit(1);
    }
}

static void allocate(uv_handle_t *handle, size_t suggested, uv_buf_t *buffer) {
    (void)handle;
    (void)suggested;
    buffer->base = malloc(65536);
    buffer->len = buffer->base ? 65536 : 0;
}

static void closed(uv_handle_t *handle) { free(handle); }

static void written(uv_write_t *request, int status) {
    write_request *write = (write_request *)request;
    free(write->buffer.base);
    free(write);
    if (status < 0 && !uv_is_closing((uv_handle_t *)request->handle)) uv_close((uv_handle_t *)request->handle, closed);
}

static void received(uv_stream_t *stream, ssize_t count, const uv_buf_t *buffer) {
    if (count <= 0) {
        free(buffer->base);
        if (count < 0 && !uv_is_closing((uv_handle_t *)stream)) uv_close((uv_handle_t *)stream, closed);
        return;
    }
    write_request *write = malloc(sizeof *write);
    if (!write) {
        free(buffer->base);
        uv_close((uv_handle_t *)stream, closed);
        return;
    }
    write->buffer = uv_buf_init(buffer->base, (unsigned)count);
    if (uv_write(&write->request, stream, &write->buffer, 1, written) < 0) {
        free(buffer->base);
        free(write);
        uv_close((uv_handle_t *)stream, closed);
    }
}

static void connected(uv_stream_t *server, int status) {
    check(status, "listen callback");
    uv_tcp_t *client = malloc(sizeof *client);
    if (!client) return;
    check(uv_tcp_init(server->loop, client), "uv_tcp_init");
    if (uv_accept(server, (uv_stream_t *)client) != 0) {
        uv_close((uv_handle_t *)client, closed);
        return;
    }
    check(uv_tcp_nodelay(client, 1), "uv_tcp_nodelay");
    check(uv_read_start((uv_stream_t *)client, allocate, received), "uv_read_start");
}

static void stop(uv_signal_t *signal, int number) {
    (void)number;
    uv_stop(signal->loop);
}

int main(void) {
    uv_loop_t *loop = uv_default_loop();
    uv_tcp_t server;
    check(uv_tcp_init(loop, &server), "uv_tcp_init");
    struct sockaddr_in address;
    check(uv_ip4_addr("127.0.0.1", 0, &address), "uv_ip4_addr");
    check(uv_tcp_bind(&server, (const struct sockaddr *)&address, 0), "uv_tcp_bind");
    check(uv_listen((uv_stream_t *)&server, 1024, connected), "uv_listen");
    struct sockaddr_in bound;
    int length = sizeof bound;
    check(uv_tcp_getsockname(&server, (struct sockaddr *)&bound, &length), "uv_tcp_getsockname");
    uv_signal_t term, interrupt;
    check(uv_signal_init(loop, &term), "uv_signal_init");
    check(uv_signal_start(&term, stop, SIGTERM), "uv_signal_start");
    check(uv_signal_init(loop, &interrupt), "uv_signal_init");
    check(uv_signal_start(&interrupt, stop, SIGINT), "uv_signal_start");
    printf("listening on 127.0.0.1:%d\n", ntohs(bound.sin_port));
    fflush(stdout);
    uv_run(loop, UV_RUN_DEFAULT);
    return 0;
}
