#define _GNU_SOURCE
#include "CGNUstepPeer.h"

#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>

// The few GNU Objective-C runtime types this needs, declared here so that no Objective-C
// header or compiler is required.
typedef void *id;
typedef const void *SEL;
typedef id (*IMP)(id, SEL, ...);

static IMP (*msg_lookup)(id, SEL);
static id ns_object_class, ns_pool_class;
static SEL sel_alloc, sel_init, sel_autorelease, sel_retain, sel_release, sel_drain;
static char load_error[256];

/// One message send with no arguments, as gcc emits it for the GNU runtime.
static inline id send(id receiver, SEL selector) {
    return msg_lookup(receiver, selector)(receiver, selector);
}

const char *bench_gnustep_error(void) { return load_error; }

int bench_gnustep_load(void) {
    static void *library;
    int (*register_thread)(void);
    if (!library) {
        library = dlopen("libgnustep-base.so", RTLD_NOW | RTLD_LOCAL);
        if (!library) library = dlopen("libgnustep-base.so.1.28", RTLD_NOW | RTLD_LOCAL);
        if (!library) {
            snprintf(load_error, sizeof load_error, "GNUstep base not found (apt-get install libgnustep-base-dev): %s", dlerror());
            return -1;
        }
        id (*get_class)(const char *) = (id (*)(const char *))dlsym(library, "objc_getClass");
        SEL (*register_selector)(const char *) = (SEL (*)(const char *))dlsym(library, "sel_registerName");
        void (*initialize_process)(int, char **, char **) =
            (void (*)(int, char **, char **))dlsym(library, "GSInitializeProcess");
        msg_lookup = (IMP (*)(id, SEL))dlsym(library, "objc_msg_lookup");
        if (!get_class || !register_selector || !msg_lookup || !initialize_process) {
            snprintf(load_error, sizeof load_error, "GNUstep base or the GNU objc runtime lacks a symbol");
            library = NULL;
            return -1;
        }
        static char name[] = "AutoreleaseBenchmarks";
        static char *argv[] = { name, NULL };
        static char *envp[] = { NULL };
        initialize_process(1, argv, envp);
        ns_object_class = get_class("NSObject");
        ns_pool_class = get_class("NSAutoreleasePool");
        sel_alloc = register_selector("alloc");
        sel_init = register_selector("init");
        sel_autorelease = register_selector("autorelease");
        sel_retain = register_selector("retain");
        sel_release = register_selector("release");
        sel_drain = register_selector("drain");
        if (!ns_object_class || !ns_pool_class) {
            snprintf(load_error, sizeof load_error, "NSObject or NSAutoreleasePool not found in GNUstep base");
            library = NULL;
            return -1;
        }
    }
    // GNUstep keeps its pools per NSThread; a thread it did not start must be registered.
    register_thread = (int (*)(void))dlsym(library, "GSRegisterCurrentThread");
    if (register_thread) register_thread();
    return 0;
}

static inline id new_object(void) { return send(send(ns_object_class, sel_alloc), sel_init); }

void *bench_gnustep_pool_push(void) { return send(send(ns_pool_class, sel_alloc), sel_init); }

void bench_gnustep_pool_drain(void *pool) { send(pool, sel_drain); }

void bench_gnustep_make_retained(void **objects, long n) {
    for (long i = 0; i < n; i++) objects[i] = send(new_object(), sel_retain);
}

void bench_gnustep_release_all(void **objects, long n) {
    for (long i = 0; i < n; i++) send(objects[i], sel_release);
}

void bench_gnustep_autorelease_each(void **objects, long n) {
    for (long i = 0; i < n; i++) send(objects[i], sel_autorelease);
}

void bench_gnustep_retain_autorelease_each(void **objects, long n) {
    for (long i = 0; i < n; i++) send(send(objects[i], sel_retain), sel_autorelease);
}

void bench_gnustep_fresh_object_own_pool(long n) {
    for (long i = 0; i < n; i++) {
        id pool = bench_gnustep_pool_push();
        send(new_object(), sel_autorelease);
        send(pool, sel_drain);
    }
}

void bench_gnustep_fresh_objects_one_drain(long n) {
    id pool = bench_gnustep_pool_push();
    for (long i = 0; i < n; i++) send(new_object(), sel_autorelease);
    send(pool, sel_drain);
}

void bench_gnustep_empty_push_drain(long n) {
    for (long i = 0; i < n; i++) send(bench_gnustep_pool_push(), sel_drain);
}
