#ifndef CECHOSHIMS_H
#define CECHOSHIMS_H

// The calls the echo service needs that Glibc's Swift overlay leaves out (they need _GNU_SOURCE
// or netinet/tcp.h). Each returns what the system call returns (-1 with errno set on failure),
// so Swift checks them like any other call.

/// accept4(listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC).
int echo_accept_nonblocking(int listener);

/// pipe2(ends, O_NONBLOCK | O_CLOEXEC).
int echo_pipe_nonblocking(int ends[2]);

/// setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, 1).
int echo_set_tcp_nodelay(int fd);

/// setsockopt(fd, SOL_SOCKET, SO_LINGER, {1, 0}): the next close resets the connection
/// instead of sending a FIN (an abortive close, for a connection the service gives up on).
int echo_set_abortive_close(int fd);

/// The calling thread's kernel id (gettid).
long echo_gettid(void);

/// Names the calling thread (at most 15 bytes are kept); 0 or an error number.
int echo_set_thread_name(const char *name);

#endif
