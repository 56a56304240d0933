#!/usr/bin/env python3
"""Merges the tables that several processes of one paired tool printed (run-paired-tool.sh with
--processes) into one table of the same shape.

    Scripts/merge-paired-tables.py TABLE-FILE...

Each cell that reads "median× (q1–q3)" becomes the median over the processes of their medians,
with the lowest and highest process median in parentheses: a process whose layout or moment
read apart from the others shows in the range, and cannot move the median alone. A "K of N"
cell (rounds kept of rounds run) becomes the sums; any other number the median; text the first
process's. The first header cell says how many processes and what the ratio cells mean. Every
table must have the same header and rows in the same order."""

import importlib.util
import os
import re
import statistics
import sys

# The table format (cells, ratio cells) is ratios.py's, which reads these tables back.
_spec = importlib.util.spec_from_file_location("ratios", os.path.join(os.path.dirname(os.path.abspath(__file__)), "ratios.py"))
ratios = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ratios)
cells = ratios.table_cells

KEPT = re.compile(r"([0-9]+) of ([0-9]+)")
NUMBER = re.compile(r"-?[0-9]+(\.[0-9]+)?")


def table_lines(path):
    """The markdown table's lines of one process's output (header, separator, rows)."""
    with open(path, encoding="utf-8") as handle:
        return [line.rstrip("\n") for line in handle if line.startswith("|")]


def merged_cell(values):
    matches = [ratios.RATIO_CELL.fullmatch(value) for value in values]
    if all(matches):
        medians = [float(match[1]) for match in matches]
        return f"{statistics.median(medians):.3f}× ({min(medians):.3f}–{max(medians):.3f})"
    kept = [KEPT.fullmatch(value) for value in values]
    if all(kept):
        return f"{sum(int(match[1]) for match in kept)} of {sum(int(match[2]) for match in kept)}"
    if all(NUMBER.fullmatch(value) for value in values):
        digits = max(len(value.split(".")[1]) if "." in value else 0 for value in values)
        return f"{statistics.median(float(value) for value in values):.{digits}f}"
    return values[0]


def main(paths):
    tables = [table_lines(path) for path in paths]
    if not tables or any(len(table) < 3 for table in tables):
        sys.exit("merge-paired-tables: every file must hold a table (header, separator, rows)")
    first = tables[0]
    for path, table in zip(paths, tables):
        if len(table) != len(first) or table[0] != first[0] or [cells(row)[0] for row in table] != [cells(row)[0] for row in first]:
            sys.exit(f"merge-paired-tables: {path}'s table has other columns or rows than {paths[0]}'s")
    header = cells(first[0])
    header[0] += f" ({len(tables)} processes: each ratio the median of their medians, lowest–highest)"
    print("| " + " | ".join(header) + " |")
    print(first[1])
    for index in range(2, len(first)):
        columns = zip(*(cells(table[index]) for table in tables))
        print("| " + " | ".join(merged_cell(list(values)) for values in columns) + " |")


if __name__ == "__main__":
    main(sys.argv[1:])
