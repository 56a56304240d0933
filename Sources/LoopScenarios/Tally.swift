/// A counter and list shared between a scenario and its callouts, all on the loop's thread.
final class Tally {
    private(set) var items: [String] = []
    var count: Int { items.count }
    func add(_ item: String) { items.append(item) }
}
