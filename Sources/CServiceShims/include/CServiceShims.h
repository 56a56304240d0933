#ifndef CSERVICESHIMS_H
#define CSERVICESHIMS_H

// The socket calls LoopServices needs that Glibc's Swift overlay leaves out (they need
// _GNU_SOURCE or netinet/tcp.h). Each returns what the system call returns (-1 with errno set
// on failure), so Swift checks them through valueOrErrno like any other call.

/// accept4(listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC).
int rlk_accept_nonblocking(int listener);

/// pipe2(ends, O_NONBLOCK | O_CLOEXEC).
int rlk_pipe_nonblocking(int ends[2]);

/// setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, 1).
int rlk_set_tcp_nodelay(int fd);

#endif
