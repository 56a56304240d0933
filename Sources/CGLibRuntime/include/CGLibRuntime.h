#ifndef CGLIBRUNTIME_H
#define CGLIBRUNTIME_H

// GLib, reached at run time. The package must build and test on a machine that has the GLib
// library (libglib-2.0.so.0) but not its headers, so this header declares the few GLib types the
// bridge uses itself — opaque structs, the two public structs whose layout the bridge needs, and
// prototypes as function pointers — and rlk_glib_load() fills them with dlopen/dlsym.
// GLib's types are ABI-stable across 2.x; the GTK example, which has the real headers, checks
// every size and offset declared here against them.

#include <stddef.h>
#include <stdint.h>

// Pointers are non-null unless marked _Nullable.
#pragma clang assume_nonnull begin

/// GLib's `GMainContext`, `GMainLoop` and `GSource`, opaque.
typedef struct rlk_GMainContext rlk_GMainContext;
typedef struct rlk_GMainLoop rlk_GMainLoop;
typedef struct rlk_GSource rlk_GSource;

/// GLib's `GPollFD` on Unix: the layout of `struct pollfd`.
typedef struct rlk_GPollFD {
    int fd;
    unsigned short events;
    unsigned short revents;
} rlk_GPollFD;

/// GLib's `GIOCondition` bits on Unix (the poll(2) values).
enum {
    RLK_G_IO_IN = 1,
    RLK_G_IO_PRI = 2,
    RLK_G_IO_OUT = 4,
    RLK_G_IO_ERR = 8,
    RLK_G_IO_HUP = 16,
    RLK_G_IO_NVAL = 32,
};

/// GLib's priorities (`G_PRIORITY_*`): lower runs first.
enum {
    RLK_G_PRIORITY_HIGH = -100,
    RLK_G_PRIORITY_DEFAULT = 0,
    RLK_G_PRIORITY_HIGH_IDLE = 100,
    RLK_G_PRIORITY_DEFAULT_IDLE = 200,
};

typedef int (*rlk_GPollFunc)(rlk_GPollFD *fds, unsigned int nfds, int timeout);
typedef int (*rlk_GSourceFunc)(void *_Nullable user_data);
typedef void (*rlk_GDestroyNotify)(void *_Nullable data);
/// The callback type of a g_unix_fd_source_new source (given to g_source_set_callback cast to
/// rlk_GSourceFunc, as in C).
typedef int (*rlk_GUnixFDSourceFunc)(int fd, unsigned int condition, void *_Nullable user_data);

/// GLib's `GSourceFuncs`: the callbacks of a source type.
typedef struct rlk_GSourceFuncs {
    int (*_Nullable prepare)(rlk_GSource *source, int *timeout);
    int (*_Nullable check)(rlk_GSource *source);
    int (*_Nullable dispatch)(rlk_GSource *source, rlk_GSourceFunc _Nullable callback, void *_Nullable user_data);
    void (*_Nullable finalize)(rlk_GSource *source);
    rlk_GSourceFunc _Nullable closure_callback;
    void *_Nullable closure_marshal;
} rlk_GSourceFuncs;

/// The fields of GLib's public `GSource` struct, in order, so that a source of our own can carry
/// one more field after them (`g_source_new` takes the size of the whole struct).
typedef struct rlk_GSourceHeader {
    void *_Nullable callback_data;
    void *_Nullable callback_funcs;
    const void *_Nullable source_funcs;
    unsigned int ref_count;
    void *_Nullable context;
    int priority;
    unsigned int flags;
    unsigned int source_id;
    void *_Nullable poll_fds;
    void *_Nullable prev;
    void *_Nullable next;
    char *_Nullable name;
    void *_Nullable priv;
} rlk_GSourceHeader;

/// The GLib functions the bridge calls, resolved by name from libglib-2.0.so.0. Each field has
/// the name and the signature of the GLib function it holds (gboolean is int, guint unsigned).
/// rlk_glib_load returns a table only when every field is set.
typedef struct rlk_glib {
    rlk_GMainContext *_Nonnull (*_Nonnull g_main_context_new)(void);
    rlk_GMainContext *_Nonnull (*_Nonnull g_main_context_default)(void);
    rlk_GMainContext *_Nonnull (*_Nonnull g_main_context_ref)(rlk_GMainContext *context);
    void (*_Nonnull g_main_context_unref)(rlk_GMainContext *context);
    int (*_Nonnull g_main_context_acquire)(rlk_GMainContext *context);
    void (*_Nonnull g_main_context_release)(rlk_GMainContext *context);
    int (*_Nonnull g_main_context_is_owner)(rlk_GMainContext *context);
    int (*_Nonnull g_main_context_prepare)(rlk_GMainContext *context, int *priority);
    int (*_Nonnull g_main_context_query)(rlk_GMainContext *context, int max_priority, int *timeout,
                                rlk_GPollFD *_Nullable fds, int n_fds);
    int (*_Nonnull g_main_context_check)(rlk_GMainContext *context, int max_priority, rlk_GPollFD *_Nullable fds,
                                int n_fds);
    void (*_Nonnull g_main_context_dispatch)(rlk_GMainContext *context);
    int (*_Nonnull g_main_context_iteration)(rlk_GMainContext *context, int may_block);
    void (*_Nonnull g_main_context_wakeup)(rlk_GMainContext *context);
    rlk_GPollFunc _Nonnull (*_Nonnull g_main_context_get_poll_func)(rlk_GMainContext *context);
    void (*_Nonnull g_main_context_set_poll_func)(rlk_GMainContext *context, rlk_GPollFunc func);
    void (*_Nonnull g_main_context_invoke)(rlk_GMainContext *context, rlk_GSourceFunc function, void *_Nullable data);
    void (*_Nonnull g_main_context_push_thread_default)(rlk_GMainContext *context);
    void (*_Nonnull g_main_context_pop_thread_default)(rlk_GMainContext *context);

    rlk_GMainLoop *_Nonnull (*_Nonnull g_main_loop_new)(rlk_GMainContext *context, int is_running);
    void (*_Nonnull g_main_loop_run)(rlk_GMainLoop *loop);
    void (*_Nonnull g_main_loop_quit)(rlk_GMainLoop *loop);
    int (*_Nonnull g_main_loop_is_running)(rlk_GMainLoop *loop);
    void (*_Nonnull g_main_loop_unref)(rlk_GMainLoop *loop);

    rlk_GSource *_Nullable (*_Nonnull g_source_new)(const rlk_GSourceFuncs *funcs, unsigned int struct_size);
    unsigned int (*_Nonnull g_source_attach)(rlk_GSource *source, rlk_GMainContext *context);
    void (*_Nonnull g_source_destroy)(rlk_GSource *source);
    rlk_GSource *_Nullable (*_Nonnull g_main_context_find_source_by_id)(rlk_GMainContext *context,
                                                                      unsigned int source_id);
    void (*_Nonnull g_source_unref)(rlk_GSource *source);
    void (*_Nonnull g_source_set_callback)(rlk_GSource *source, rlk_GSourceFunc func, void *_Nullable data,
                                  rlk_GDestroyNotify _Nullable notify);
    void (*_Nonnull g_source_set_priority)(rlk_GSource *source, int priority);
    void (*_Nonnull g_source_set_name)(rlk_GSource *source, const char *name);
    void (*_Nonnull g_source_set_ready_time)(rlk_GSource *source, int64_t ready_time);
    void (*_Nonnull g_source_set_can_recurse)(rlk_GSource *source, int can_recurse);
    void *_Nonnull (*_Nonnull g_source_add_unix_fd)(rlk_GSource *source, int fd, unsigned int events);
    unsigned int (*_Nonnull g_source_query_unix_fd)(rlk_GSource *source, void *tag);
    void (*_Nonnull g_source_remove_unix_fd)(rlk_GSource *source, void *tag);
    rlk_GSource *_Nonnull (*_Nonnull g_idle_source_new)(void);
    rlk_GSource *_Nonnull (*_Nonnull g_timeout_source_new)(unsigned int interval_ms);
    rlk_GSource *_Nonnull (*_Nonnull g_unix_fd_source_new)(int fd, unsigned int condition);
    int64_t (*_Nonnull g_get_monotonic_time)(void);
    int (*_Nonnull g_poll)(rlk_GPollFD *fds, unsigned int nfds, int timeout);
} rlk_glib;

/// Loads libglib-2.0.so.0 and resolves every function of `rlk_glib`, once per process (later
/// calls return the first outcome). Returns the table, or NULL when the library or one of the
/// functions is missing; `*error` is then a message naming what failed (static storage).
const rlk_glib *_Nullable rlk_glib_load(const char *_Nullable *_Nonnull error);

/// The work of rlk_glib_load for any library name, into `out`; returns 1, or 0 with a message in
/// `error` (the tests use it to see the messages a machine without GLib gets).
int rlk_glib_load_from(const char *library, rlk_glib *out, char *error, size_t capacity);

/// What a source made by rlk_glib_owned_source_new does in each of GLib's calls; each gets the
/// `owner` pointer given at creation. `finalize` runs when GLib frees the source.
typedef struct rlk_glib_source_callbacks {
    int (*_Nonnull prepare)(void *_Nullable owner, int *timeout);
    int (*_Nonnull check)(void *_Nullable owner);
    void (*_Nonnull dispatch)(void *_Nullable owner);
    void (*_Nonnull finalize)(void *_Nullable owner);
} rlk_glib_source_callbacks;

/// A GSource whose prepare, check, dispatch and finalize are `callbacks` (copied into the
/// source) called with `owner`: g_source_new with the size of GLib's fields plus ours. NULL
/// when g_source_new refuses.
rlk_GSource *_Nullable rlk_glib_owned_source_new(const rlk_glib *glib, rlk_glib_source_callbacks callbacks,
                                                 void *_Nullable owner);

/// What rlk_glib_epoll_control does with a descriptor.
typedef enum rlk_glib_epoll_op {
    RLK_GLIB_EPOLL_ADD = 1,
    RLK_GLIB_EPOLL_MODIFY = 2,
    RLK_GLIB_EPOLL_REMOVE = 3,
} rlk_glib_epoll_op;

/// epoll_create1(EPOLL_CLOEXEC): the set that holds GLib's descriptors while a loop hosts GLib.
/// Returns the descriptor, or -1 with errno set.
int rlk_glib_epoll_create(void);
/// epoll_ctl(epfd, op, fd) for `events` in GIOCondition bits (G_IO_IN, G_IO_PRI, G_IO_OUT: the
/// same values as EPOLLIN, EPOLLPRI, EPOLLOUT), level-triggered, the event's data being `fd`.
/// Returns 0, or -1 with errno set.
int rlk_glib_epoll_control(int epfd, rlk_glib_epoll_op op, int fd, unsigned int events);

/// A context's poll function that hands GLib's polls to the Loop GLib hosts: `sleeping_poll`
/// gets every poll and decides which count as the loop's sleep (BeforeWaiting, the poll — with
/// `previous`, the poll function the context had — and AfterWaiting); the others it passes
/// straight to `previous`.
typedef struct rlk_glib_sleep_hooks {
    void *_Nullable owner;
    int (*_Nonnull sleeping_poll)(void *_Nullable owner, rlk_GPollFD *fds, unsigned int nfds, int timeout);
    rlk_GPollFunc _Nonnull previous;
} rlk_glib_sleep_hooks;

/// Sets (or clears, with NULL) the calling thread's hooks. The hooks stay owned by the caller.
void rlk_glib_set_sleep_hooks(rlk_glib_sleep_hooks *_Nullable hooks);
/// The calling thread's hooks, or NULL.
rlk_glib_sleep_hooks *_Nullable rlk_glib_sleep_hooks_current(void);
/// A GPollFunc for g_main_context_set_poll_func that calls the calling thread's hooks; without
/// hooks on this thread (another thread iterates the context) it is g_poll.
int rlk_glib_hooked_poll(rlk_GPollFD *fds, unsigned int nfds, int timeout);

/// The sizes and offsets this header assumes, for the check against GLib's real headers.
size_t rlk_glib_assumed_gsource_size(void);
size_t rlk_glib_assumed_gsourcefuncs_size(void);
size_t rlk_glib_assumed_gpollfd_size(void);

#pragma clang assume_nonnull end

#endif
