// echo-many pairs: what holding many registered connections adds to a server's CPU per request
// (issue 31, item 3: ≤ 1.1× the same server holding 1,000), timed in pairs.
//
//   echo-many pairs PORT_MANY PID_MANY PORT_FEW PID_FEW CONNECTIONS ACTIVE ROUNDS CHUNK_MS [--sources K]
//
// Two fresh instances of one server: the first (PORT_MANY, process PID_MANY) gets CONNECTIONS
// clients, the second (PORT_FEW) gets ACTIVE, each proven served by a probe's echo. Then chunks
// that alternate between the servers, ROUNDS of the second's and one more of the first's: in a
// chunk, ACTIVE clients of one server (spread evenly over its connections) run closed-loop
// 64-byte request/response for CHUNK_MS, then stop and collect their last echoes, so the server
// is idle again before the other's chunk. Each chunk's CPU per request is the server's CPU time (every
// thread, user and kernel: the process's CPU clock, clock_getcpuclockid) over the chunk after
// its first fifth, divided by the requests answered in that span; each chunk of the second
// server gives two ratios many ÷ few, with the chunk before it (many first) and after it.
//
// Separate runs seconds apart read this ratio anywhere from 1.09× to 1.56× on this VM, whose
// vCPU slows by about 40% for seconds at a time; chunks a few milliseconds apart see the same
// machine. Prints one line: each order's median ratio, the worse order's median and quartiles,
// and each side's median CPU per request. Exits 1 when an echo differs or a connection fails.
#include "echo_many.h"


/// One server of the pair: its clients are clients[from..<to]; `step` spreads its active ones.
typedef struct {
    int port;
    clockid_t cpu_clock;
    long from, to, step;
} server_side;

/// The index of `side`'s `a`-th active client: a chunk makes the same `active` clients busy each time.
static long active_client(const server_side *side, long a) { return side->from + a * side->step; }

static long long cpu_ns(clockid_t clock) {
    struct timespec t;
    if (clock_gettime(clock, &t) != 0) die("clock_gettime(the server's CPU clock)");
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/// One chunk on `side`: `active` clients run closed-loop for `chunk_ns`, then each collects its
/// last echo and goes idle. The first fifth of the chunk warms the server up and is not counted
/// (right after the other server's chunk its caches hold the other's state: counted, that cold
/// start made whichever server ran second in a round read up to a third dearer); returns the
/// server's CPU nanoseconds per request answered in the rest of the chunk.
static double run_chunk(int epoll, idle_client *clients, const server_side *side, long active, long long chunk_ns) {
    struct epoll_event events[512];
    long long start = now_ns(), measure_from = start + chunk_ns / 5, end = start + chunk_ns;
    long long cpu_from = -1, cpu_to = -1;
    for (long a = 0; a < active; a++) {
        long index = active_client(side, a);
        idle_client *c = &clients[index];
        c->state = 3;
        c->received = 0;
        watch(epoll, EPOLL_CTL_MOD, c->fd, EPOLLIN, (uint32_t)index);
        fill(c->message, ++c->sequence, index);
        send_all(c->fd, c->message);
    }
    long outstanding = active, requests = 0;
    while (outstanding > 0) {
        long long now = now_ns();
        if (cpu_from < 0 && now >= measure_from) cpu_from = cpu_ns(side->cpu_clock);
        if (cpu_to < 0 && now >= end) cpu_to = cpu_ns(side->cpu_clock);
        if (now - end > 10000000000LL) {
            fprintf(stderr, "echo-many: %ld echoes missing 10 s after a chunk's end\n", outstanding);
            exit(1);
        }
        int ready = epoll_wait(epoll, events, 512, 100);
        if (ready < 0 && errno != EINTR) die("epoll_wait");
        for (int e = 0; e < ready; e++) {
            long index = events[e].data.u32;
            idle_client *c = &clients[index];
            if (!receive_echo(c, index)) continue;
            if (cpu_from >= 0 && cpu_to < 0) requests++;
            if (cpu_to < 0) {
                fill(c->message, ++c->sequence, index);
                send_all(c->fd, c->message);
            } else {
                c->state = 2;
                watch(epoll, EPOLL_CTL_MOD, c->fd, 0, (uint32_t)index);   // idle again; hang-ups still reported
                outstanding--;
            }
        }
    }
    if (requests == 0) {
        fprintf(stderr, "echo-many: no request answered in a chunk's measured part\n");
        exit(1);
    }
    return (double)(cpu_to - cpu_from) / (double)requests;
}

static int compare_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/// The value at `fraction` of the sorted `values` (nearest rank below), as the Swift tools'.
static double quantile(double *values, long count, double fraction) {
    qsort(values, (size_t)count, sizeof *values, compare_double);
    return values[(long)((double)(count - 1) * fraction)];
}

int pairs_mode(int argc, char **argv) {
    if (argc < 10) { fprintf(stderr, "echo-many: pairs needs 8 arguments\n"); return 2; }
    int port_many = atoi(argv[2]), port_few = atoi(argv[4]);
    long pid_many = atol(argv[3]), pid_few = atol(argv[5]);
    long connections = atol(argv[6]), active = atol(argv[7]), rounds = atol(argv[8]);
    long long chunk_ns = atoll(argv[9]) * 1000000LL;
    for (int i = 10; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--sources") == 0) sources = atoi(argv[i + 1]);
        else { fprintf(stderr, "echo-many: unknown option %s\n", argv[i]); return 2; }
    }
    if (port_many <= 0 || port_few <= 0 || pid_many <= 0 || pid_few <= 0 || active < 1 || connections < active
        || rounds < 2 || chunk_ns <= 0 || sources < 1 || sources > 250) {
        fprintf(stderr, "echo-many: bad pairs arguments\n");
        return 2;
    }
    server_side many = {.port = port_many, .from = 0, .to = connections, .step = connections / active};
    server_side few = {.port = port_few, .from = connections, .to = connections + active, .step = 1};
    if (clock_getcpuclockid((pid_t)pid_many, &many.cpu_clock) != 0 || clock_getcpuclockid((pid_t)pid_few, &few.cpu_clock) != 0) {
        fprintf(stderr, "echo-many: no CPU clock for the servers' processes\n");
        return 2;
    }
    int epoll = epoll_create1(EPOLL_CLOEXEC);
    if (epoll < 0) die("epoll_create1");
    idle_client *clients = calloc((size_t)(connections + active), sizeof *clients);
    if (!clients) die("calloc");
    connect_clients(epoll, clients, many.from, many.to, many.port, 256);
    connect_clients(epoll, clients, few.from, few.to, few.port, 256);
    // A message buffer for each client a chunk makes active (those `run_chunk` steps through).
    const server_side *sides[] = {&many, &few};
    for (int s = 0; s < 2; s++) {
        for (long a = 0; a < active; a++) {
            idle_client *c = &clients[active_client(sides[s], a)];
            c->message = malloc(MESSAGE);
            if (!c->message) die("malloc");
        }
    }

    // A warm-up chunk each, then chunks that alternate strictly: many, few, many, few, …, many.
    // Every chunk follows a chunk of the other server, so both sides start from the same kind of
    // state. (Rounds that swap their order, ABBA, put both chunks of a round after the same
    // server: the rounds after the server with few read its ratio 15% above the others.) Each
    // chunk of the server with few pairs with the chunk before it (many first) and the chunk
    // after it (few first).
    run_chunk(epoll, clients, &many, active, chunk_ns);
    run_chunk(epoll, clients, &few, active, chunk_ns);
    double *many_first = malloc(sizeof(double) * (size_t)rounds), *few_first = malloc(sizeof(double) * (size_t)rounds);
    double *per_request_many = malloc(sizeof(double) * (size_t)(rounds + 1)), *per_request_few = malloc(sizeof(double) * (size_t)rounds);
    if (!many_first || !few_first || !per_request_many || !per_request_few) die("malloc");
    long many_first_count = rounds, few_first_count = rounds;
    per_request_many[0] = run_chunk(epoll, clients, &many, active, chunk_ns);
    for (long round = 0; round < rounds; round++) {
        per_request_few[round] = run_chunk(epoll, clients, &few, active, chunk_ns);
        per_request_many[round + 1] = run_chunk(epoll, clients, &many, active, chunk_ns);
        many_first[round] = per_request_many[round] / per_request_few[round];
        few_first[round] = per_request_many[round + 1] / per_request_few[round];
    }
    double median_many_first = quantile(many_first, many_first_count, 0.5);
    double median_few_first = quantile(few_first, few_first_count, 0.5);
    double *worse = median_many_first >= median_few_first ? many_first : few_first;
    long worse_count = median_many_first >= median_few_first ? many_first_count : few_first_count;
    printf("connections=%ld active=%ld rounds=%ld chunk_ms=%lld many_first=%.4f few_first=%.4f worse=%.4f q25=%.4f q75=%.4f "
           "cpu_us_per_request_many=%.3f cpu_us_per_request_few=%.3f\n",
           connections, active, rounds, chunk_ns / 1000000LL, median_many_first, median_few_first,
           quantile(worse, worse_count, 0.5), quantile(worse, worse_count, 0.25), quantile(worse, worse_count, 0.75),
           quantile(per_request_many, rounds + 1, 0.5) / 1000.0, quantile(per_request_few, rounds, 0.5) / 1000.0);
    fflush(stdout);
    reset_clients(clients, 0, connections + active);
    return 0;
}
