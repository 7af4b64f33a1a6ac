#!/usr/bin/env python3
"""Writes the table of latest figures in Benchmarks/README.md from Benchmarks/results/.

Each results file carries its own rows for the table, one a line, as

    table: SCENARIO | FIGURE | RATIO | GOAL | MET | COMMAND

(SCENARIO a number or "-", COMMAND the command that reproduces the row). The table lists them by
scenario number ("-" last), then by file name, then in the file's order, and adds the results file
in its last column. It replaces what lies between the two marker lines in the README.

    python3 scripts/bench-table.py           # rewrite the README's table
    python3 scripts/bench-table.py --check   # exit 1 if the README's table is not what the files give
                                             # (scripts/check-repo.sh runs this)
"""
import glob
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
README = os.path.join(ROOT, "Benchmarks", "README.md")
BEGIN = "<!-- table: made by scripts/bench-table.py from the `table:` lines of results/*.txt; do not edit by hand -->"
END = "<!-- end of table -->"


def table():
    rows = []
    for path in sorted(glob.glob(os.path.join(ROOT, "Benchmarks", "results", "*.txt"))):
        with open(path, encoding="utf-8") as f:
            for index, line in enumerate(f):
                if line.startswith("table: "):
                    cells = [c.strip() for c in line[len("table: "):].split(" | ")]
                    if len(cells) != 6 or not cells[5]:
                        sys.exit(f"bench-table.py: {os.path.relpath(path, ROOT)}:{index + 1}: a row needs 6 cells, the last a command")
                    order = int(cells[0]) if cells[0].isdigit() else 99
                    rows.append((order, os.path.basename(path), index, cells))
    lines = ["| # | figure | ratio | goal | met | command | results file |", "|---|---|---|---|---|---|---|"]
    previous = None
    for _, name, _, cells in sorted(rows):
        link = "same" if name == previous else f"[{name[:-4]}](results/{name})"
        previous = name
        lines.append("| " + " | ".join(cells[:5] + [f"`{cells[5]}`", link]) + " |")
    return lines


def main():
    with open(README, encoding="utf-8") as f:
        text = f.read().split("\n")
    if BEGIN not in text or END not in text:
        sys.exit(f"bench-table.py: {README} lacks the marker lines:\n{BEGIN}\n{END}")
    start, end = text.index(BEGIN) + 1, text.index(END)
    made = table()
    if "--check" in sys.argv[1:]:
        if text[start:end] != made:
            sys.exit("bench-table.py: the table in Benchmarks/README.md is not what results/ gives: run python3 scripts/bench-table.py")
        print(f"bench-table.py: the README's table matches results/ ({len(made) - 2} rows)")
        return
    with open(README, "w", encoding="utf-8") as f:
        f.write("\n".join(text[:start] + made + text[end:]))


if __name__ == "__main__":
    main()
