import CRunLoopShims
import PThreads
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A loop's lock, and the only way to the state it guards.
///
/// Holding the lock is a value: ``lock()`` returns a ``Held``, which is noncopyable, and only a
/// `Held` reaches the guarded state of the loop (``Held/loop``), of its modes
/// (``Held/subscript(_:)-mode``) and of its runs (``Held/subscript(_:)-frame``). A function
/// that needs the lock borrows a `Held`; one that lets the lock go consumes it
/// (``Held/unlock()``), and returns the `Held` of its next ``lock()`` if its caller goes on
/// under the lock. So the compiler tracks who holds the lock across function boundaries, and
/// state guarded by it cannot be touched without it.
///
/// The guarded state sits behind pointers made here and read only through a `Held`, so the
/// unsafe code of the loop's locking is this file. The accessors are `@_transparent`: a debug
/// build inlines them too, where a `_read`/`_modify` accessor that is not inlined allocates its
/// coroutine frame on every use (14 allocations per pass). The pointers themselves: a pointer's pointee is not subject to
/// Swift's run-time exclusivity checks, which on class properties cost a third of a pass's
/// instructions, and which the lock makes redundant. Debug builds check instead, on every
/// access, that the calling thread holds the lock.
///
/// The mutex and the state share one heap block, so a `Held` is a single pointer: from it the
/// mutex and the state are at fixed offsets. (With the mutex in an object of its own
/// and the state in a block of its own, a `Held` was two pointers, and a run spent about 20
/// instructions more keeping both in registers or on the stack.)
final class LoopLock: Sendable {
    /// `nonisolated(unsafe)`: the state in it is reached only through a `Held`, which exists
    /// only while the block's mutex is locked by the thread that made it.
    fileprivate nonisolated(unsafe) let block: UnsafeMutablePointer<LockBlock>
    #if DEBUG
    /// The thread holding the lock (0: none), for the debug check.
    fileprivate let holder = Atomic<UInt>(0)
    #endif

    init(guarding initial: LoopGuardedState) {
        block = allocateOnCacheLinesOfItsOwn(LockBlock.self)
        block.initialize(to: LockBlock(mutex: pthread_mutex_t(), state: initial))
        let status = pthread_mutex_init(LockBlock.mutex(of: block), nil)
        precondition(status == 0, "pthread_mutex_init failed: \(status)")
    }

    deinit {
        pthread_mutex_destroy(LockBlock.mutex(of: block))
        block.deinitialize(count: 1)
        UnsafeMutableRawPointer(block).deallocate()
    }

    /// Takes the lock; the `Held` it returns must end with ``Held/unlock()``.
    @inline(__always)
    func lock() -> Held {
        #if DEBUG
        // The other half of the items' lock order (see `ItemLock`): a thread that holds an
        // item's lock never waits for a loop's, which may be held while that item's is taken.
        precondition(rlk_item_locks_held()!.pointee == 0,
                     "a loop's lock taken while this thread holds an item's lock: the lock order is the loop's first")
        #endif
        let held = Held(self)
        held.takeMutex()
        return held
    }

    /// Runs `body` with the lock held.
    @inline(__always)
    func withLock<R, E: Error>(_ body: (borrowing Held) throws(E) -> R) throws(E) -> R {
        let held = lock()
        do {
            let result = try body(held)
            held.unlock()
            return result
        } catch {
            held.unlock()
            throw error
        }
    }

    /// Waits on `condition` until it is signalled or `deadline` (monotonic nanoseconds)
    /// passes, releasing the lock meanwhile; true when signalled. The lock is held again on
    /// return, by the same `held`.
    func wait(on condition: PThreadCondition, untilMonotonicNanoseconds deadline: UInt64,
              _ held: borrowing Held) -> Bool {
        #if DEBUG
        holder.store(0, ordering: .relaxed)
        defer { holder.store(UInt(bitPattern: Int(bitPattern: UInt(pthread_self()))), ordering: .relaxed) }
        #endif
        return condition.wait(LentMutex(unsafeMutex: LockBlock.mutex(of: block)), untilMonotonicNanoseconds: deadline)
    }

    /// The guarded state of an object no other thread can reach yet (an initialiser, a
    /// deinitialiser): no lock is needed to set it up.
    var unshared: UnsafeMutablePointer<LoopGuardedState> { LockBlock.state(of: block) }

    /// Proof that the calling thread holds a loop's lock, and the way to what it guards.
    struct Held: ~Copyable {
        private let block: UnsafeMutablePointer<LockBlock>
        #if DEBUG
        private let lock: Unmanaged<LoopLock>
        #endif

        @inline(__always)
        fileprivate init(_ lock: LoopLock) {
            block = lock.block
            #if DEBUG
            self.lock = .passUnretained(lock)
            #endif
        }

        /// The loop's guarded state.
        var loop: Guarded<LoopGuardedState> {
            @_transparent get {
                checkHeld()
                return Guarded(LockBlock.state(of: block))
            }
        }

        /// A mode's guarded state.
        subscript(_ mode: ModeState) -> Guarded<ModeGuardedState> {
            @_transparent get {
                checkHeld()
                return Guarded(mode.guardedStorage.pointer)
            }
        }

        /// A running run's guarded state (its stop flag, serial and W3 flag), through its
        /// frame's handle.
        subscript(_ frame: RunFrameHandle) -> Guarded<RunControl> {
            @_transparent get {
                checkHeld()
                return Guarded(frame.controlStorage.pointer)
            }
        }

        /// Releases the lock. A critical section that may defer a diagnostic releases it with
        /// `unlockReporting()` instead.
        @inline(__always)
        consuming func unlock() {
            #if DEBUG
            precondition(LockBlock.state(of: block).pointee.deferredDiagnostics.isEmpty,
                         "a loop's lock released with unlock() while diagnostics raised under it wait to be reported: release it with unlockReporting()")
            #endif
            releaseMutex()
            discard self
        }

        /// Runs `body` with the lock released, then takes it back, as a condition wait does: the
        /// caller's critical section is two sections from here on. Only for rare paths at a
        /// point where nothing read before must still hold after.
        @inline(never)
        func whileReleased(_ body: () -> Void) {
            releaseMutex()
            body()
            takeMutex()
        }

        /// Gives the mutex back, with the debug checks' record of who holds it.
        @inline(__always)
        private func releaseMutex() {
            #if DEBUG
            checkHeld()
            lock._withUnsafeGuaranteedRef { $0.holder.store(0, ordering: .relaxed) }
            #endif
            pthread_mutex_unlock(LockBlock.mutex(of: block))
            #if DEBUG
            HeldMutexes.count -= 1
            #endif
        }

        /// Takes the mutex (`LoopLock.lock()`, or again after `releaseMutex()`), with the debug
        /// checks' record of who holds it.
        @inline(__always)
        fileprivate func takeMutex() {
            #if DEBUG
            HeldMutexes.count += 1   // counted as every PThreads mutex is (see `HeldMutexes`)
            #endif
            pthread_mutex_lock(LockBlock.mutex(of: block))
            #if DEBUG
            lock._withUnsafeGuaranteedRef {
                $0.holder.store(UInt(bitPattern: Int(bitPattern: UInt(pthread_self()))), ordering: .relaxed)
            }
            #endif
        }

        @usableFromInline
        func checkHeld() {
            #if DEBUG
            let holder = lock._withUnsafeGuaranteedRef { $0.holder.load(ordering: .relaxed) }
            precondition(holder == UInt(bitPattern: Int(bitPattern: UInt(pthread_self()))),
                         "a loop's guarded state was reached by a thread that does not hold its lock")
            #endif
        }

        deinit {
            assertionFailure("a held loop lock was dropped without unlock(): the lock stays taken")
        }
    }
}

/// Guarded state as a `LoopLock.Held` lends it: its fields read and written in place. Made
/// only by a `Held`; used within the expression that asked for it (`held.loop.depth += 1`).
///
/// The fields are reached through key paths into the state's storage, so that a `Held` bound
/// with `let` can still be consumed by `unlock()` after them (a property of the `Held` itself
/// that yields its storage would keep the `Held` borrowed), and so that a debug build makes no
/// coroutine frame (an allocation) per access. An optimised build compiles each key path to the
/// field's offset.
@dynamicMemberLookup
struct Guarded<State> {
    private let pointer: UnsafeMutablePointer<State>

    @_transparent
    fileprivate init(_ pointer: UnsafeMutablePointer<State>) { self.pointer = pointer }

    subscript<Field>(dynamicMember field: WritableKeyPath<State, Field>) -> Field {
        @_transparent unsafeAddress { UnsafePointer(address(of: field)) }
        @_transparent nonmutating unsafeMutableAddress { address(of: field) }
    }

    /// A stored field's address. A key path with no fixed offset (a field of function type,
    /// stored in a different representation than its key path's) has none: wrap such a field
    /// in a struct. Debug builds stop on it; release builds trust the fields are stored plainly.
    @_transparent
    func address<Field>(of field: WritableKeyPath<State, Field>) -> UnsafeMutablePointer<Field> {
        #if DEBUG
        guard let address = pointer.pointer(to: field) else {
            preconditionFailure("\(field) has no fixed offset in \(State.self): wrap the field in a struct")
        }
        return address
        #else
        return pointer.pointer(to: field).unsafelyUnwrapped
        #endif
    }

    subscript<Value>(dynamicMember property: KeyPath<State, Value>) -> Value {
        @_transparent get { pointer.pointee[keyPath: property] }
    }

    /// The whole state, for its mutating methods (`held.loop.value.pushFrame()`).
    var value: State {
        @_transparent unsafeAddress { UnsafePointer(pointer) }
        @_transparent nonmutating unsafeMutableAddress { pointer }
    }
}

/// A loop's mutex and the state it guards, in one heap block that never moves (see `LoopLock`).
/// Only `LoopLock` and its `Held` reach into it, through the two addresses below.
struct LockBlock {
    var mutex: pthread_mutex_t
    var state: LoopGuardedState

    @_transparent
    static func mutex(of block: UnsafeMutablePointer<LockBlock>) -> UnsafeMutablePointer<pthread_mutex_t> {
        (UnsafeMutableRawPointer(block) + MemoryLayout<LockBlock>.offset(of: \.mutex)!)
            .assumingMemoryBound(to: pthread_mutex_t.self)
    }

    /// Both offsets are constants in an optimised build.
    @_transparent
    static func state(of block: UnsafeMutablePointer<LockBlock>) -> UnsafeMutablePointer<LoopGuardedState> {
        (UnsafeMutableRawPointer(block) + MemoryLayout<LockBlock>.offset(of: \.state)!)
            .assumingMemoryBound(to: LoopGuardedState.self)
    }
}

/// State a loop's lock guards that lives in another object (a mode, a run's frame): a pointer
/// only `LoopLock.Held` follows. Made with its object and freed in its object's deinit.
struct LockGuardedStorage<State> {
    fileprivate let pointer: UnsafeMutablePointer<State>

    init(_ initial: State) {
        pointer = allocateOnCacheLinesOfItsOwn(State.self)
        pointer.initialize(to: initial)
    }

    /// Its owner's deinit: nobody holds the lock for an object that is going away.
    func free() {
        pointer.deinitialize(count: 1)
        UnsafeMutableRawPointer(pointer).deallocate()
    }

    /// The state of an object no other thread can reach yet or any more (its initialiser, its
    /// deinitialiser, a loop being torn down on its last reference).
    var unshared: UnsafeMutablePointer<State> { pointer }
}

/// Memory for one `T` on cache lines of its own: aligned to a line and rounded up to whole lines;
/// free it with `UnsafeMutableRawPointer.deallocate()`. For the state a loop's pass writes on
/// every run (its lock and what the lock guards, a mode's, a run frame's): an object of another
/// thread sharing one of those lines makes each write wait for the line to come back from that
/// thread's CPU. Allocators hand memory one thread freed to another, so two loops' hot state
/// could end up side by side; with a loop on each of two CPUs that cost the pass 6–70% (the
/// `loop-scaling` benchmark, depending on the build's layout).
func allocateOnCacheLinesOfItsOwn<T>(_: T.Type) -> UnsafeMutablePointer<T> {
    let line = 64
    let size = (MemoryLayout<T>.size + line - 1) / line * line
    return UnsafeMutableRawPointer.allocate(byteCount: max(size, line), alignment: max(line, MemoryLayout<T>.alignment))
        .bindMemory(to: T.self, capacity: 1)
}
