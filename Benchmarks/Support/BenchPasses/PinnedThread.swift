import CBenchSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The CPU every thread of a round-trip benchmark runs on. With both threads on one CPU a
/// wake-up costs two context switches; across CPUs this VM adds ~40 µs of hypervisor wake-up
/// that would swamp what is being compared (see Docs/Benchmarks.md).
public let roundTripCPU: Int32 = 0

/// A pthread pinned to one CPU that runs `body` once; `join()` waits for it to end.
public final class PinnedThread {
    private final class Start {
        let cpu: Int32
        let body: @Sendable () -> Void
        init(cpu: Int32, body: @escaping @Sendable () -> Void) {
            self.cpu = cpu
            self.body = body
        }
    }

    private var thread = pthread_t()

    public init(cpu: Int32, _ body: @escaping @Sendable () -> Void) {
        let start = Unmanaged.passRetained(Start(cpu: cpu, body: body)).toOpaque()
        let status = pthread_create(&thread, nil, { raw in
            guard let raw else { return nil }
            let start = Unmanaged<Start>.fromOpaque(raw).takeRetainedValue()
            let pinned = bench_pin_current_thread(start.cpu)
            precondition(pinned == 0, "could not pin a benchmark thread to CPU \(start.cpu): errno \(pinned)")
            start.body()
            return nil
        }, start)
        precondition(status == 0, "pthread_create failed: errno \(status)")
    }

    public func join() {
        pthread_join(thread, nil)
    }
}
