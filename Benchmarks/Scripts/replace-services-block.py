#!/usr/bin/env python3
"""Replaces one generated block of Docs/Services.md with the files given, one after the other.

    replace-services-block.py NAME FILE [FILE ...]

The block sits between the markers `<!-- NAME --docs: begin -->` and `<!-- NAME --docs: end -->`
(NAME is the script that owns it, e.g. run-hostile.sh). Exits 1, changing nothing, when the
markers are missing. (Docs/Benchmarks.md's blocks: replace-docs-block.py.)
"""
import os
import sys

DOC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Docs", "Services.md")


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    name = sys.argv[1]
    begin, end = f"<!-- {name} --docs: begin -->", f"<!-- {name} --docs: end -->"
    text = open(DOC, encoding="utf-8").read()
    if begin not in text or end not in text:
        sys.exit(f"Docs/Services.md lacks the markers {begin} / {end}")
    # A blank line between the files: a table right after a list would become part of the list.
    block = "\n\n".join(open(path, encoding="utf-8").read().strip("\n") for path in sys.argv[2:])
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    open(DOC, "w", encoding="utf-8").write(f"{head}{begin}\n{block}\n{end}{tail}")
    print(f"Docs/Services.md: {name} block updated")


if __name__ == "__main__":
    main()
