import RunLoopCore

/// CoreFoundation's names for the activities (our own table, so exports do not depend on
/// how the loop module spells them).
enum ActivityNames {
    static func cfName(_ activity: Loop.Activity) -> String {
        switch activity.rawValue {
        case 1: "kCFRunLoopEntry"
        case 2: "kCFRunLoopBeforeTimers"
        case 4: "kCFRunLoopBeforeSources"
        case 32: "kCFRunLoopBeforeWaiting"
        case 64: "kCFRunLoopAfterWaiting"
        case 128: "kCFRunLoopExit"
        default: "kCFRunLoopActivity(0x\(String(activity.rawValue, radix: 16)))"
        }
    }

    /// Short form for charts: Entry, BT, BS, BW, AW, Exit.
    static func shortName(_ activity: Loop.Activity) -> String {
        switch activity.rawValue {
        case 1: "Entry"
        case 2: "BT"
        case 4: "BS"
        case 32: "BW"
        case 64: "AW"
        case 128: "Exit"
        default: "0x\(String(activity.rawValue, radix: 16))"
        }
    }
}
