// RunLoopKitGLib declares the GLib types it uses itself, so that the root package builds without
// GLib's headers. Here, with the headers, every declared size, offset and constant is checked
// against GLib's own: a mismatch fails this example's build (and CI).
#include <glib.h>
#include <stddef.h>

#include "../../../../Sources/CGLibRuntime/include/CGLibRuntime.h"

#define SAME_FIELD(ours, theirs, field) \
    _Static_assert(offsetof(ours, field) == offsetof(theirs, field), #theirs "." #field " moved")

_Static_assert(sizeof(rlk_GPollFD) == sizeof(GPollFD), "GPollFD size");
SAME_FIELD(rlk_GPollFD, GPollFD, fd);
SAME_FIELD(rlk_GPollFD, GPollFD, events);
SAME_FIELD(rlk_GPollFD, GPollFD, revents);

_Static_assert(sizeof(rlk_GSourceFuncs) == sizeof(GSourceFuncs), "GSourceFuncs size");
SAME_FIELD(rlk_GSourceFuncs, GSourceFuncs, prepare);
SAME_FIELD(rlk_GSourceFuncs, GSourceFuncs, check);
SAME_FIELD(rlk_GSourceFuncs, GSourceFuncs, dispatch);
SAME_FIELD(rlk_GSourceFuncs, GSourceFuncs, finalize);

_Static_assert(sizeof(rlk_GSourceHeader) == sizeof(GSource), "GSource size");
SAME_FIELD(rlk_GSourceHeader, GSource, callback_data);
SAME_FIELD(rlk_GSourceHeader, GSource, source_funcs);
SAME_FIELD(rlk_GSourceHeader, GSource, context);
SAME_FIELD(rlk_GSourceHeader, GSource, priority);
SAME_FIELD(rlk_GSourceHeader, GSource, flags);
SAME_FIELD(rlk_GSourceHeader, GSource, source_id);
SAME_FIELD(rlk_GSourceHeader, GSource, name);
SAME_FIELD(rlk_GSourceHeader, GSource, priv);

_Static_assert(RLK_G_IO_IN == G_IO_IN && RLK_G_IO_PRI == G_IO_PRI && RLK_G_IO_OUT == G_IO_OUT, "GIOCondition");
_Static_assert(RLK_G_IO_ERR == G_IO_ERR && RLK_G_IO_HUP == G_IO_HUP && RLK_G_IO_NVAL == G_IO_NVAL, "GIOCondition");
_Static_assert(RLK_G_PRIORITY_HIGH == G_PRIORITY_HIGH && RLK_G_PRIORITY_DEFAULT == G_PRIORITY_DEFAULT, "priorities");
_Static_assert(RLK_G_PRIORITY_HIGH_IDLE == G_PRIORITY_HIGH_IDLE && RLK_G_PRIORITY_DEFAULT_IDLE == G_PRIORITY_DEFAULT_IDLE,
               "priorities");
_Static_assert(sizeof(gboolean) == sizeof(int) && sizeof(guint) == sizeof(unsigned int), "gboolean, guint");
