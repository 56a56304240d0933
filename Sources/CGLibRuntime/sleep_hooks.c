#include "CGLibRuntime.h"

#include <errno.h>
#include <stddef.h>

// The hooks of the Loop hosted on this thread. A GPollFunc has no user data, and only the thread
// that iterates a context calls its poll function, so the thread is the key.
static _Thread_local rlk_glib_sleep_hooks *current_hooks;

void rlk_glib_set_sleep_hooks(rlk_glib_sleep_hooks *hooks) { current_hooks = hooks; }

rlk_glib_sleep_hooks *rlk_glib_sleep_hooks_current(void) { return current_hooks; }

int rlk_glib_hooked_poll(rlk_GPollFD *fds, unsigned int nfds, int timeout) {
    rlk_glib_sleep_hooks *hooks = current_hooks;
    if (hooks == NULL) {
        const char *error = NULL;
        const rlk_glib *glib = rlk_glib_load(&error);
        // The hooks were installed through a loaded table, so this cannot fail; say so if it does.
        if (glib == NULL) {
            errno = ENOSYS;
            return -1;
        }
        return glib->g_poll(fds, nfds, timeout);
    }
    return hooks->sleeping_poll(hooks->owner, fds, nfds, timeout);
}
