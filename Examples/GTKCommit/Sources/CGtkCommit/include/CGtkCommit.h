#ifndef CGTKCOMMIT_H
#define CGTKCOMMIT_H

// The example's window: a label showing the committed model and a button. GTK's signal
// connections and casts are macros, so they live here, in C.

/// Called on the main thread for each click of the button.
typedef void (*gtkcommit_click_handler)(void *context);
/// Called on the main thread at each paint of the window's frame clock (GTK's "paint" phase).
typedef void (*gtkcommit_paint_handler)(void *context);

/// Makes stdout line-buffered (the trace is read while the window is up).
void gtkcommit_line_buffered_stdout(void);
/// gtk_init; returns 0 when there is no display (gtk_init_check failed).
int gtkcommit_init(void);
/// Shows a window titled `title` with a label and a button labelled `button`.
void gtkcommit_show_window(const char *title, const char *button, gtkcommit_click_handler on_click,
                           gtkcommit_paint_handler on_paint, void *context);
/// Sets the label's text (what the example's commit renders).
void gtkcommit_set_label(const char *text);
/// The label's text now (GTK's copy, valid until the next change).
const char *gtkcommit_label_text(void);
/// Runs GLib's main loop on the default context until gtkcommit_quit.
void gtkcommit_run(void);
/// Quits gtkcommit_run's loop.
void gtkcommit_quit(void);

#endif
