/// The mutable state of an object that one thread uses at a time (a pipeline, a queue's phase),
/// kept in one allocation and reached through a pointer: the unsafe code of Transactions.
///
/// Why a pointer: Swift checks at run time that two accesses to one class property never
/// overlap, and on a commit of one layer those checks cost more instructions than the commit's
/// own work. A pointer's pointee is not checked. What makes skipping the check safe: the owner
/// is not `Sendable`, so one thread at a time uses it, and it never holds an access across a call
/// that can come back into it (a callout reads what it needs first, then calls). Debug builds check
/// the second half: a write that overlaps another access of the same state stops the program, as
/// the run-time check would.
///
/// Fields are read and written in place through key paths (`state.phase = .layout`); `value`
/// lends the whole state to its mutating methods. An optimised build compiles each key path to
/// the field's offset. Noncopyable: the owner keeps it in a `let`, and the state goes with it.
///
/// ```swift
/// let counts = ConfinedState(Counts())      // a stored property of the owner
/// counts.waiting += 1
/// ```
@dynamicMemberLookup
struct ConfinedState<State>: ~Copyable {
    private let pointer: UnsafeMutablePointer<State>
    #if DEBUG
    /// True while a write is under way, for the overlap check.
    private let writing: UnsafeMutablePointer<Bool>
    #endif

    init(_ initial: State) {
        pointer = .allocate(capacity: 1)
        pointer.initialize(to: initial)
        #if DEBUG
        writing = .allocate(capacity: 1)
        writing.initialize(to: false)
        #endif
    }

    deinit {
        pointer.deinitialize(count: 1)
        pointer.deallocate()
        #if DEBUG
        writing.deallocate()
        #endif
    }

    /// Puts `new` in place of the state and returns the old one, so that what the old state
    /// releases is released by the caller, after the write (a deinit it sets off may come back).
    func exchange(_ new: State) -> State {
        #if DEBUG
        beginWrite()
        defer { writing.pointee = false }
        #endif
        let old = pointer.move()
        pointer.initialize(to: new)
        return old
    }

    #if DEBUG
    subscript<Field>(dynamicMember field: WritableKeyPath<State, Field>) -> Field {
        get {
            checkNoWriteUnderWay()
            return address(of: field).pointee
        }
        nonmutating _modify {
            beginWrite()
            defer { writing.pointee = false }
            yield &address(of: field).pointee
        }
    }

    /// The field's address, as the release build computes it (which assumes there is one).
    private func address<Field>(of field: WritableKeyPath<State, Field>) -> UnsafeMutablePointer<Field> {
        guard let address = pointer.pointer(to: field) else {
            preconditionFailure("\(field) has no address of its own: wrap a field of function type in a struct")
        }
        return address
    }

    /// The whole state, for its mutating methods (`state.value.makeHookToken()`).
    var value: State {
        get {
            checkNoWriteUnderWay()
            return pointer.pointee
        }
        nonmutating _modify {
            beginWrite()
            defer { writing.pointee = false }
            yield &pointer.pointee
        }
    }

    private func checkNoWriteUnderWay() {
        precondition(!writing.pointee, "\(State.self) was accessed while a write to it was under way")
    }

    private func beginWrite() {
        checkNoWriteUnderWay()
        writing.pointee = true
    }
    #else
    subscript<Field>(dynamicMember field: WritableKeyPath<State, Field>) -> Field {
        @_transparent unsafeAddress { UnsafePointer(pointer.pointer(to: field).unsafelyUnwrapped) }
        @_transparent nonmutating unsafeMutableAddress { pointer.pointer(to: field).unsafelyUnwrapped }
    }

    /// The whole state, for its mutating methods (`state.value.makeHookToken()`).
    var value: State {
        @_transparent unsafeAddress { UnsafePointer(pointer) }
        @_transparent nonmutating unsafeMutableAddress { pointer }
    }
    #endif
}
