#define _GNU_SOURCE
#include "CEchoShims.h"
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

int echo_accept_nonblocking(int listener) {
    return accept4(listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

int echo_pipe_nonblocking(int ends[2]) {
    return pipe2(ends, O_NONBLOCK | O_CLOEXEC);
}

int echo_set_tcp_nodelay(int fd) {
    int on = 1;
    return setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
}

int echo_set_abortive_close(int fd) {
    struct linger now = {.l_onoff = 1, .l_linger = 0};
    return setsockopt(fd, SOL_SOCKET, SO_LINGER, &now, sizeof now);
}

long echo_gettid(void) {
    return syscall(SYS_gettid);
}

int echo_set_thread_name(const char *name) {
    char shortened[16] = {0};
    for (int i = 0; i < 15 && name[i]; i++) shortened[i] = name[i];
    return pthread_setname_np(pthread_self(), shortened);
}
