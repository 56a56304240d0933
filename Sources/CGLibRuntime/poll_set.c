#include "CGLibRuntime.h"

#include <errno.h>
#include <sys/epoll.h>

int rlk_glib_epoll_create(void) {
    return epoll_create1(EPOLL_CLOEXEC);
}

int rlk_glib_epoll_control(int epfd, rlk_glib_epoll_op op, int fd, unsigned int events) {
    struct epoll_event event = {
        .events = events & (EPOLLIN | EPOLLPRI | EPOLLOUT),
        .data.fd = fd,
    };
    switch (op) {
    case RLK_GLIB_EPOLL_ADD: return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &event);
    case RLK_GLIB_EPOLL_MODIFY: return epoll_ctl(epfd, EPOLL_CTL_MOD, fd, &event);
    case RLK_GLIB_EPOLL_REMOVE: return epoll_ctl(epfd, EPOLL_CTL_DEL, fd, &event);
    }
    errno = EINVAL;
    return -1;
}

