/// A source0's loops (S5: one source may be in modes of several loops at once, and each loop
/// performs it). The other items are bound to one loop, which their `ItemCore` records; a
/// source0 keeps this list instead.
extension LoopSource {
    /// One loop holding the source, and how many of its concrete modes do.
    struct Home {
        weak var loop: Loop?
        var count: Int
    }

    func accepts(_ loop: Loop) -> Bool { core.lock.withLock { core.valid } }

    func bind(_ loop: Loop) -> Bool {
        core.lock.withLock {
            guard core.valid else { return false }
            if let i = homes.firstIndex(where: { $0.loop === loop }) {
                homes[i].count += 1
            } else {
                homes.append(Home(loop: loop, count: 1))
            }
            return true
        }
    }

    func unbind(_ loop: Loop) {
        core.lock.withLock {
            guard let i = homes.firstIndex(where: { $0.loop === loop }) else { return }
            homes[i].count -= 1
            if homes[i].count <= 0 { homes.remove(at: i) }
        }
    }

    /// The loops holding the source now (freed ones left out).
    var loops: [Loop] { core.lock.withLock { homes.compactMap(\.loop) } }
}
