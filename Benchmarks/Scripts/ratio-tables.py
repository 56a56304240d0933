#!/usr/bin/env python3
"""Turns package-benchmark markdown output into the ratio tables of Docs/Benchmarks.md.

Input: the output of
    swift package benchmark --format markdown --scale --time-units nanoseconds
(`--scale` makes package-benchmark print each sample's raw totals, i.e. per 1,000 operations
for the benchmarks with `scalingFactor: .kilo`; this script divides by the operations per
sample, so sub-nanosecond differences and single mallocs per 1,000 operations stay visible).

Usage: ratio-tables.py RESULTS.md [MORE.md ...] > tables.md
"""
import re
import sys

PAIRS = {
    "Loop (RunLoopKit `Loop` vs the real CFRunLoop, same process, same run)": [
        # (ours, peer, operations per sample, target ratio or None, target note)
        ("polling pass + 1 block, 0 observers · Loop", "polling pass + 1 block, 0 observers · CFRunLoop", 1000, 0.10, "≤ 0.1× CF, 0 mallocs"),
        ("polling pass + 1 block, 2 observers · Loop", "polling pass + 1 block, 2 observers · CFRunLoop", 1000, 0.10, "≤ 0.1× CF, 0 mallocs"),
        ("polling pass + 1 block, 8 observers · Loop", "polling pass + 1 block, 8 observers · CFRunLoop", 1000, 0.10, "≤ 0.1× CF, 0 mallocs"),
        ("source0 signal → perform · Loop", "source0 signal → perform · CFRunLoop", 1000, None, "(no target)"),
        ("due timer fires · Loop", "due timer fires · CFRunLoop", 1000, None, "(no target)"),
        ("cross-thread round trip, both on CPU 0 · Loop", "cross-thread round trip, both on CPU 0 · eventfd ping-pong via epoll (floor)", 1000, 1.15, "≤ 1.15× raw floor"),
        ("cross-thread round trip, both on CPU 0 · CFRunLoop", "cross-thread round trip, both on CPU 0 · eventfd ping-pong via epoll (floor)", 1000, None, "(CF for reference)"),
    ],
    "Autorelease pool (vs a naive `[AnyObject]` pool: append + removeAll)": [
        ("Autorelease: owned reference, autorelease(consuming:)", "Naive pool: owned reference, append", 1000, None, "≤ 3.5 ns/op"),
        ("Autorelease: owned reference, autorelease(consuming:), coalescing off", "Naive pool: owned reference, append", 1000, None, "(diagnostic: no LRU scan)"),
        ("Autorelease: borrowed reference, autorelease(_:) (retains)", "Naive pool: same object 1000x", 1000, None, "(no target)"),
        ("Autorelease: empty push + pop", "Naive pool: empty push + pop", 1000, None, "≤ 12 ns/op"),
        ("Autorelease: new object, autorelease + pop (dealloc)", "Naive pool: new object, append + removeAll (dealloc)", 1000, None, "(no target)"),
        ("Autorelease: 1000 new objects, then one pop (dealloc)", "Naive pool: 1000 new objects, then removeAll (dealloc)", 1000, None, "(no target)"),
        ("Autorelease: same object 1000x (coalesced, LRU)", "Naive pool: same object 1000x", 1000, None, "(no target)"),
    ],
    "Transactions (vs naive \"lay out and display everything every turn\")": [
        ("Transactions mark: setNeedsLayout, first mark of a clean layer", "Naive mark baseline: set a Bool", 1000, None, "(no target)"),
        ("Transactions mark: setNeedsLayout, coalesced (already dirty)", "Naive mark baseline: set a Bool", 1000, None, "(no target)"),
        ("Transactions commit: 16 dirty of 4096 layers, depth 8 (per commit)", "Naive commit baseline: lay out + display all 4096 layers, depth 8 (per turn)", 1, None, "≤ 50 ns/layer, linear"),
        ("Transactions commit: 256 dirty of 4096 layers, depth 8 (per commit)", "Naive commit baseline: lay out + display all 4096 layers, depth 8 (per turn)", 1, None, "≤ 50 ns/layer, linear"),
        ("Transactions commit: 4096 dirty of 4096 layers, depth 8 (per commit)", "Naive commit baseline: lay out + display all 4096 layers, depth 8 (per turn)", 1, None, "≤ 50 ns/layer, linear"),
        ("Transactions idle: commitIfNeeded with nothing dirty", "Naive idle baseline: lay out + display a 64-layer tree every turn", 1000, None, "≤ 20 ns, 0 mallocs"),
    ],
}

ROW = re.compile(r"^\|\s*(Malloc \(total\)|Time \(wall clock\) \((\w+)\))\s*\|(.*)\|\s*$")
UNIT_NS = {"ns": 1, "μs": 1_000, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000}


def parse(paths):
    results, name = {}, None
    for path in paths:
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("### "):
                    name = line[4:].strip()
                    results.setdefault(name, {})
                    continue
                match = ROW.match(line)
                if not match or name is None:
                    continue
                cells = [float(c.strip()) for c in match.group(3).split("|")]
                p50, samples = cells[2], cells[7]
                if match.group(1).startswith("Malloc"):
                    results[name]["mallocs"] = (p50, cells[6], samples)  # p50, p100
                else:
                    results[name]["ns"] = (p50 * UNIT_NS[match.group(2)], samples)
    return results


def fmt(value):
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def main():
    results = parse(sys.argv[1:])
    for title, pairs in PAIRS.items():
        rows = [(o, p, n, t, note) for (o, p, n, t, note) in pairs if o in results]
        if not rows:
            continue
        print(f"### {title}\n")
        print("| benchmark | ours p50 ns/op | ours mallocs/op (p50, max) | peer | peer p50 ns/op | peer mallocs/op | ratio ours/peer | target | met |")
        print("|---|---:|---:|---|---:|---:|---:|---|---|")
        for ours, peer, per_sample, target, note in rows:
            o, p = results[ours], results.get(peer, {})
            o_ns = o["ns"][0] / per_sample
            o_m = o["mallocs"][0] / per_sample
            o_mmax = o["mallocs"][1] / per_sample
            # Every peer runs 1,000 operations per sample except the naive commit (one turn).
            p_div = 1 if "(per turn)" in peer else 1000
            p_ns = p["ns"][0] / p_div if "ns" in p else None
            p_m = p["mallocs"][0] / p_div if "mallocs" in p else float("nan")
            ratio = o_ns / p_ns if p_ns else float("nan")
            label = ours.split(" · ")[0] if " · " in ours else ours
            peer_label = peer.split(" · ")[-1] if " · " in peer else peer
            met = ""
            if target is not None:
                met = "yes" if ratio <= target else f"**no** ({ratio / target:.1f}× over)"
                if "0 mallocs" in note and o["mallocs"][1] != 0:
                    met += "; mallocs **no**"
            elif "ns/op" in note:
                limit = float(re.search(r"([\d.]+) ns/op", note).group(1))
                met = "yes" if o_ns <= limit else f"**no** ({o_ns / limit:.1f}× over)"
            elif "ns/layer" in note:
                layers = int(re.search(r"commit: (\d+) dirty", ours).group(1))
                per_layer = o_ns / layers
                met = f"{per_layer:.0f} ns/layer: " + ("yes" if per_layer <= 50 else f"**no** ({per_layer / 50:.1f}× over)")
            elif "≤ 20 ns" in note:
                met = "yes" if o_ns <= 20 and o["mallocs"][1] == 0 else "**no**"
            print(f"| {label} | {fmt(o_ns)} | {o_m:g} ({o_mmax:g}) | {peer_label} | {fmt(p_ns)} | {p_m:g} | {ratio:.3g}× | {note} | {met} |")
        print()


if __name__ == "__main__":
    main()
