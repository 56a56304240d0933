#!/usr/bin/env python3
"""Saves one tool's target readings for Scripts/check, which gates them and puts them in the table
of targets that opens Docs/Benchmarks.md.

    save-readings.py TOOL "SETTING" NAME=VALUE [NAME=VALUE ...]

Writes Benchmarks/.build-results/readings/TOOL.json: the readings (numbers), the run's date, the
1-minute load, and SETTING (what the run did, e.g. "19,000 connections, 190 active, 5 s"). Each
run of the tool replaces its file, so a reading is always the tool's latest run; unlike the paired
tools' tables, these survive a run-all.sh, because the service runs take minutes and are not part
of it (run-all.sh --services runs them). Exits 2 on a malformed NAME=VALUE.
"""
import datetime
import json
import os
import sys

DIRECTORY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".build-results", "readings")


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    tool, setting, pairs = argv[0], argv[1], argv[2:]
    readings = {}
    for pair in pairs:
        name, separator, value = pair.rpartition("=")
        try:
            readings[name] = float(value)
        except ValueError:
            separator = ""
        if not separator or not name:
            print(f"save-readings.py: not NAME=NUMBER: {pair!r}", file=sys.stderr)
            return 2
    with open("/proc/loadavg", encoding="utf-8") as handle:
        load = handle.read().split()[0]
    record = {"tool": tool, "setting": setting, "readings": readings, "load": load,
              "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}
    os.makedirs(DIRECTORY, exist_ok=True)
    with open(os.path.join(DIRECTORY, f"{tool}.json"), "w", encoding="utf-8") as handle:
        json.dump(record, handle, indent=1, ensure_ascii=False)
        handle.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
