/// Plain-text tables of attributed memory, for terminals and logs.
///
/// ```swift
/// print(AllocationTable.bySite(attributor.callouts))
/// print(AllocationTable.turns(attributor.turns))
/// ```
public enum AllocationTable {
    /// One row per site (kind and label), summed over every record: callouts, allocations,
    /// frees, usable bytes allocated and freed, net, the highest peak of one callout, pool-page
    /// bytes. Sorted by bytes allocated, largest first.
    public static func bySite(_ callouts: [CalloutAllocation], limit: Int = 20) -> String {
        var order: [AllocationSite] = []
        var sums: [AllocationSite: (count: Int, user: AllocationFigures, pool: AllocationFigures)] = [:]
        for callout in callouts {
            let site = callout.site
            if sums[site] == nil { order.append(site) }
            let previous = sums[site] ?? (0, .zero, .zero)
            sums[site] = (previous.count + 1, previous.user + callout.user, previous.pool + callout.poolPages)
        }
        let sorted = order.sorted { (sums[$0]!.user.bytes, $1.description) > (sums[$1]!.user.bytes, $0.description) }
        var rows = [["site", "callouts", "allocs", "frees", "bytes", "freed", "net", "max peak", "pool pages"]]
        for site in sorted.prefix(limit) {
            let sum = sums[site]!
            rows.append([site.description, String(sum.count), String(sum.user.allocations), String(sum.user.frees),
                         String(sum.user.bytes), String(sum.user.freedBytes), String(sum.user.net), String(sum.user.peak),
                         String(sum.pool.net)])
        }
        if sorted.count > limit { rows.append(["(\(sorted.count - limit) more sites)", "", "", "", "", "", "", "", ""]) }
        return render(rows)
    }

    /// One row per turn, with the site holding the most live bytes at the turn's peak when a
    /// peak snapshot was taken.
    public static func turns(_ turns: [TurnAllocation]) -> String {
        var rows = [["turn", "passes", "allocs", "frees", "bytes", "freed", "net", "peak", "pool pages", "top at peak"]]
        for turn in turns {
            let top = turn.peakSnapshot.first.map { "\($0.site) (\($0.bytes) B)" } ?? ""
            rows.append([String(turn.number), "\(turn.passes.lowerBound)–\(turn.passes.upperBound)",
                         String(turn.user.allocations), String(turn.user.frees), String(turn.user.bytes),
                         String(turn.user.freedBytes), String(turn.user.net), String(turn.user.peak),
                         String(turn.poolPages.net), top])
        }
        return render(rows)
    }

    /// Left-aligned first column, right-aligned numbers, two spaces between columns.
    static func render(_ rows: [[String]]) -> String {
        guard let columns = rows.first?.count else { return "" }
        var widths = [Int](repeating: 0, count: columns)
        for row in rows { for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) } }
        return rows.map { row in
            row.enumerated().map { index, cell in
                let padding = String(repeating: " ", count: widths[index] - cell.count)
                // Text left, numbers (and number ranges) right.
                return index == 0 || (Int(cell) == nil && cell.first?.isNumber != true) ? cell + padding : padding + cell
            }.joined(separator: "  ")
        }.joined(separator: "\n") + "\n"
    }
}
