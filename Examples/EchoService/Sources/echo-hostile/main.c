// echo-hostile: a hostile-client suite for any TCP echo server, written apart from the service
// it tests (it shares no code with RunLoopKit or the EchoService example).
//
//   echo-hostile [--report-only] [--only NAME] -- SERVER_COMMAND [ARGUMENT ...]
//
// It starts SERVER_COMMAND (which must print "listening on 127.0.0.1:PORT" on its standard
// output), attacks it over loopback, and checks each case against the contract of an echo
// service that loses nothing: every byte echoed byte-exact, a peer that read everything sees an
// end of file (never a reset), and afterwards the server's descriptors and connections are back
// to where they started and its resident set is bounded. A fresh server is started for the
// cases that signal it or limit its descriptors.
//
// Each case prints one line "RESULT<TAB>name<TAB>expected<TAB>observed<TAB>pass|FAIL" (for
// scripts that put servers side by side) and a summary. Exit status 0 when every case passed
// (always 0 with --report-only, for a reference server), 1 otherwise, 2 on bad usage.
// Every wait has a deadline; the whole suite is bounded (about a minute at most).
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

// MARK: - time and reporting

static int64_t now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static int failures = 0, cases_run = 0, report_only = 0;
static const char *only = NULL;

static void result(const char *name, const char *expected, int pass, const char *format, ...) {
    char observed[1024];
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(observed, sizeof observed, format, arguments);
    va_end(arguments);
    printf("RESULT\t%s\t%s\t%s\t%s\n", name, expected, observed, pass ? "pass" : "FAIL");
    fflush(stdout);
    cases_run++;
    if (!pass) failures++;
}

static int wanted(const char *name) { return only == NULL || strstr(name, only) != NULL; }

// MARK: - the byte streams: every client sends its own pseudo-random stream (all 256 byte
// values, NULs included), so a lost, doubled, moved or misrouted byte shows.

static uint64_t mix(uint64_t z) {
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint8_t stream_byte(uint64_t seed, uint64_t offset) {
    return (uint8_t)(mix(seed * 0x100000001B3ull ^ (offset >> 3)) >> ((offset & 7) * 8));
}

static void stream_fill(uint64_t seed, uint64_t offset, uint8_t *buffer, size_t count) {
    for (size_t i = 0; i < count; i++) buffer[i] = stream_byte(seed, offset + i);
}

// MARK: - the server under test

typedef struct {
    pid_t pid;
    int output;          // its stdout and stderr
    int port;
    char log[16384];     // the last of what it printed
    size_t log_length;
} server_t;

static char **server_argv;

static void server_read_output(server_t *s, int timeout_ms) {
    char chunk[4096];
    int64_t deadline = now_ms() + timeout_ms;
    for (;;) {
        struct pollfd p = {.fd = s->output, .events = POLLIN};
        int64_t left = deadline - now_ms();
        int ready = poll(&p, 1, left > 0 ? (int)left : 0);
        if (ready < 0 && errno == EINTR) continue;
        if (ready <= 0) return;
        ssize_t n = read(s->output, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;
        if (s->log_length + (size_t)n >= sizeof s->log) {   // keep the end
            size_t drop = s->log_length + (size_t)n - sizeof s->log + 1;
            if (drop > s->log_length) drop = s->log_length;
            memmove(s->log, s->log + drop, s->log_length - drop);
            s->log_length -= drop;
        }
        size_t take = (size_t)n < sizeof s->log - 1 ? (size_t)n : sizeof s->log - 1;
        memcpy(s->log + s->log_length, chunk, take);
        s->log_length += take;
        s->log[s->log_length] = 0;
        if (timeout_ms == 0) deadline = now_ms();
    }
}

/// Starts the server (with at most `descriptors` open files when > 0); 0 once it said its port.
static int server_start(server_t *s, int descriptors) {
    memset(s, 0, sizeof *s);
    int ends[2];
    if (pipe2(ends, O_CLOEXEC) != 0) return -1;
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        dup2(ends[1], 1);
        dup2(ends[1], 2);
        if (descriptors > 0) {
            struct rlimit limit = {.rlim_cur = (rlim_t)descriptors, .rlim_max = (rlim_t)descriptors};
            setrlimit(RLIMIT_NOFILE, &limit);
        }
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        execvp(server_argv[0], server_argv);
        fprintf(stderr, "echo-hostile: cannot run %s: %s\n", server_argv[0], strerror(errno));
        _exit(127);
    }
    close(ends[1]);
    s->pid = pid;
    s->output = ends[0];
    int64_t deadline = now_ms() + 60000;
    while (now_ms() < deadline) {
        server_read_output(s, 200);
        char *line = strstr(s->log, "listening on 127.0.0.1:");
        if (line && strchr(line, '\n')) {
            s->port = atoi(line + strlen("listening on 127.0.0.1:"));
            return s->port > 0 ? 0 : -1;
        }
        int status;
        if (waitpid(pid, &status, WNOHANG) == pid) {
            s->pid = 0;
            return -1;
        }
    }
    return -1;
}

/// Waits for the server to exit; its exit status (128 + signal when killed), or -1 at the timeout.
static int server_wait(server_t *s, int timeout_ms) {
    if (s->pid == 0) return -1;
    int64_t deadline = now_ms() + timeout_ms;
    for (;;) {
        int status;
        pid_t done = waitpid(s->pid, &status, WNOHANG);
        if (done == s->pid) {
            s->pid = 0;
            server_read_output(s, 200);
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        }
        if (now_ms() >= deadline) return -1;
        server_read_output(s, 20);
    }
}

static void server_stop(server_t *s) {
    if (s->pid > 0) {
        kill(s->pid, SIGKILL);
        int status;
        while (waitpid(s->pid, &status, 0) < 0 && errno == EINTR) {}
        s->pid = 0;
    }
    if (s->output > 0) close(s->output);
    s->output = -1;
}

// MARK: - what /proc says about the server

static int descriptors_of(pid_t pid) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd", (int)pid);
    DIR *directory = opendir(path);
    if (!directory) return -1;
    int count = 0;
    struct dirent *entry;
    while ((entry = readdir(directory))) if (entry->d_name[0] != '.') count++;
    closedir(directory);
    return count;
}

static long resident_kib_of(pid_t pid) {
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *file = fopen(path, "r");
    if (!file) return -1;
    long kib = -1;
    while (fgets(line, sizeof line, file)) if (strncmp(line, "VmRSS:", 6) == 0) kib = atol(line + 6);
    fclose(file);
    return kib;
}

/// CPU time (user + system) the process used, in milliseconds.
static long cpu_ms_of(pid_t pid) {
    char path[64], text[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *file = fopen(path, "r");
    if (!file) return -1;
    size_t n = fread(text, 1, sizeof text - 1, file);
    fclose(file);
    text[n] = 0;
    char *field = strrchr(text, ')');   // the command name may hold spaces
    if (!field) return -1;
    unsigned long user = 0, system = 0;
    // after ")": state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime
    if (sscanf(field + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &user, &system) != 2) return -1;
    return (long)((user + system) * 1000 / (unsigned long)sysconf(_SC_CLK_TCK));
}

/// Sockets a process owns (inode not 0) whose local port is `port`, except the listener.
static int server_connections(int port) {
    FILE *file = fopen("/proc/net/tcp", "r");
    if (!file) return -1;
    char line[512];
    int count = 0;
    if (!fgets(line, sizeof line, file)) { fclose(file); return -1; }
    while (fgets(line, sizeof line, file)) {
        unsigned local_port = 0, state = 0;
        unsigned long inode = 0;
        if (sscanf(line, "%*d: %*8x:%x %*8x:%*x %x %*x:%*x %*x:%*x %*x %*u %*u %lu", &local_port, &state, &inode) != 3) continue;
        if ((int)local_port == port && state != 0x0A && inode != 0) count++;
    }
    fclose(file);
    return count;
}

typedef struct { int descriptors; long resident_kib; } baseline_t;

static baseline_t baseline_of(server_t *s) {
    baseline_t b = {descriptors_of(s->pid), resident_kib_of(s->pid)};
    return b;
}

/// Waits (up to `timeout_ms`) for the server's descriptors to come back to the baseline and its
/// connections to 0; writes what it saw. 1 when both came back.
static int back_to_baseline(server_t *s, baseline_t b, int timeout_ms, char *seen, size_t size) {
    int64_t deadline = now_ms() + timeout_ms;
    int descriptors, connections;
    for (;;) {
        server_read_output(s, 0);
        descriptors = descriptors_of(s->pid);
        connections = server_connections(s->port);
        if ((descriptors == b.descriptors && connections == 0) || now_ms() >= deadline) break;
        poll(NULL, 0, 20);   // a bounded wait for the server's deferred closes
    }
    snprintf(seen, size, "fds %d (baseline %d), connections %d", descriptors, b.descriptors, connections);
    return descriptors == b.descriptors && connections == 0;
}

// MARK: - clients

enum end { OPEN, END_OF_FILE, RESET, FAILED };
static const char *end_name[] = {"open", "EOF", "reset", "error"};

typedef struct {
    // the plan
    uint64_t send_total;               // bytes to send
    size_t chunk;                      // bytes per send
    int shut_when_sent;                // shutdown(SHUT_WR) once everything is sent
    uint64_t shut_after_received;      // ... and not before this many echo bytes came back
    int64_t read_after_ms;             // reading starts this long after the case starts
    int read_after_shut;               // reading starts once the writing side is shut down
    uint64_t read_per_ms;              // a slow reader: at most this many bytes per ms (0: no limit)
    int never_read;
    int receive_buffer;                // SO_RCVBUF before connecting (0: the kernel's)
    int reset_when_sent;               // close with SO_LINGER 0 once everything is sent
    // what happened
    int fd;
    uint64_t seed, sent, received;
    int64_t mismatch;                  // the first echo byte that differs, or -1
    int64_t read_started_ms;
    enum end end;
    int error;                         // errno of a failed send or recv
    int reset_seen;                    // a send failed with ECONNRESET before the reading ended:
                                       // the kernel reports a reset once, so a later recv reads
                                       // what is left and then 0, which is not an end of file
    int shut, closed;
} client_t;

static int connect_client(client_t *c, int port, uint64_t seed) {
    c->seed = seed;
    c->mismatch = -1;
    c->end = OPEN;
    c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (c->fd < 0) return -1;
    if (c->receive_buffer > 0) setsockopt(c->fd, SOL_SOCKET, SO_RCVBUF, &c->receive_buffer, sizeof c->receive_buffer);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr.s_addr = htonl(0x7f000001)};
    if (connect(c->fd, (struct sockaddr *)&address, sizeof address) != 0 && errno != EINPROGRESS) return -1;
    return 0;
}

static void close_client(client_t *c) {
    if (c->fd >= 0) close(c->fd);
    c->fd = -1;
    c->closed = 1;
}

static int client_done(const client_t *c) {
    if (c->closed) return 1;
    if (c->never_read) return c->sent == c->send_total || c->error != 0;
    return c->end != OPEN;
}

/// Reads what the pacing allows; verifies every byte against the client's stream.
static void client_read(client_t *c, int64_t now) {
    static uint8_t buffer[256 * 1024];
    size_t room = sizeof buffer;
    if (c->read_per_ms > 0) {
        int64_t allowed = (now - c->read_started_ms + 1) * (int64_t)c->read_per_ms - (int64_t)c->received;
        if (allowed <= 0) return;
        if ((size_t)allowed < room) room = (size_t)allowed;
    }
    ssize_t n = recv(c->fd, buffer, room, MSG_DONTWAIT);
    if (n == 0) {
        c->end = c->reset_seen ? RESET : END_OF_FILE;
        if (!c->shut) { shutdown(c->fd, SHUT_WR); c->shut = 1; }   // a polite peer closes its side too
        return;
    }
    if (n < 0) {
        if (errno == EAGAIN || errno == EINTR) return;
        c->error = errno;
        c->end = errno == ECONNRESET ? RESET : FAILED;
        return;
    }
    if (c->mismatch < 0) {
        for (ssize_t i = 0; i < n; i++) {
            if (buffer[i] != stream_byte(c->seed, c->received + (uint64_t)i)) { c->mismatch = (int64_t)(c->received + (uint64_t)i); break; }
        }
    }
    c->received += (uint64_t)n;
}

static void client_write(client_t *c) {
    static uint8_t buffer[256 * 1024];
    size_t count = c->chunk < sizeof buffer ? c->chunk : sizeof buffer;
    if (c->send_total - c->sent < count) count = (size_t)(c->send_total - c->sent);
    stream_fill(c->seed, c->sent, buffer, count);
    ssize_t n = send(c->fd, buffer, count, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
        if (errno == EAGAIN || errno == EINTR) return;
        c->error = errno;
        if (errno == ECONNRESET && c->end == OPEN) c->reset_seen = 1;
        return;
    }
    c->sent += (uint64_t)n;
    if (c->sent == c->send_total && c->reset_when_sent) {
        struct linger now = {.l_onoff = 1, .l_linger = 0};
        setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &now, sizeof now);
        close_client(c);
    }
}

static int wants_write(const client_t *c) {
    return !c->closed && !c->shut && c->error == 0 && c->end == OPEN && c->sent < c->send_total;
}

static int may_read(client_t *c, int64_t now, int64_t start) {
    if (c->closed || c->never_read || c->end != OPEN) return 0;
    if (now < start + c->read_after_ms) return 0;
    if (c->read_after_shut && !c->shut) return 0;
    if (c->read_started_ms == 0) c->read_started_ms = now;
    return 1;
}

/// Drives the clients until each is done (see client_done) or `until_ms`; 1 when all are done.
static int drive(client_t *clients, int count, int64_t start, int64_t until_ms) {
    struct pollfd *polls = calloc((size_t)count, sizeof *polls);
    int all_done = 0;
    for (;;) {
        int64_t now = now_ms();
        int active = 0;
        for (int i = 0; i < count; i++) {
            client_t *c = &clients[i];
            if (!c->shut && !c->closed && c->end == OPEN && c->error == 0 && c->shut_when_sent && c->sent == c->send_total
                && c->received >= c->shut_after_received) {
                shutdown(c->fd, SHUT_WR);
                c->shut = 1;
            }
            polls[i].fd = client_done(c) ? -1 : c->fd;
            polls[i].events = 0;
            polls[i].revents = 0;
            if (polls[i].fd < 0) continue;
            active++;
            if (wants_write(c)) polls[i].events |= POLLOUT;
            if (may_read(c, now, start)) polls[i].events |= POLLIN;
        }
        if (active == 0) { all_done = 1; break; }
        if (now >= until_ms) break;
        int64_t left = until_ms - now;
        int ready = poll(polls, (nfds_t)count, left < 2 ? (int)left : 2);   // 2 ms: the slow readers' pace
        if (ready < 0 && errno != EINTR) break;
        now = now_ms();
        for (int i = 0; i < count; i++) {
            client_t *c = &clients[i];
            if (polls[i].fd < 0) continue;
            if ((polls[i].events & POLLIN) && (polls[i].revents & (POLLIN | POLLHUP | POLLERR))) client_read(c, now);
            else if ((polls[i].events & POLLIN) && c->read_per_ms > 0) client_read(c, now);   // paced: data may wait
            if (!c->closed && (polls[i].revents & POLLOUT) && wants_write(c)) client_write(c);
        }
    }
    free(polls);
    return all_done;
}

/// After a server is gone or done: reads what is left on each open client (never-readers too)
/// until its end, within `timeout_ms`.
static void drain(client_t *clients, int count, int timeout_ms) {
    int64_t deadline = now_ms() + timeout_ms;
    for (int i = 0; i < count; i++) {
        client_t *c = &clients[i];
        c->never_read = 0;
        c->read_per_ms = 0;
        c->read_after_ms = 0;
        c->read_after_shut = 0;
        while (!c->closed && c->end == OPEN && now_ms() < deadline) {
            struct pollfd p = {.fd = c->fd, .events = POLLIN};
            int64_t left = deadline - now_ms();
            if (poll(&p, 1, left > 0 ? (int)left : 0) <= 0) break;
            client_read(c, now_ms());
        }
    }
}

static void close_all(client_t *clients, int count) {
    for (int i = 0; i < count; i++) if (!clients[i].closed) close_client(&clients[i]);
}

/// One line about a client: "4000000 of 4000000 byte-exact, EOF".
static void describe(const client_t *c, char *text, size_t size) {
    if (c->mismatch >= 0) snprintf(text, size, "byte %lld differs", (long long)c->mismatch);
    else snprintf(text, size, "%llu of %llu sent came back byte-exact, then %s", (unsigned long long)c->received,
                  (unsigned long long)c->sent, end_name[c->end]);
}

// MARK: - the cases

/// One client that must get every byte back, then an end of file.
static void exact_case(server_t *s, const char *name, const char *what, client_t plan, uint64_t seed, int timeout_ms) {
    if (!wanted(name)) return;
    client_t c = plan;
    char text[256];
    if (connect_client(&c, s->port, seed) != 0) {
        result(name, "byte-exact, then EOF", 0, "%s: connect failed: %s", what, strerror(errno));
        return;
    }
    int64_t start = now_ms();
    drive(&c, 1, start, start + timeout_ms);
    describe(&c, text, sizeof text);
    int pass = c.mismatch < 0 && c.received == c.send_total && c.sent == c.send_total && c.end == END_OF_FILE;
    if (!pass && c.mismatch < 0 && c.end == END_OF_FILE && c.received < c.sent) {
        result(name, "byte-exact, then EOF", 0, "%s: LOST %llu bytes: %s", what, (unsigned long long)(c.sent - c.received), text);
    } else {
        result(name, "byte-exact, then EOF", pass, "%s: %s%s", what, text, c.end == OPEN ? " (still open at the deadline)" : "");
    }
    close_client(&c);
}

static void group_connections(void) {
    const char *names[] = {"half-close", "garbage", "64 MiB", "reset mid-request", "end state"};
    int any = 0;
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) any |= wanted(names[i]);
    if (!any) return;
    server_t s;
    if (server_start(&s, 0) != 0) {
        result("start", "the server starts and prints its port", 0, "it did not: %s", s.log);
        server_stop(&s);
        return;
    }
    baseline_t b = baseline_of(&s);

    client_t plan = {0};
    // The client: 4,000,000 bytes, its end of sending, 500 ms before it reads, through a
    // 16 KB receive buffer.
    plan = (client_t){.send_total = 4000000, .chunk = 65536, .shut_when_sent = 1, .read_after_ms = 500, .receive_buffer = 16384};
    exact_case(&s, "half-close, slow start", "4,000,000 B, SHUT_WR, reads after 500 ms, 16 KB receive buffer", plan, 1, 30000);
    plan = (client_t){.send_total = 512 * 1024, .chunk = 65536, .shut_when_sent = 1, .read_after_shut = 1};
    exact_case(&s, "half-close before the replies", "512 KiB, SHUT_WR, then reads", plan, 2, 30000);
    plan = (client_t){.send_total = 2 * 1024 * 1024, .chunk = 65536, .shut_when_sent = 1, .shut_after_received = 1024 * 1024};
    exact_case(&s, "half-close during the replies", "2 MiB, SHUT_WR once 1 MiB came back", plan, 3, 30000);
    plan = (client_t){.send_total = 64 * 1024, .chunk = 65536, .shut_when_sent = 1, .shut_after_received = 64 * 1024};
    exact_case(&s, "half-close after the replies", "64 KiB, every reply read, then SHUT_WR", plan, 4, 30000);
    plan = (client_t){.send_total = 4 * 1024 * 1024, .chunk = 65536, .shut_when_sent = 1, .receive_buffer = 16384, .read_per_ms = 4096};
    exact_case(&s, "half-close, slow reader", "4 MiB, SHUT_WR, reads 4 KiB/ms through a 16 KB buffer", plan, 5, 30000);
    plan = (client_t){.send_total = 1024 * 1024, .chunk = 4093, .shut_when_sent = 1};
    exact_case(&s, "garbage", "1 MiB of random bytes (NULs, no newlines) in 4093-byte writes", plan, 6, 30000);
    plan = (client_t){.send_total = 64 * 1024 * 1024, .chunk = 256 * 1024, .shut_when_sent = 1};
    exact_case(&s, "64 MiB", "64 MiB written while reading", plan, 7, 60000);

    // Resets mid-request: 200 clients each send 32 KiB and reset without reading.
    if (wanted("reset mid-request")) {
        enum { RESETS = 200, BATCH = 50 };
        client_t clients[BATCH];
        int connected = 0;
        for (int first = 0; first < RESETS; first += BATCH) {
            for (int i = 0; i < BATCH; i++) {
                clients[i] = (client_t){.send_total = 32 * 1024, .chunk = 32 * 1024, .never_read = 1, .reset_when_sent = 1};
                if (connect_client(&clients[i], s.port, 1000 + (uint64_t)(first + i)) == 0) connected++;
            }
            int64_t start = now_ms();
            drive(clients, BATCH, start, start + 10000);
            close_all(clients, BATCH);
        }
        char seen[256];
        int back = back_to_baseline(&s, b, 5000, seen, sizeof seen);
        result("reset mid-request", "fds and connections back to baseline", back && connected == RESETS,
               "%d clients reset mid-request; %s", connected, seen);
    }

    char seen[256];
    int back = back_to_baseline(&s, b, 5000, seen, sizeof seen);
    long resident = resident_kib_of(s.pid);
    long growth = resident - b.resident_kib;
    // The bound: a 64 MiB stream went through; the server may keep 32 MiB of it (buffers,
    // allocator caches), not the stream.
    if (wanted("end state")) {
        result("end state", "fds and connections back to baseline, RSS grew < 32 MiB", back && growth < 32 * 1024,
               "%s; RSS %ld -> %ld KiB", seen, b.resident_kib, resident);
    }
    kill(s.pid, SIGTERM);
    server_wait(&s, 15000);
    server_stop(&s);
}

/// Clients busy when the server gets `signal` (twice when `second`): each must see an end of
/// file after a byte-exact prefix of what it sent — or, for clients that never read, a reset
/// (the documented refusal: a cut-off echo must not look complete). Then the server exits 0.
static void signal_case(const char *name, int signal_number, int readers, uint64_t read_per_ms, int never_readers, int second) {
    if (!wanted(name)) return;
    server_t s;
    if (server_start(&s, 0) != 0) {
        result(name, "the server starts", 0, "it did not: %s", s.log);
        server_stop(&s);
        return;
    }
    enum { MAXIMUM = 64 };
    client_t clients[MAXIMUM];
    int count = readers + never_readers;
    for (int i = 0; i < count; i++) {
        if (i < readers) {
            clients[i] = (client_t){.send_total = 6 * 1024 * 1024, .chunk = 16384, .read_per_ms = read_per_ms,
                                    .receive_buffer = read_per_ms ? 16384 : 0};
        } else {
            clients[i] = (client_t){.send_total = 6 * 1024 * 1024, .chunk = 65536, .never_read = 1, .receive_buffer = 16384};
        }
        connect_client(&clients[i], s.port, 2000 + (uint64_t)i);
    }
    int64_t start = now_ms();
    drive(clients, count, start, start + 300);   // traffic in flight
    int64_t signalled = now_ms();
    kill(s.pid, signal_number);
    int64_t second_sent = 0;
    if (second) {
        // 100 ms apart, so the kernel cannot merge the two into one pending signal.
        int64_t until = now_ms() + 100;
        drive(clients, count, start, until);
        while (now_ms() < until) poll(NULL, 0, (int)(until - now_ms()));
        kill(s.pid, signal_number);
        second_sent = now_ms();
    }
    // Until the server has exited and every reader has its end (20 s at most; the service's
    // shutdown grace is 5 s by default).
    int status = -1;
    int64_t exited = 0, deadline = now_ms() + 20000;
    while (now_ms() < deadline) {
        drive(clients, count, start, now_ms() + 50);   // never-readers keep writing as long as they can
        int readers_done = 1;
        for (int i = 0; i < readers; i++) readers_done &= client_done(&clients[i]);
        if (status < 0 && (status = server_wait(&s, 0)) >= 0) exited = now_ms();
        if (status >= 0 && readers_done) break;
        server_read_output(&s, 0);
    }
    if (status < 0) exited = now_ms();
    drain(clients, count, 2000);

    // Each client by how its reading ended: an end of file after a byte-exact prefix is a clean
    // end (the service stops echoing at a shutdown and discards what comes after); a reset is
    // the refusal of a service that gave up on replies. A reader must not be reset.
    int clean = 0, reset = 0, other = 0, differs = 0, readers_reset = 0;
    uint64_t received = 0, sent = 0;
    for (int i = 0; i < count; i++) {
        client_t *c = &clients[i];
        received += c->received;
        sent += c->sent;
        if (c->mismatch >= 0) differs++;
        if (c->end == END_OF_FILE) clean++;
        else if (c->end == RESET) reset++;
        else other++;
        if (i < readers && c->end != END_OF_FILE) readers_reset++;
    }
    close_all(clients, count);
    char expected[256];
    if (never_readers && !readers) snprintf(expected, sizeof expected, "never-readers: a byte-exact prefix, then EOF, or a reset (refused, counted); exit 0");
    else if (never_readers) snprintf(expected, sizeof expected, "readers: a byte-exact prefix, then EOF; never-readers: that or a reset; exit 0");
    else snprintf(expected, sizeof expected, "each reader: a byte-exact prefix, then EOF; exit 0");
    // A second signal forces the shutdown: the server is gone within a second of it.
    int prompt = !second || (status >= 0 && exited - second_sent <= 1000);
    if (second) snprintf(expected + strlen(expected), sizeof expected - strlen(expected), " within 1 s of the second signal");
    int pass = differs == 0 && readers_reset == 0 && other == 0 && status == 0 && prompt;
    result(name, expected, pass, "%d clients: %d EOF, %d reset, %d neither, %d differ; %llu of %llu bytes came back; exit %d %lld ms after the signal%s",
           count, clean, reset, other, differs, (unsigned long long)received, (unsigned long long)sent, status,
           (long long)(exited - signalled), status < 0 ? " (did not exit)" : "");
    if (!pass && !report_only) printf("%s: the server printed:\n%s\n", name, s.log);   // its counters say why
    server_stop(&s);
}

/// More clients than the server may open descriptors: each is served once others leave; the
/// server must not spin while it cannot accept, and ends with no descriptor left over.
static void descriptor_limit_case(void) {
    const char *name = "more connections than the fd limit";
    if (!wanted(name)) return;
    enum { LIMIT = 64, CLIENTS = 200 };
    server_t s;
    if (server_start(&s, LIMIT) != 0) {
        result(name, "the server starts", 0, "it did not: %s", s.log);
        server_stop(&s);
        return;
    }
    baseline_t b = baseline_of(&s);
    client_t clients[CLIENTS];
    for (int i = 0; i < CLIENTS; i++) {
        clients[i] = (client_t){.send_total = 1000, .chunk = 1000, .shut_when_sent = 1, .shut_after_received = 1000};
        connect_client(&clients[i], s.port, 3000 + (uint64_t)i);
    }
    long cpu_before = cpu_ms_of(s.pid);
    int64_t start = now_ms();
    // Clients that got their echo and the end of file close at once, making room for others.
    int64_t deadline = start + 30000;
    while (now_ms() < deadline) {
        if (drive(clients, CLIENTS, start, now_ms() + 20)) break;
        for (int i = 0; i < CLIENTS; i++) if (!clients[i].closed && clients[i].end != OPEN) close_client(&clients[i]);
    }
    int64_t elapsed = now_ms() - start;
    long cpu = cpu_ms_of(s.pid) - cpu_before;
    int exact = 0;
    for (int i = 0; i < CLIENTS; i++) {
        if (clients[i].mismatch < 0 && clients[i].received == 1000 && clients[i].end == END_OF_FILE) exact++;
    }
    close_all(clients, CLIENTS);
    char seen[256];
    int back = back_to_baseline(&s, b, 5000, seen, sizeof seen);
    int pass = exact == CLIENTS && back && cpu * 2 <= elapsed + 100;
    result(name, "every client served byte-exact; no spinning (CPU <= half the time); fds back", pass,
           "limit %d: %d of %d byte-exact + EOF in %lld ms, server CPU %ld ms; %s", LIMIT, exact, CLIENTS,
           (long long)elapsed, cpu, seen);
    kill(s.pid, SIGTERM);
    server_wait(&s, 15000);
    server_stop(&s);
}

int main(int argc, char **argv) {
    int i = 1;
    for (; i < argc; i++) {
        if (strcmp(argv[i], "--report-only") == 0) report_only = 1;
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) only = argv[++i];
        else if (strcmp(argv[i], "--") == 0) { i++; break; }
        else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            printf("usage: echo-hostile [--report-only] [--only NAME] -- SERVER_COMMAND [ARGUMENT ...]\n");
            return 0;
        } else break;
    }
    if (i >= argc) {
        fprintf(stderr, "usage: echo-hostile [--report-only] [--only NAME] -- SERVER_COMMAND [ARGUMENT ...]\n");
        return 2;
    }
    server_argv = argv + i;
    signal(SIGPIPE, SIG_IGN);
    struct rlimit limit;   // room for the clients of the descriptor case
    if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
        limit.rlim_cur = limit.rlim_max;
        setrlimit(RLIMIT_NOFILE, &limit);
    }
    int64_t start = now_ms();

    group_connections();
    signal_case("SIGTERM, fast readers", SIGTERM, 16, 0, 0, 0);
    signal_case("SIGTERM, slow readers", SIGTERM, 8, 2048, 0, 0);
    signal_case("SIGTERM, never-readers", SIGTERM, 0, 0, 8, 0);
    signal_case("SIGINT, slow readers and never-readers", SIGINT, 6, 2048, 4, 0);
    signal_case("second SIGTERM, never-readers", SIGTERM, 0, 0, 8, 1);
    descriptor_limit_case();

    printf("echo-hostile: %d cases, %d failed, %lld ms (%s)\n", cases_run, failures, (long long)(now_ms() - start), server_argv[0]);
    return report_only ? 0 : (failures ? 1 : 0);
}
