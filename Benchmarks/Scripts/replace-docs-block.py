#!/usr/bin/env python3
"""Replaces one generated block of Docs/Benchmarks.md with a file, or with standard input.

    replace-docs-block.py NAME [BLOCK_FILE]      (BLOCK_FILE absent: standard input)

The block sits between the markers `<!-- NAME --docs: begin -->` and `<!-- NAME --docs: end -->`
(NAME is the script that owns it, e.g. run-main-loop.sh). Exits 1, changing nothing, when the
markers are missing.
"""
import os
import sys

DOC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Docs", "Benchmarks.md")


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    name = sys.argv[1]
    begin, end = f"<!-- {name} --docs: begin -->", f"<!-- {name} --docs: end -->"
    text = open(DOC, encoding="utf-8").read()
    if begin not in text or end not in text:
        sys.exit(f"Docs/Benchmarks.md lacks the markers {begin} / {end}")
    source = open(sys.argv[2], encoding="utf-8") if len(sys.argv) == 3 else sys.stdin
    block = source.read().strip("\n")
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    open(DOC, "w", encoding="utf-8").write(f"{head}{begin}\n{block}\n{end}{tail}")
    print(f"Docs/Benchmarks.md: {name} block updated")


main()
