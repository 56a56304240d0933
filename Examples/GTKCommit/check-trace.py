#!/usr/bin/env python3
"""Checks gtk-commit's trace (run-under-xvfb.sh): the click's layout → display → commit ran at
one BeforeWaiting (a GLib sleep), the commit is the only change of the label, and the paint that
shows the committed text comes after that commit. Exit status 1 with the reason otherwise."""
import re
import sys

lines = [line.rstrip("\n") for line in open(sys.argv[1], encoding="utf-8")]


def fail(reason):
    print(f"check-trace: {reason}", file=sys.stderr)
    sys.exit(1)


def index(pattern, start=0):
    for number in range(start, len(lines)):
        if re.fullmatch(pattern, lines[number]):
            return number
    fail(f"no line matching {pattern!r} after line {start + 1}")


click = index(r"click 1")
job = index(r"@MainActor job 1", click)
commit = index(r'commit \d+ at beforeWaiting: "clicked 1 \(committed\)"', job)
# The commit's BeforeWaiting: the last sleep line before it, with no wake in between.
sleep = max(n for n in range(commit) if lines[n].startswith("sleep "))
if any(lines[n].startswith("wake ") for n in range(sleep, commit)):
    fail("the commit did not run inside a BeforeWaiting")
phases = [lines[n] for n in range(sleep + 1, commit)]
if phases != ["layout label", "display label"]:
    fail(f"the commit's phases were {phases}, expected layout then display")
paint = index(r'paint "clicked 1 \(committed\)"', commit)
earlier = [n for n in range(commit) if lines[n] == 'paint "clicked 1 (committed)"']
if earlier:
    fail("the committed text was painted before the commit")
commits_per_sleep = {}
current = None
for line in lines:
    if line.startswith("sleep "):
        current = line
    elif line.startswith("commit "):
        commits_per_sleep[current] = commits_per_sleep.get(current, 0) + 1
if any(count > 1 for count in commits_per_sleep.values()):
    fail(f"more than one commit in one sleep: {commits_per_sleep}")
print(f"check-trace: click (line {click + 1}) → @MainActor job ({job + 1}) → {lines[sleep]} → layout, display, "
      f"commit ({commit + 1}) → paint of the committed text ({paint + 1}): ok")
