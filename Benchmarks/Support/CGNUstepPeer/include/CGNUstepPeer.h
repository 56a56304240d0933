#ifndef CGNUSTEPPEER_H
#define CGNUSTEPPEER_H

// GNUstep base's NSAutoreleasePool doing the work the autorelease benchmarks measure. The
// library is opened with dlopen and every message is sent the way gcc compiles an Objective-C
// message send for the GNU runtime: objc_msg_lookup(receiver, selector), then a call of the IMP.

#ifdef __cplusplus
extern "C" {
#endif

/// Opens GNUstep base (libgnustep-base.so, else libgnustep-base.so.1.28), initialises the
/// process once and registers the calling thread with GNUstep. Returns 0, or -1 with a reason
/// in bench_gnustep_error().
int bench_gnustep_load(void);
/// Why the last bench_gnustep_load failed.
const char *bench_gnustep_error(void);

/// [[NSAutoreleasePool alloc] init].
void *bench_gnustep_pool_push(void);
/// [pool drain].
void bench_gnustep_pool_drain(void *pool);

/// Fills `objects` with `n` fresh NSObjects, each retained once more (retain count 2), so an
/// autorelease hands over one reference and the drain leaves the object alive.
void bench_gnustep_make_retained(void **objects, long n);
/// Releases each of `n` objects once (the reference bench_gnustep_make_retained kept).
void bench_gnustep_release_all(void **objects, long n);

/// [objects[i] autorelease] for i in 0..<n, into the current pool.
void bench_gnustep_autorelease_each(void **objects, long n);
/// [[objects[i] retain] autorelease] for i in 0..<n, into the current pool.
void bench_gnustep_retain_autorelease_each(void **objects, long n);
/// n times: push a pool, [[[NSObject alloc] init] autorelease], drain (the object is freed).
void bench_gnustep_fresh_object_own_pool(long n);
/// One pool: n times [[[NSObject alloc] init] autorelease], then one drain (frees them all).
void bench_gnustep_fresh_objects_one_drain(long n);
/// n times: [[NSAutoreleasePool alloc] init] and [pool drain] with nothing in it.
void bench_gnustep_empty_push_drain(long n);

#ifdef __cplusplus
}
#endif

#endif
