"""Reading an export's README.txt in tests: per table, the lines saying what it rests on."""

from __future__ import annotations


def about_tables(readme: str) -> dict[str, list[str]]:
    """README.txt's "Tables" section as {table name: [unit, method, policy lines...]}."""
    out: dict[str, list[str]] = {}
    current = None
    for line in readme.splitlines():
        if line.endswith(".csv") and not line.startswith(" "):
            current = line[:-4]
            out[current] = []
        elif current is not None and line.startswith("  "):
            out[current].append(line.strip())
        else:
            current = None
    return out
