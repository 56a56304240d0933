#!/usr/bin/env python3
"""Ratios of RunLoopKit's benchmarks against the peers measured in the same run.

Input: the output of
    swift package benchmark --format markdown --scale --time-units nanoseconds
(`--scale` makes package-benchmark 1.38 print each sample's raw totals; this script divides by
the operations per sample: 1 for works named "(per commit)", else 1,000).

Benchmark names read "<work> · <implementation>". The implementations named in OURS are
RunLoopKit's; every other implementation of the same work is a peer, and each (work, peer)
pair gets one row: ours ÷ peer of the p50 wall-clock time per operation, so below 1 is faster
than the peer. With rounds in both orders (run-all.sh: ours first, then peers first), the row's
ratio and times are those of the worse order, and both orders' ratios are listed. thresholds.json (beside Scripts/) gives the most a ratio may be, and the most
mallocs per operation ours may make; `check` gates on it.

Usage:
    ratios.py RESULTS.md [--json OUT.json]     markdown tables on stdout, ratios as JSON
"""
import json
import os
import re
import statistics
import sys

OURS = {"Loop": "Loop (RunLoopCore)", "Autorelease": "Autorelease pool", "Transactions": "Transactions",
        # a reference row: how a peer that shares nothing between threads scales on this machine
        "libuv beside a busy libuv loop": "libuv scaling reference",
        "libuv beside 10,000 idle fds": "libuv scaling reference",
        "hand-written dirty list on 65536 nodes": "dirty list linearity reference"}
# Peers in the order the tables list them; others follow by name.
PEER_ORDER = ["eventfd ping-pong via epoll (floor)", "CFRunLoop", "Foundation RunLoop", "libuv", "GLib", "SwiftNIO", "Dispatch serial queue",
              "naive Swift pool", "GNUstep NSAutoreleasePool", "hand-written dirty list", "hand-written dirty list flush"]
THRESHOLDS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "thresholds.json")

ROW = re.compile(r"^\|\s*(Malloc \(total\)|Time \(wall clock\) \((\w+)\))\s*\|(.*)\|\s*$")
UNIT_NS = {"ns": 1, "μs": 1_000, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000}


ORDER_MARK = re.compile(r"^<!-- order: (ours-first|peers-first) -->\s*$")
RANK = re.compile(r" · [12]:")
ORDERS = ("ours-first", "peers-first")


def summarise(measured):
    """{"ns", "rounds", "mallocs"} of one benchmark's rounds: the median of their p50 times and
    mallocs, and the largest p100 of mallocs."""
    summary = {}
    if measured["ns"]:
        summary["ns"] = statistics.median(measured["ns"])
        summary["rounds"] = len(measured["ns"])
    if measured["mallocs"]:
        summary["mallocs"] = (statistics.median(m[0] for m in measured["mallocs"]),
                              max(m[1] for m in measured["mallocs"]))
    return summary


def parse(paths):
    """Benchmark name -> {"ns": p50 per sample, "mallocs": (p50, p100) per sample, "orders":
    {order: the same for the rounds of that order}}.

    A benchmark measured in several rounds (run-all.sh --rounds N appends each round's output)
    gets the median of its rounds' p50 times and mallocs, and the largest p100 of mallocs, so
    one round that fell in a slow period of the host does not decide its ratio. run-all.sh marks
    each round with its order ("<!-- order: ours-first -->") and the benchmarks carry a rank
    ("<work> · 1:<implementation>", Support/BenchOrder), which is stripped here; rounds without
    a mark count as the order "unordered"."""
    rounds, name, order = {}, None, "unordered"
    for path in paths:
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                mark = ORDER_MARK.match(line)
                if mark:
                    order = mark.group(1)
                    continue
                if line.startswith("### "):
                    name = RANK.sub(" · ", line[4:].strip(), count=1)
                    rounds.setdefault(name, {}).setdefault(order, {"ns": [], "mallocs": []})
                    continue
                match = ROW.match(line)
                if not match or name is None:
                    continue
                cells = [float(c.strip()) for c in match.group(3).split("|")]
                if match.group(1).startswith("Malloc"):
                    rounds[name][order]["mallocs"].append((cells[2], cells[6]))
                else:
                    rounds[name][order]["ns"].append(cells[2] * UNIT_NS[match.group(2)])
    results = {}
    for name, by_order in rounds.items():
        merged = {"ns": [v for m in by_order.values() for v in m["ns"]],
                  "mallocs": [v for m in by_order.values() for v in m["mallocs"]]}
        results[name] = summarise(merged)
        results[name]["orders"] = {order: summarise(m) for order, m in by_order.items() if m["ns"]}
    return results


def per_sample(work):
    """Operations per sample: 1 for "(per commit)", N for "(per N layers)" or "(per N nodes)", else 1,000."""
    if "(per commit)" in work:
        return 1
    match = re.search(r"\(per (\d+) (?:layers|nodes)\)", work)
    return int(match.group(1)) if match else 1000


def ratios(results):
    """One entry per (work, peer): {work, ours, peer, ours_ns, peer_ns, ratio, mallocs...}."""
    works = {}
    for name, values in results.items():
        if " · " not in name or "ns" not in values:
            continue
        work, impl = name.rsplit(" · ", 1)
        works.setdefault(work, {})[impl] = values
    rows = []
    for work, impls in sorted(works.items(), key=lambda item: list(results).index(next(
            f"{item[0]} · {impl}" for impl in item[1]))):
        ours = [impl for impl in impls if impl in OURS]
        if len(ours) != 1:
            continue
        ours = ours[0]
        ops = per_sample(work)
        o = impls[ours]
        order = lambda peer: (PEER_ORDER.index(peer) if peer in PEER_ORDER else len(PEER_ORDER), peer)
        for peer, p in sorted(impls.items(), key=lambda item: order(item[0])):
            if peer == ours:
                continue
            # One ratio per order both sides were measured in; the worse one is the row's.
            by_order = {}
            for run_order, oo in o.get("orders", {}).items():
                po = p.get("orders", {}).get(run_order)
                if po and "ns" in oo and "ns" in po:
                    by_order[run_order] = (oo["ns"], po["ns"])
            if not by_order:
                by_order["unordered"] = (o["ns"], p["ns"])
            ratio_of = lambda pair: pair[0] / pair[1] if pair[1] else float("inf")
            worse = max(by_order, key=lambda k: ratio_of(by_order[k]))
            ours_ns, peer_ns = by_order[worse]
            rows.append({
                "key": f"{work} · {peer}",
                "group": OURS[ours],
                "work": work,
                "ours": ours,
                "peer": peer,
                "ours_ns": ours_ns / ops,
                "peer_ns": peer_ns / ops,
                "ratio": ratio_of(by_order[worse]),
                "orders": {k: ratio_of(v) for k, v in by_order.items()},
                "worse_order": worse,
                "ours_mallocs": o.get("mallocs", (float("nan"),) * 2)[0] / ops,
                "ours_mallocs_max": o.get("mallocs", (float("nan"),) * 2)[1] / ops,
                "peer_mallocs": p.get("mallocs", (float("nan"),) * 2)[0] / ops,
            })
    return rows


def load_thresholds(path=THRESHOLDS):
    if not os.path.exists(path):
        return {"ratios": {}, "mallocs": {}, "paired_cells": {}, "readings": {}}
    with open(path, encoding="utf-8") as handle:
        data = json.load(handle)
    return {"ratios": data.get("ratios", {}), "mallocs": data.get("mallocs", {}),
            "paired_cells": data.get("paired_cells", {}), "readings": data.get("readings", {})}


def gated_value(row, limit, rows_by_key):
    """The value a threshold limits: the row's ratio, or, for a threshold with "relative_to",
    the row's ratio divided by that reference row's ratio in the same run (None when the
    reference was not measured)."""
    reference_key = limit.get("relative_to")
    if reference_key is None:
        return row["ratio"]
    reference = (rows_by_key or {}).get(reference_key)
    return None if reference is None else row["ratio"] / reference["ratio"]


# A paired tool's ratio cell: "median× (q1–q3)" (or, merged over processes, "median× (low–high)").
RATIO_CELL = re.compile(r"([0-9.]+)× \(([^)]*)\)")


def table_cells(line):
    """The trimmed cells of one markdown table line."""
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


PAIRED_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".build-results", "paired")


def paired_table_rows(directory=PAIRED_DIR):
    """(tool, header cells, row cells) for every body row of the tables the paired tools of the
    last run-all.sh saved (run-paired-tool.sh writes each tool's table as TOOL.md)."""
    if not os.path.isdir(directory):
        return
    for name in sorted(os.listdir(directory)):
        if not name.endswith(".md"):
            continue
        header, previous = None, None
        with open(os.path.join(directory, name), encoding="utf-8") as handle:
            for line in handle:
                if not line.startswith("|"):
                    header, previous = None, None
                    continue
                cells = table_cells(line)
                if all(re.fullmatch(r":?-+:?", cell) for cell in cells):
                    header = previous
                elif header is not None:
                    yield name[:-3], header, cells
                previous = cells


def load_paired(directory=PAIRED_DIR):
    """The paired tools' readings: {(tool, row name): (median, quartiles)}, from the tables whose
    second-to-last column is the paired median and last the 25th–75th percentiles."""
    readings = {}
    for tool, _, cells in paired_table_rows(directory):
        if len(cells) >= 3 and re.fullmatch(r"[0-9.]+×", cells[-2]):
            readings[(tool, cells[0])] = (float(cells[-2][:-1]), cells[-1])
    return readings


READINGS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".build-results", "readings")


def load_readings(directory=READINGS_DIR):
    """The service tools' saved readings (save-readings.py): {tool: record}, each record with its
    "readings" ({name: number}), "date", "load" and "setting"."""
    records = {}
    if os.path.isdir(directory):
        for name in sorted(os.listdir(directory)):
            if name.endswith(".json"):
                with open(os.path.join(directory, name), encoding="utf-8") as handle:
                    record = json.load(handle)
                records[record["tool"]] = record
    return records


def load_paired_cells(directory=PAIRED_DIR):
    """Every cell of the paired tools' tables that reads "median× (q1–q3)", by its row and column:
    {(tool, row name, column header): (median, quartiles)}. For tables with several ratio
    columns, such as allocation-overhead's one per counter mode."""
    readings = {}
    for tool, header, cells in paired_table_rows(directory):
        for column, cell in zip(header, cells):
            match = RATIO_CELL.fullmatch(cell)
            if match:
                readings[(tool, cells[0], column)] = (float(match[1]), match[2])
    return readings


def ratio_verdict(row, thresholds, rows_by_key=None):
    """(met: True/False, or None without a threshold; note) for a row's ratio."""
    limit = thresholds["ratios"].get(row["key"])
    if limit is None:
        return None, ""
    value = gated_value(row, limit, rows_by_key)
    if value is None:
        return False, f"≤ {limit['max']:g}× of its reference: **no** (reference not measured: {limit['relative_to']})"
    ok = value <= limit["max"]
    prefix = f"÷ reference's {row['ratio'] / value:.3g}× = {value:.3g}×, " if "relative_to" in limit else ""
    if "paired" in limit:
        # Scripts/check judges it by the paired tool's reading, which comes later in the run.
        prefix = f"judged by {limit['paired']['tool']} (paired); here "
    return ok, prefix + f"≤ {limit['max']:g}×: " + ("yes" if ok else f"**no** ({value / limit['max']:.2f}× over)")


def malloc_verdict(row, thresholds):
    """(met, note) for the mallocs per operation of ours in a row's work."""
    limit = thresholds["mallocs"].get(f"{row['work']} · {row['ours']}")
    if limit is None:
        return None, ""
    ok = row["ours_mallocs_max"] <= limit["max_per_op"]
    return ok, f"ours ≤ {limit['max_per_op']:g} mallocs/op: " + ("yes" if ok else "**no**")


def fmt(value):
    if value != value:
        return "–"
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def orders_text(row):
    """Both orders' ratios, "0.51× / 0.53×", or "–" for a run in one order only."""
    orders = row.get("orders", {})
    if not all(order in orders for order in ORDERS):
        return "–"
    return " / ".join(f"{orders[order]:.3g}×" for order in ORDERS)


def fmt_count(value):
    return "–" if value != value else f"{value:g}"


def table(rows, thresholds):
    rows_by_key = {r["key"]: r for r in rows}
    lines = []
    for group in dict.fromkeys(r["group"] for r in rows):
        lines.append(f"### {group}\n")
        lines.append("| work | ours ns/op | ours mallocs/op (p50, max) | peer | peer ns/op | peer mallocs/op | ours ÷ peer, worse order | ours first / peers first | gate (thresholds.json) |")
        lines.append("|---|---:|---:|---|---:|---:|---:|---:|---|")
        last_work = None
        for row in (r for r in rows if r["group"] == group):
            first = row["work"] != last_work
            last_work = row["work"]
            notes = [ratio_verdict(row, thresholds, rows_by_key)[1]] + ([malloc_verdict(row, thresholds)[1]] if first else [])
            note = "; ".join(n for n in notes if n)
            ours_cells = (f"{row['work']} | {fmt(row['ours_ns'])} | {fmt_count(row['ours_mallocs'])} ({fmt_count(row['ours_mallocs_max'])})"
                          if first else " | | ")
            lines.append(f"| {ours_cells} | {row['peer']} | {fmt(row['peer_ns'])} | {fmt_count(row['peer_mallocs'])} | "
                         f"{row['ratio']:.3g}× | {orders_text(row)} | {note} |")
        lines.append("")
    return "\n".join(lines)


def main(argv):
    json_out = None
    if "--json" in argv:
        index = argv.index("--json")
        json_out = argv[index + 1]
        del argv[index:index + 2]
    if not argv:
        sys.exit(__doc__)
    rows = ratios(parse(argv))
    thresholds = load_thresholds()
    print(table(rows, thresholds))
    if json_out:
        with open(json_out, "w", encoding="utf-8") as handle:
            json.dump({r["key"]: r for r in rows},
                      handle, indent=1, ensure_ascii=False)


if __name__ == "__main__":
    main(sys.argv[1:])
