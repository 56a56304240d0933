#!/usr/bin/env python3
"""Replaces a generated block of Docs/Benchmarks.md, the text between
<!-- NAME --docs: begin --> and <!-- NAME --docs: end -->, with the contents of a file.

    python3 Scripts/replace-docs-block.py NAME BLOCK_FILE     (run from Benchmarks/)

NAME is the script that owns the block (run-all.sh, run-main-loop.sh, ...)."""
import sys

name, block_path = sys.argv[1], sys.argv[2]
path = "../Docs/Benchmarks.md"
begin, end = f"<!-- {name} --docs: begin -->", f"<!-- {name} --docs: end -->"
text = open(path, encoding="utf-8").read()
if begin not in text or end not in text:
    sys.exit(f"Docs/Benchmarks.md lacks the markers {begin} / {end}")
block = open(block_path, encoding="utf-8").read().rstrip("\n")
head, rest = text.split(begin, 1)
_, tail = rest.split(end, 1)
open(path, "w", encoding="utf-8").write(head + begin + "\n" + block + "\n" + end + tail)
print("Docs/Benchmarks.md updated")
