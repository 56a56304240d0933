// echo-many: the load generator of Scripts/run-many-connections.sh and Scripts/run-churn.sh
// (issue 31, items 3 and 4), for any echo server on 127.0.0.1. One thread, epoll, non-blocking
// sockets; client sockets are spread over source addresses 127.0.0.2 … 127.0.0.(1+SOURCES)
// (IP_BIND_ADDRESS_NO_PORT), so the ephemeral ports of one address do not run out.
//
//   echo-many idle PORT CONNECTIONS ACTIVE SECONDS [--window W] [--sources K] [--server-pid PID]
//     Connects CONNECTIONS clients, at most W (default 256) of them still connecting or waiting
//     for their 1-byte probe's echo at a time; the time until every probe came back is the time
//     to accept them all. Then ACTIVE of them, spread evenly, run closed-loop 64-byte
//     request/response for 1 s of warm-up and SECONDS measured; the others stay connected and
//     silent. With --server-pid it reads the server's resident set, descriptors and CPU time
//     from /proc, and the kernel's socket memory (/proc/net/sockstat, /proc/meminfo's Slab).
//     At the end it resets every connection (SO_LINGER 0), so none is left in TIME_WAIT.
//
//   echo-many churn PORT TOTAL CONCURRENCY [--sources K] [--server-pid PID]
//     TOTAL short connections, CONCURRENCY at a time: connect, send one 64-byte request, read its
//     echo, close. The latency of one is from the connect call to the last byte of the reply.
//     Afterwards it waits (up to 10 s) for the server's descriptors to come back.
//
//   echo-many pairs PORT_MANY PID_MANY PORT_FEW PID_FEW CONNECTIONS ACTIVE ROUNDS CHUNK_MS [--sources K]
//     The CPU per request of a server holding CONNECTIONS connections against one holding ACTIVE,
//     ACTIVE of each running, in chunks that alternate between the two servers (pairs.c).
//
// Prints one line of key=value pairs; exits 1 when an echo differs, a connection fails or the
// server closes one, 2 on bad usage.
#include "echo_many.h"

#include <dirent.h>
#include <sys/resource.h>

long long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

void die(const char *what) {
    fprintf(stderr, "echo-many: %s: %s\n", what, strerror(errno));
    exit(1);
}

int compare_ll(const void *a, const void *b) {
    long long x = *(const long long *)a, y = *(const long long *)b;
    return x < y ? -1 : x > y;
}

// MARK: - /proc

static long server_pid = 0;

static long status_kib(const char *field) {
    if (server_pid <= 0) return -1;
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%ld/status", server_pid);
    FILE *file = fopen(path, "r");
    if (!file) return -1;
    long kib = -1;
    size_t length = strlen(field);
    while (fgets(line, sizeof line, file)) if (strncmp(line, field, length) == 0) kib = atol(line + length);
    fclose(file);
    return kib;
}

static long server_descriptors(void) {
    if (server_pid <= 0) return -1;
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/fd", server_pid);
    DIR *directory = opendir(path);
    if (!directory) return -1;
    long count = 0;
    struct dirent *entry;
    while ((entry = readdir(directory))) if (entry->d_name[0] != '.') count++;
    closedir(directory);
    return count;
}

/// The server's CPU time in user space and in the kernel, in milliseconds ({-1, -1} unknown).
typedef struct { long user_ms, system_ms; } cpu_times;

static cpu_times server_cpu(void) {
    cpu_times unknown = {-1, -1};
    if (server_pid <= 0) return unknown;
    char path[64], text[1024];
    snprintf(path, sizeof path, "/proc/%ld/stat", server_pid);
    FILE *file = fopen(path, "r");
    if (!file) return unknown;
    size_t n = fread(text, 1, sizeof text - 1, file);
    fclose(file);
    text[n] = 0;
    char *field = strrchr(text, ')');
    unsigned long user = 0, system = 0;
    if (!field || sscanf(field + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &user, &system) != 2) return unknown;
    unsigned long tick = (unsigned long)sysconf(_SC_CLK_TCK);
    cpu_times times = {(long)(user * 1000 / tick), (long)(system * 1000 / tick)};
    return times;
}

/// The server's CPU time (user + system), in milliseconds.
static long server_cpu_ms(void) {
    cpu_times times = server_cpu();
    return times.user_ms < 0 ? -1 : times.user_ms + times.system_ms;
}

/// The pages the kernel's TCP sockets hold for buffers (/proc/net/sockstat "TCP: … mem N").
static long tcp_memory_pages(void) {
    FILE *file = fopen("/proc/net/sockstat", "r");
    if (!file) return -1;
    char line[256];
    long pages = -1;
    while (fgets(line, sizeof line, file)) {
        char *mem = strstr(line, " mem ");
        if (strncmp(line, "TCP:", 4) == 0 && mem) pages = atol(mem + 5);
    }
    fclose(file);
    return pages;
}

/// The kernel's slab memory (/proc/meminfo Slab), in KiB: socket structures live there.
static long slab_kib(void) {
    FILE *file = fopen("/proc/meminfo", "r");
    if (!file) return -1;
    char line[256];
    long kib = -1;
    while (fgets(line, sizeof line, file)) if (strncmp(line, "Slab:", 5) == 0) kib = atol(line + 5);
    fclose(file);
    return kib;
}

// MARK: - sockets

int sources = 4;
static int port = 0;

/// A non-blocking socket from 127.0.0.(2 + index % sources), connecting to 127.0.0.1:port.
int open_client(long index, int port) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) die("socket");
    int on = 1;
    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on) != 0) die("setsockopt(TCP_NODELAY)");
    if (setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &on, sizeof on) != 0) die("setsockopt(IP_BIND_ADDRESS_NO_PORT)");
    struct sockaddr_in source = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7f000002u + (uint32_t)(index % sources))};
    if (bind(fd, (struct sockaddr *)&source, sizeof source) != 0) die("bind");
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((unsigned short)port), .sin_addr.s_addr = htonl(0x7f000001)};
    if (connect(fd, (struct sockaddr *)&address, sizeof address) != 0 && errno != EINPROGRESS) die("connect");
    return fd;
}

void watch(int epoll, int operation, int fd, uint32_t events, uint32_t index) {
    struct epoll_event event = {.events = events, .data.u32 = index};
    if (epoll_ctl(epoll, operation, fd, &event) != 0) die("epoll_ctl");
}

/// Returns once a non-blocking connect completed, or exits naming the error.
void check_connected(int fd, long index) {
    int code = 0;
    socklen_t length = sizeof code;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &code, &length) != 0 || code != 0) {
        fprintf(stderr, "echo-many: connection %ld: %s\n", index, strerror(code));
        exit(1);
    }
}

void fill(unsigned char *message, unsigned long sequence, long index) {
    for (int i = 0; i + 1 < MESSAGE; i++) message[i] = (unsigned char)('a' + ((unsigned long)i * 7 + sequence * 13 + (unsigned long)index) % 26);
    message[MESSAGE - 1] = '\n';
}

/// Sends all of `message` (64 bytes fit a fresh socket's buffer: a short send is an error here).
void send_all(int fd, const unsigned char *message) {
    ssize_t n;
    do { n = send(fd, message, MESSAGE, MSG_NOSIGNAL); } while (n < 0 && errno == EINTR);
    if (n != MESSAGE) die("send");
}

// MARK: - idle connections, a few active

/// Connects clients[from..<to] to 127.0.0.1:port, at most `window` of them still connecting or
/// waiting for their 1-byte probe's echo at a time, each proven served by that echo; each is
/// left idle (state 2: registered in `epoll` for hang-ups only, its index as the event's data).
/// Exits on a failed connect, a wrong echo, or 120 s without all of them served.
void connect_clients(int epoll, idle_client *clients, long from, long to, int port, long window) {
    struct epoll_event events[512];
    long next = from, pending = 0, served = 0, count = to - from;
    long long start = now_ns();
    while (served < count) {
        while (pending < window && next < to) {
            clients[next].fd = open_client(next, port);
            watch(epoll, EPOLL_CTL_ADD, clients[next].fd, EPOLLOUT, (uint32_t)next);
            next++;
            pending++;
        }
        if (now_ns() - start > 120000000000LL) {
            fprintf(stderr, "echo-many: only %ld of %ld connections served after 120 s\n", served, count);
            exit(1);
        }
        int ready = epoll_wait(epoll, events, 512, 100);
        if (ready < 0 && errno != EINTR) die("epoll_wait");
        for (int e = 0; e < ready; e++) {
            long index = events[e].data.u32;
            idle_client *c = &clients[index];
            if (c->state == 0) {
                check_connected(c->fd, index);
                unsigned char probe = 'p';
                if (send(c->fd, &probe, 1, MSG_NOSIGNAL) != 1) die("send(probe)");
                c->state = 1;
                watch(epoll, EPOLL_CTL_MOD, c->fd, EPOLLIN, (uint32_t)index);
            } else if (c->state == 1) {
                unsigned char probe = 0;
                ssize_t n = recv(c->fd, &probe, 1, 0);
                if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
                if (n != 1 || probe != 'p') {
                    fprintf(stderr, "echo-many: connection %ld: no probe echo (%zd)\n", index, n);
                    exit(1);
                }
                c->state = 2;
                watch(epoll, EPOLL_CTL_MOD, c->fd, 0, (uint32_t)index);   // silent; hang-ups still reported
                pending--;
                served++;
            } else {
                fprintf(stderr, "echo-many: connection %ld: closed by the server while idle\n", index);
                exit(1);
            }
        }
    }
}


/// Reads what `c`'s echo has ready. Returns 1 once all MESSAGE bytes arrived and match the
/// request (`received` is reset for the next), 0 when more is to come. Exits when the
/// connection is not active (the server closed an idle one), closed, failed or echoed wrong.
int receive_echo(idle_client *c, long index) {
    if (c->state != 3) {
        fprintf(stderr, "echo-many: connection %ld: closed by the server while idle\n", index);
        exit(1);
    }
    for (;;) {
        ssize_t n = recv(c->fd, c->echo + c->received, (size_t)(MESSAGE - c->received), 0);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) return 0;
        if (n <= 0) {
            fprintf(stderr, "echo-many: active connection %ld closed or failed\n", index);
            exit(1);
        }
        c->received += (int)n;
        if (c->received < MESSAGE) continue;
        if (memcmp(c->echo, c->message, MESSAGE) != 0) {
            fprintf(stderr, "echo-many: connection %ld: the echo differs\n", index);
            exit(1);
        }
        c->received = 0;
        return 1;
    }
}

static int idle_mode(long count, long active, double seconds, long window) {
    long rss_before = status_kib("VmRSS:"), fds_before = server_descriptors();
    long pages_before = tcp_memory_pages(), slab_before = slab_kib();
    int epoll = epoll_create1(EPOLL_CLOEXEC);
    if (epoll < 0) die("epoll_create1");
    idle_client *clients = calloc((size_t)count, sizeof *clients);
    if (!clients) die("calloc");
    struct epoll_event events[512];

    long long start = now_ns();
    connect_clients(epoll, clients, 0, count, port, window);
    double accept_seconds = (now_ns() - start) / 1e9;
    long rss_connected = status_kib("VmRSS:"), fds_connected = server_descriptors();
    long pages_connected = tcp_memory_pages(), slab_connected = slab_kib();

    // The active few: closed-loop request/response.
    long step = active > 0 ? count / active : count;
    for (long a = 0; a < active; a++) {
        long index = a * step;
        idle_client *c = &clients[index];
        c->state = 3;
        c->message = malloc(MESSAGE);
        if (!c->message) die("malloc");
        watch(epoll, EPOLL_CTL_MOD, c->fd, EPOLLIN, (uint32_t)index);
        fill(c->message, 0, index);
        c->started_ns = now_ns();
        send_all(c->fd, c->message);
    }
    size_t capacity = 1 << 20, samples = 0;
    long long *latencies = malloc(capacity * sizeof(long long));
    if (!latencies) die("malloc");
    long long measure_from = now_ns() + 1000000000LL, end = measure_from + (long long)(seconds * 1e9);
    long cpu_from = -1, user_from = -1;
    long long requests = 0;
    for (;;) {
        long long now = now_ns();
        if (cpu_from < 0 && now >= measure_from) {
            cpu_times times = server_cpu();
            user_from = times.user_ms;
            cpu_from = times.user_ms + times.system_ms;
        }
        if (now >= end) break;
        int ready = epoll_wait(epoll, events, 512, 100);
        if (ready < 0 && errno != EINTR) die("epoll_wait");
        for (int e = 0; e < ready; e++) {
            long index = events[e].data.u32;
            idle_client *c = &clients[index];
            if (!receive_echo(c, index)) continue;
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
            fill(c->message, ++c->sequence, index);
            c->started_ns = done;
            send_all(c->fd, c->message);
        }
    }
    cpu_times times_to = server_cpu();
    long cpu_to = times_to.user_ms + times_to.system_ms, user_to = times_to.user_ms;
    if (samples == 0) {
        fprintf(stderr, "echo-many: no request completed in the measured window\n");
        return 1;
    }
    qsort(latencies, samples, sizeof(long long), compare_ll);
    printf("connections=%ld active=%ld accept_all_seconds=%.3f requests_per_second=%.0f p50_us=%.1f p99_us=%.1f "
           "server_cpu_ms=%ld server_cpu_us_per_request=%.2f server_user_us_per_request=%.2f server_rss_kib_before=%ld server_rss_kib_connected=%ld "
           "server_fds_before=%ld server_fds_connected=%ld tcp_mem_pages_before=%ld tcp_mem_pages_connected=%ld "
           "slab_kib_before=%ld slab_kib_connected=%ld\n",
           count, active, accept_seconds, requests / seconds, latencies[samples / 2] / 1000.0,
           latencies[(size_t)(samples * 0.99)] / 1000.0, cpu_to - cpu_from, (cpu_to - cpu_from) * 1000.0 / (double)requests,
           (user_to - user_from) * 1000.0 / (double)requests,
           rss_before, rss_connected, fds_before, fds_connected, pages_before, pages_connected, slab_before, slab_connected);
    fflush(stdout);
    // Reset every connection rather than close it: a close leaves each of them in TIME_WAIT for
    // a minute (tens of thousands of sockets whose timers and lookups the kernel serves while the
    // next server is measured, which slowed whichever server ran after another). A reset leaves
    // none, so each run starts from the same kernel state.
    reset_clients(clients, 0, count);
    return 0;
}

/// Closes clients[from..<to] with a reset (SO_LINGER 0), so none is left in TIME_WAIT.
void reset_clients(idle_client *clients, long from, long to) {
    struct linger reset = {.l_onoff = 1, .l_linger = 0};
    for (long index = from; index < to; index++) {
        if (setsockopt(clients[index].fd, SOL_SOCKET, SO_LINGER, &reset, sizeof reset) != 0) die("setsockopt(SO_LINGER)");
        if (close(clients[index].fd) != 0 && errno != EINTR) die("close");
    }
}

// MARK: - churn

typedef struct {
    int fd;
    int state;                 // 0 free, 1 connecting, 2 request sent
    int received;
    long index;
    long long started_ns;
    unsigned char message[MESSAGE];
    unsigned char echo[MESSAGE];
} churn_slot;

static int churn_mode(long total, long concurrency) {
    long rss_before = status_kib("VmRSS:"), fds_before = server_descriptors();
    int epoll = epoll_create1(EPOLL_CLOEXEC);
    if (epoll < 0) die("epoll_create1");
    churn_slot *slots = calloc((size_t)concurrency, sizeof *slots);
    long long *latencies = malloc((size_t)total * sizeof(long long));
    if (!slots || !latencies) die("calloc");
    long started = 0, finished = 0;
    struct epoll_event events[512];
    long long start = now_ns();
    long cpu_from = server_cpu_ms();
    while (finished < total) {
        for (long s = 0; s < concurrency && started < total; s++) {
            churn_slot *slot = &slots[s];
            if (slot->state != 0) continue;
            slot->index = started++;
            slot->started_ns = now_ns();
            slot->fd = open_client(slot->index, port);
            slot->state = 1;
            slot->received = 0;
            watch(epoll, EPOLL_CTL_ADD, slot->fd, EPOLLOUT, (uint32_t)s);
        }
        if (now_ns() - start > 600000000000LL) {
            fprintf(stderr, "echo-many: only %ld of %ld connections done after 600 s\n", finished, total);
            return 1;
        }
        int ready = epoll_wait(epoll, events, 512, 100);
        if (ready < 0 && errno != EINTR) die("epoll_wait");
        for (int e = 0; e < ready; e++) {
            long s = events[e].data.u32;
            churn_slot *slot = &slots[s];
            if (slot->state == 1) {
                check_connected(slot->fd, slot->index);
                fill(slot->message, 0, slot->index);
                send_all(slot->fd, slot->message);
                slot->state = 2;
                watch(epoll, EPOLL_CTL_MOD, slot->fd, EPOLLIN, (uint32_t)s);
                continue;
            }
            ssize_t n = recv(slot->fd, slot->echo + slot->received, (size_t)(MESSAGE - slot->received), 0);
            if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
            if (n <= 0) {
                fprintf(stderr, "echo-many: connection %ld closed or failed before its reply\n", slot->index);
                return 1;
            }
            slot->received += (int)n;
            if (slot->received < MESSAGE) continue;
            if (memcmp(slot->echo, slot->message, MESSAGE) != 0) {
                fprintf(stderr, "echo-many: connection %ld: the echo differs\n", slot->index);
                return 1;
            }
            latencies[finished++] = now_ns() - slot->started_ns;
            close(slot->fd);   // removes it from the epoll set too
            slot->state = 0;
        }
    }
    double elapsed = (now_ns() - start) / 1e9;
    long cpu = server_cpu_ms() - cpu_from;
    long rss_after = status_kib("VmRSS:"), fds_after = server_descriptors();
    long long settle_from = now_ns();
    while (server_pid > 0 && fds_after != fds_before && now_ns() - settle_from < 10000000000LL) {
        usleep(20000);   // the server closes its ends after reading the clients' ends of input
        fds_after = server_descriptors();
        rss_after = status_kib("VmRSS:");
    }
    qsort(latencies, (size_t)total, sizeof(long long), compare_ll);
    printf("connections=%ld concurrency=%ld seconds=%.3f connections_per_second=%.0f p50_us=%.1f p99_us=%.1f "
           "server_cpu_ms=%ld server_rss_kib_before=%ld server_rss_kib_after=%ld server_fds_before=%ld server_fds_after=%ld\n",
           total, concurrency, elapsed, total / elapsed, latencies[total / 2] / 1000.0, latencies[(size_t)(total * 0.99)] / 1000.0,
           cpu, rss_before, rss_after, fds_before, fds_after);
    fflush(stdout);
    return fds_after == fds_before || server_pid <= 0 ? 0 : 1;
}

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: echo-many idle PORT CONNECTIONS ACTIVE SECONDS [--window W] [--sources K] [--server-pid PID]\n"
                        "       echo-many churn PORT TOTAL CONCURRENCY [--sources K] [--server-pid PID]\n"
                        "       echo-many pairs PORT_MANY PID_MANY PORT_FEW PID_FEW CONNECTIONS ACTIVE ROUNDS CHUNK_MS [--sources K]\n");
        return 2;
    }
    struct rlimit limit;   // as many descriptors as the hard limit allows
    if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
        limit.rlim_cur = limit.rlim_max;
        setrlimit(RLIMIT_NOFILE, &limit);
    }
    const char *mode = argv[1];
    if (strcmp(mode, "pairs") == 0) return pairs_mode(argc, argv);
    port = atoi(argv[2]);
    int positional = strcmp(mode, "idle") == 0 ? 6 : 5;
    long window = 256;
    for (int i = positional; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--window") == 0) window = atol(argv[i + 1]);
        else if (strcmp(argv[i], "--sources") == 0) sources = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--server-pid") == 0) server_pid = atol(argv[i + 1]);
        else { fprintf(stderr, "echo-many: unknown option %s\n", argv[i]); return 2; }
    }
    if (port <= 0 || sources < 1 || sources > 250 || window < 1) { fprintf(stderr, "echo-many: bad arguments\n"); return 2; }
    if (strcmp(mode, "idle") == 0 && argc >= 6) {
        long count = atol(argv[3]), active = atol(argv[4]);
        double seconds = atof(argv[5]);
        if (count < 1 || active < 1 || active > count || seconds <= 0) { fprintf(stderr, "echo-many: bad counts\n"); return 2; }
        return idle_mode(count, active, seconds, window);
    }
    if (strcmp(mode, "churn") == 0) {
        long total = atol(argv[3]), concurrency = atol(argv[4]);
        if (total < 1 || concurrency < 1) { fprintf(stderr, "echo-many: bad counts\n"); return 2; }
        return churn_mode(total, concurrency);
    }
    fprintf(stderr, "echo-many: unknown mode %s\n", mode);
    return 2;
}
