#!/usr/bin/env python3
"""Print the event catalogue as Markdown: every event type (and op) the server sends, the
constructor in chat_appliance/lib/event_catalogue.py that builds it, and what it tells clients.

docs/architecture.md and the web client's dispatcher list the same catalogue; paste or compare
this output rather than keeping a list by hand.
"""

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from chat_appliance.lib.event_catalogue import catalogue  # noqa: E402 - after the path is set


def markdown(rows):
    """The catalogue as a Markdown table, in catalogue order (grouped by type)."""
    lines = ["| type | op | constructor | tells clients |", "|---|---|---|---|"]
    for event_type, op, name, doc in rows:
        op_cell = f" `{op}` " if op is not None else " "
        text = doc.replace("|", "\\|")
        lines.append(f"| `{event_type}` |{op_cell}| `{name}` | {text} |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.parse_args(argv)
    rows = catalogue()
    print(f"{len({row[0] for row in rows})} event types, {len({row[2] for row in rows})} constructors.\n")
    print(markdown(rows))


if __name__ == "__main__":
    main()
