// The works run on a thread of their own, as package-benchmark's do (never on the main thread):
// the polling pass is then a pass of that thread's own loop, not of `Loop.main`, whose pass adds
// a system call (Scripts/run-main-loop.sh measures that one).

import Glibc

/// The body handed to the new thread (retained across pthread_create, released by the thread).
final class ThreadBody {
    let run: () -> Void
    init(_ run: @escaping () -> Void) { self.run = run }
}

/// Runs `body` on a new thread and returns when it has finished.
func runOnOwnThread(_ body: @escaping () -> Void) {
    let argument = Unmanaged.passRetained(ThreadBody(body)).toOpaque()
    var thread = pthread_t()
    let created = pthread_create(&thread, nil, { argument in
        Unmanaged<ThreadBody>.fromOpaque(argument!).takeRetainedValue().run()
        return nil
    }, argument)
    if created != 0 { fail("pthread_create failed: \(created)") }
    let joined = pthread_join(thread, nil)
    if joined != 0 { fail("pthread_join failed: \(joined)") }
}
