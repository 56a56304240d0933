#include "CGLibRuntime.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

// One table and one outcome per process: GLib is either there for the whole run or not at all.
static rlk_glib table;
static const rlk_glib *loaded;
static char failure[512];
static pthread_once_t once = PTHREAD_ONCE_INIT;

// Resolves one GLib function into the table's field of the same name; on the first missing one,
// writes its name (and dlerror's text) into `error` and returns 0.
#define RESOLVE(handle, name)                                                                 \
    do {                                                                                      \
        dlerror();                                                                            \
        void *symbol = dlsym(handle, #name);                                                  \
        if (symbol == NULL) {                                                                 \
            const char *why = dlerror();                                                      \
            snprintf(error, capacity, "%s has no %s (%s)", library, #name,                    \
                     why ? why : "no such symbol");                                           \
            return 0;                                                                         \
        }                                                                                     \
        *(void **)&out->name = symbol;                                                        \
    } while (0)

static int resolve_all(void *handle, const char *library, rlk_glib *out, char *error, size_t capacity) {
    RESOLVE(handle, g_main_context_new);
    RESOLVE(handle, g_main_context_default);
    RESOLVE(handle, g_main_context_ref);
    RESOLVE(handle, g_main_context_unref);
    RESOLVE(handle, g_main_context_acquire);
    RESOLVE(handle, g_main_context_release);
    RESOLVE(handle, g_main_context_is_owner);
    RESOLVE(handle, g_main_context_prepare);
    RESOLVE(handle, g_main_context_query);
    RESOLVE(handle, g_main_context_check);
    RESOLVE(handle, g_main_context_dispatch);
    RESOLVE(handle, g_main_context_iteration);
    RESOLVE(handle, g_main_context_wakeup);
    RESOLVE(handle, g_main_context_get_poll_func);
    RESOLVE(handle, g_main_context_set_poll_func);
    RESOLVE(handle, g_main_context_invoke);
    RESOLVE(handle, g_main_context_push_thread_default);
    RESOLVE(handle, g_main_context_pop_thread_default);
    RESOLVE(handle, g_main_loop_new);
    RESOLVE(handle, g_main_loop_run);
    RESOLVE(handle, g_main_loop_quit);
    RESOLVE(handle, g_main_loop_is_running);
    RESOLVE(handle, g_main_loop_unref);
    RESOLVE(handle, g_source_new);
    RESOLVE(handle, g_source_attach);
    RESOLVE(handle, g_source_destroy);
    RESOLVE(handle, g_main_context_find_source_by_id);
    RESOLVE(handle, g_source_unref);
    RESOLVE(handle, g_source_set_callback);
    RESOLVE(handle, g_source_set_priority);
    RESOLVE(handle, g_source_set_name);
    RESOLVE(handle, g_source_set_ready_time);
    RESOLVE(handle, g_source_set_can_recurse);
    RESOLVE(handle, g_source_add_unix_fd);
    RESOLVE(handle, g_source_query_unix_fd);
    RESOLVE(handle, g_source_remove_unix_fd);
    RESOLVE(handle, g_idle_source_new);
    RESOLVE(handle, g_timeout_source_new);
    RESOLVE(handle, g_unix_fd_source_new);
    RESOLVE(handle, g_get_monotonic_time);
    RESOLVE(handle, g_poll);
    return 1;
}

int rlk_glib_load_from(const char *library, rlk_glib *out, char *error, size_t capacity) {
    // A program linked with GLib (a GTK application) already has the library: dlopen then
    // returns that very copy, so both sides share one GLib.
    void *handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        const char *why = dlerror();
        snprintf(error, capacity, "GLib is not available: dlopen(\"%s\") failed (%s)", library,
                 why ? why : "no reason given");
        return 0;
    }
    if (resolve_all(handle, library, out, error, capacity)) return 1;
    // Nothing of the library is used: let it go (dlclose's failure leaves it loaded, harmless).
    (void)dlclose(handle);
    return 0;
}

static void load_once(void) {
    // The handle is kept for the life of the process: GLib cannot be unloaded safely.
    if (rlk_glib_load_from("libglib-2.0.so.0", &table, failure, sizeof failure)) loaded = &table;
}

const rlk_glib *rlk_glib_load(const char **error) {
    int status = pthread_once(&once, load_once);
    if (status != 0) {
        snprintf(failure, sizeof failure, "pthread_once failed (error %d)", status);
        if (error) *error = failure;
        return NULL;
    }
    if (loaded == NULL && error) *error = failure;
    return loaded;
}

// A source of ours: GLib's fields, then what GLib's calls are forwarded to.
typedef struct owned_source {
    rlk_GSourceHeader header;
    rlk_glib_source_callbacks callbacks;
    void *owner;
} owned_source;

static int owned_prepare(rlk_GSource *source, int *timeout) {
    owned_source *owned = (owned_source *)(void *)source;
    return owned->callbacks.prepare(owned->owner, timeout);
}

static int owned_check(rlk_GSource *source) {
    owned_source *owned = (owned_source *)(void *)source;
    return owned->callbacks.check(owned->owner);
}

static int owned_dispatch(rlk_GSource *source, rlk_GSourceFunc callback, void *user_data) {
    (void)callback;
    (void)user_data;
    owned_source *owned = (owned_source *)(void *)source;
    owned->callbacks.dispatch(owned->owner);
    return 1;  // G_SOURCE_CONTINUE: the owner destroys the source when it is done
}

static void owned_finalize(rlk_GSource *source) {
    owned_source *owned = (owned_source *)(void *)source;
    owned->callbacks.finalize(owned->owner);
}

static rlk_GSourceFuncs owned_functions = {
    .prepare = owned_prepare,
    .check = owned_check,
    .dispatch = owned_dispatch,
    .finalize = owned_finalize,
};

rlk_GSource *rlk_glib_owned_source_new(const rlk_glib *glib, rlk_glib_source_callbacks callbacks, void *owner) {
    rlk_GSource *source = glib->g_source_new(&owned_functions, (unsigned int)sizeof(owned_source));
    if (source == NULL) return NULL;
    owned_source *owned = (owned_source *)(void *)source;
    owned->callbacks = callbacks;
    owned->owner = owner;
    return source;
}

size_t rlk_glib_assumed_gsource_size(void) { return sizeof(rlk_GSourceHeader); }
size_t rlk_glib_assumed_gsourcefuncs_size(void) { return sizeof(rlk_GSourceFuncs); }
size_t rlk_glib_assumed_gpollfd_size(void) { return sizeof(rlk_GPollFD); }
