// Runs scripts on fresh threads (each thread gets a fresh CFRunLoop, destroyed at thread exit)
// and many scripts in parallel on a few worker threads.

import Foundation

/// Thread-confined result slot handed from the script thread back to the waiting one; the
/// semaphore orders the write before the read.
private final class ResultSlot<T>: @unchecked Sendable {
    var value: T?
}

enum ScriptRunner {
    /// Runs `body` on a new thread and waits for it.
    static func onFreshThread<T>(_ body: @escaping @Sendable () -> T) -> T {
        let slot = ResultSlot<T>()
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            slot.value = body()
            done.signal()
        }
        thread.stackSize = 4 << 20
        thread.start()
        done.wait()
        return slot.value!
    }

    /// Executes the script on the real CFRunLoop of a fresh thread.
    static func runOnCF(_ script: Script) -> Execution {
        onFreshThread {
            let interpreter = ScriptInterpreter(script: script)
            let driver = CFDriver(script: script, interpreter: interpreter)
            interpreter.driver = driver
            interpreter.runScript()
            interpreter.driver = nil
            return interpreter.execution
        }
    }
}
