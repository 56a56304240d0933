import CRunLoopShims

/// Process-wide readings the instruments need from the C shim, so that LoopInstruments does
/// not import it (package-internal, not public API).
package enum ProcessProbes {
    /// Heap bytes in use according to glibc's `mallinfo2()`; 0 when unavailable.
    package static func heapInUseBytes() -> Int { Int(rlk_heap_in_use()) }
}
