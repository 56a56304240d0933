#define _GNU_SOURCE
#include "CServiceShims.h"
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

int rlk_accept_nonblocking(int listener) {
    return accept4(listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

int rlk_pipe_nonblocking(int ends[2]) {
    return pipe2(ends, O_NONBLOCK | O_CLOEXEC);
}

int rlk_set_tcp_nodelay(int fd) {
    int on = 1;
    return setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
}
