// What the modes of echo-many share (main.c: idle and churn; pairs.c: pairs): the clock, errors,
// client sockets and the connect phase.
#ifndef ECHO_MANY_H
#define ECHO_MANY_H

#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { MESSAGE = 64 };

/// Client sockets are bound to 127.0.0.2 … 127.0.0.(1 + sources), so the ephemeral ports of
/// one address do not run out (--sources).
extern int sources;

/// One client of the idle, active or probing kind.
typedef struct {
    int fd;
    int state;                 // 0 connecting, 1 probe sent, 2 idle, 3 active
    int received;
    unsigned long sequence;
    long long started_ns;
    unsigned char *message;    // active ones only
    unsigned char echo[MESSAGE];
} idle_client;

long long now_ns(void);
void die(const char *what);
int compare_ll(const void *a, const void *b);
int open_client(long index, int port);
void watch(int epoll, int operation, int fd, uint32_t events, uint32_t index);
void check_connected(int fd, long index);
void fill(unsigned char *message, unsigned long sequence, long index);
void send_all(int fd, const unsigned char *message);
void connect_clients(int epoll, idle_client *clients, long from, long to, int port, long window);
void reset_clients(idle_client *clients, long from, long to);
int receive_echo(idle_client *c, long index);

/// `echo-many pairs …` (pairs.c); argv as main's.
int pairs_mode(int argc, char **argv);

#endif
