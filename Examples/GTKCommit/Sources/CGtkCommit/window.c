#include "CGtkCommit.h"

#include <gtk/gtk.h>
#include <stdio.h>

static GtkWidget *label;
static GMainLoop *main_loop;
static gtkcommit_click_handler click_handler;
static gtkcommit_paint_handler paint_handler;
static void *handler_context;

void gtkcommit_line_buffered_stdout(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
}

int gtkcommit_init(void) {
    return gtk_init_check() ? 1 : 0;
}

static void clicked(GtkButton *button, gpointer data) {
    (void)button;
    (void)data;
    click_handler(handler_context);
}

static void painted(GdkFrameClock *clock, gpointer data) {
    (void)clock;
    (void)data;
    paint_handler(handler_context);
}

// The frame clock exists once the window is realized.
static void realized(GtkWidget *window, gpointer data) {
    (void)data;
    GdkFrameClock *clock = gtk_widget_get_frame_clock(window);
    if (clock != NULL) g_signal_connect(clock, "paint", G_CALLBACK(painted), NULL);
}

static void closed(GtkWindow *window, gpointer data) {
    (void)window;
    (void)data;
    gtkcommit_quit();
}

void gtkcommit_show_window(const char *title, const char *button_label, gtkcommit_click_handler on_click,
                           gtkcommit_paint_handler on_paint, void *context) {
    click_handler = on_click;
    paint_handler = on_paint;
    handler_context = context;
    GtkWidget *window = gtk_window_new();
    gtk_window_set_title(GTK_WINDOW(window), title);
    gtk_window_set_default_size(GTK_WINDOW(window), 360, 160);
    GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 12);
    gtk_widget_set_margin_top(box, 24);
    gtk_widget_set_margin_bottom(box, 24);
    gtk_widget_set_margin_start(box, 24);
    gtk_widget_set_margin_end(box, 24);
    label = gtk_label_new("nothing committed yet");
    GtkWidget *button = gtk_button_new_with_label(button_label);
    gtk_widget_set_vexpand(button, TRUE);  // the lower part of the window: one place to click
    gtk_box_append(GTK_BOX(box), label);
    gtk_box_append(GTK_BOX(box), button);
    gtk_window_set_child(GTK_WINDOW(window), box);
    g_signal_connect(button, "clicked", G_CALLBACK(clicked), NULL);
    g_signal_connect(window, "realize", G_CALLBACK(realized), NULL);
    g_signal_connect(window, "close-request", G_CALLBACK(closed), NULL);
    gtk_window_present(GTK_WINDOW(window));
}

void gtkcommit_set_label(const char *text) {
    gtk_label_set_text(GTK_LABEL(label), text);
}

const char *gtkcommit_label_text(void) {
    return gtk_label_get_text(GTK_LABEL(label));
}

void gtkcommit_run(void) {
    main_loop = g_main_loop_new(NULL, FALSE);
    g_main_loop_run(main_loop);
    g_main_loop_unref(main_loop);
    main_loop = NULL;
}

void gtkcommit_quit(void) {
    if (main_loop != NULL) g_main_loop_quit(main_loop);
}
