// echo-load: the one load generator for every echo server of Scripts/run-echo.sh.
//
//   echo-load PORT CONNECTIONS SECONDS [MESSAGE_BYTES] [WARMUP_SECONDS]
//
// Opens CONNECTIONS sockets to 127.0.0.1:PORT; each runs closed-loop request/response: send one
// MESSAGE_BYTES message (ending in '\n'), wait until the whole echo is back and equal to what
// was sent, record the latency, send the next. One thread, epoll, non-blocking sockets. After
// WARMUP_SECONDS (default 1) it counts for SECONDS and prints one line:
//   requests_per_second=R p50_us=X p99_us=Y connections=N errors=0
// Exits 1 on any mismatch, connection failure or early close.
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    int fd;
    int connected;
    size_t sent, received;
    unsigned long sequence;
    long long started_ns;
    unsigned char message[4096];
    unsigned char echo[4096];
} connection;

static long long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void die(const char *what) {
    fprintf(stderr, "echo-load: %s: %s\n", what, strerror(errno));
    exit(1);
}

static int compare_ll(const void *a, const void *b) {
    long long x = *(const long long *)a, y = *(const long long *)b;
    return x < y ? -1 : x > y;
}

static size_t message_bytes;

static void fill(connection *c, int index) {
    // A different message each request, so a stale or misrouted echo shows.
    for (size_t i = 0; i + 1 < message_bytes; i++)
        c->message[i] = (unsigned char)('a' + (i * 7 + c->sequence * 13 + (unsigned long)index) % 26);
    c->message[message_bytes - 1] = '\n';
    c->sent = c->received = 0;
}

static int pump_send(connection *c) {
    while (c->sent < message_bytes) {
        ssize_t n = send(c->fd, c->message + c->sent, message_bytes - c->sent, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN) return 0;
            return -1;
        }
        c->sent += (size_t)n;
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: echo-load PORT CONNECTIONS SECONDS [MESSAGE_BYTES] [WARMUP_SECONDS]\n");
        return 2;
    }
    int port = atoi(argv[1]), count = atoi(argv[2]);
    double seconds = atof(argv[3]);
    message_bytes = argc > 4 ? (size_t)atoi(argv[4]) : 64;
    double warmup = argc > 5 ? atof(argv[5]) : 1.0;
    if (message_bytes < 2 || message_bytes > 4096 || count < 1 || seconds <= 0) {
        fprintf(stderr, "echo-load: MESSAGE_BYTES must be 2..4096, CONNECTIONS and SECONDS positive\n");
        return 2;
    }
    int epoll = epoll_create1(EPOLL_CLOEXEC);
    if (epoll < 0) die("epoll_create1");
    connection *connections = calloc((size_t)count, sizeof(connection));
    if (!connections) die("calloc");
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((unsigned short)port),
                                  .sin_addr.s_addr = htonl(0x7f000001)};
    for (int i = 0; i < count; i++) {
        connection *c = &connections[i];
        c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (c->fd < 0) die("socket");
        int on = 1;
        if (setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on) != 0) die("setsockopt(TCP_NODELAY)");
        if (connect(c->fd, (struct sockaddr *)&address, sizeof address) != 0 && errno != EINPROGRESS) die("connect");
        struct epoll_event event = {.events = EPOLLIN | EPOLLOUT, .data.u32 = (unsigned)i};
        if (epoll_ctl(epoll, EPOLL_CTL_ADD, c->fd, &event) != 0) die("epoll_ctl");
    }
    size_t capacity = 1 << 20, samples = 0;
    long long *latencies = malloc(capacity * sizeof(long long));
    if (!latencies) die("malloc");
    long long start = now_ns(), measure_from = start + (long long)(warmup * 1e9);
    long long end = measure_from + (long long)(seconds * 1e9);
    long long requests = 0;
    int connected = 0;
    struct epoll_event events[256];
    for (;;) {
        long long now = now_ns();
        if (now >= end) break;
        if (now - start > 30000000000LL && connected < count) {
            fprintf(stderr, "echo-load: only %d of %d connections connected after 30 s\n", connected, count);
            return 1;
        }
        int ready = epoll_wait(epoll, events, 256, 100);
        if (ready < 0) {
            if (errno == EINTR) continue;
            die("epoll_wait");
        }
        for (int e = 0; e < ready; e++) {
            int index = (int)events[e].data.u32;
            connection *c = &connections[index];
            if (events[e].events & (EPOLLERR | EPOLLHUP)) {
                fprintf(stderr, "echo-load: connection %d failed or was closed by the server\n", index);
                return 1;
            }
            if (!c->connected) {
                if (!(events[e].events & EPOLLOUT)) continue;
                int code = 0;
                socklen_t length = sizeof code;
                if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &code, &length) != 0 || code != 0) {
                    fprintf(stderr, "echo-load: connect %d: %s\n", index, strerror(code));
                    return 1;
                }
                c->connected = 1;
                connected++;
                struct epoll_event event = {.events = EPOLLIN, .data.u32 = (unsigned)index};
                if (epoll_ctl(epoll, EPOLL_CTL_MOD, c->fd, &event) != 0) die("epoll_ctl(MOD)");
                fill(c, index);
                c->started_ns = now_ns();
                if (pump_send(c) != 0) die("send");
                continue;
            }
            if (events[e].events & EPOLLIN) {
                for (;;) {
                    ssize_t n = recv(c->fd, c->echo + c->received, message_bytes - c->received, 0);
                    if (n < 0) {
                        if (errno == EINTR) continue;
                        if (errno == EAGAIN) break;
                        die("recv");
                    }
                    if (n == 0) {
                        fprintf(stderr, "echo-load: connection %d closed by the server\n", index);
                        return 1;
                    }
                    c->received += (size_t)n;
                    if (c->received < message_bytes) continue;
                    if (memcmp(c->echo, c->message, message_bytes) != 0) {
                        fprintf(stderr, "echo-load: connection %d: the echo differs from the request\n", index);
                        return 1;
                    }
                    long long done = now_ns();
                    if (c->started_ns >= measure_from && done < end) {
                        requests++;
                        if (samples == capacity) {
                            capacity *= 2;
                            latencies = realloc(latencies, capacity * sizeof(long long));
                            if (!latencies) die("realloc");
                        }
                        latencies[samples++] = done - c->started_ns;
                    }
                    c->sequence++;
                    fill(c, index);
                    c->started_ns = done;
                    if (pump_send(c) != 0) die("send");
                    break;
                }
            }
            if (c->sent < message_bytes && pump_send(c) != 0) die("send");
        }
    }
    if (samples == 0) {
        fprintf(stderr, "echo-load: no request completed in the measured window\n");
        return 1;
    }
    qsort(latencies, samples, sizeof(long long), compare_ll);
    printf("requests_per_second=%.0f p50_us=%.1f p99_us=%.1f connections=%d errors=0\n", requests / seconds,
           latencies[samples / 2] / 1000.0, latencies[(size_t)(samples * 0.99)] / 1000.0, count);
    return 0;
}
