#!/usr/bin/env python3
"""Write the generated documents: docs/configuration.md (from chat_appliance/config.py's SETTINGS)
and docs/api-coverage.md (from the app's routes and ../shared/spec, by scripts/api_coverage.py).

    python scripts/gen_docs.py           # rewrite both
    python scripts/gen_docs.py --check   # exit 1 naming each file that differs from what is generated

tests/structure/test_docs_generated.py regenerates both and fails when a file differs.
"""

import argparse
import importlib.util
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONFIGURATION = ROOT / "docs" / "configuration.md"

CONFIGURATION_INTRO = """\
# Configuration

Generated from `chat_appliance/config.py` (`SETTINGS`) by `python scripts/gen_docs.py`;
tests/structure/test_docs_generated.py fails when this file differs from what it generates. To add a key,
add a `Setting` there and run the script.

An instance folder holds `chat.sqlite3`, an optional `config.json` and `secret_key` (made on first
start; it signs temporary upload URLs, so they survive a restart). Each key below is taken from,
the later winning: its default, the instance's `config.json` (for example
`{"DATABASE_URL": "postgresql://user@host/db", "MAX_STREAM_NAME_LENGTH": 40}`), the environment
variable `CHAT_APPLIANCE_<KEY>`, then a command-line option (`--instance`; `serve --quiet` sets
`LOG_REQUESTS`; `serve --shard-id` sets `SHARD_ID`).

Environment values are JSON, so `CHAT_APPLIANCE_LOG_REQUESTS=false`,
`CHAT_APPLIANCE_MAX_TOPIC_LENGTH=25` and `CHAT_APPLIANCE_TRUSTED_PROXIES='["10.0.0.1"]'` work; the
keys marked "string" below are taken as written. A value that is not JSON stops the command with an
error naming the variable. `CHAT_APPLIANCE_INSTANCE` names the instance folder itself. The limits
`/register` reports (`max_message_length`, `max_stream_name_length`, ...) are the ones the server
enforces.
"""


def load_module(name, path):
    """A module loaded from a file path (scripts/ is no package)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def configuration_md():
    """docs/configuration.md, as Markdown: one row per key of config.SETTINGS, in their order."""
    sys.path.insert(0, str(ROOT))
    from chat_appliance import config

    rows = ["| key | default | environment | what it does |", "|---|---|---|---|"]
    for setting in config.SETTINGS:
        if setting.name in config.NOT_FROM_ENV:
            environment = "not read"
        elif setting.name in config.STRING_KEYS:
            environment = "string"
        else:
            environment = "JSON"
        default = "unset" if setting.default is None else f"`{json.dumps(setting.default)}`"
        doc = setting.doc.replace("|", "\\|")
        rows.append(f"| `{setting.name}` | {default} | {environment} | {doc} |")
    return CONFIGURATION_INTRO + "\n" + "\n".join(rows) + "\n"


def generated():
    """{path: the text generated for it}."""
    api_coverage = load_module("api_coverage", ROOT / "scripts" / "api_coverage.py")
    return {CONFIGURATION: configuration_md(), api_coverage.DOC: api_coverage.section()}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a file differs")
    args = parser.parse_args()
    stale = []
    for path, text in generated().items():
        if path.exists() and path.read_text() == text:
            continue
        stale.append(path)
        if not args.check:
            path.write_text(text)
            print(f"wrote {path.relative_to(ROOT)}")
    if args.check and stale:
        print("out of date (run python scripts/gen_docs.py): " + ", ".join(str(p.relative_to(ROOT)) for p in stale))
        sys.exit(1)


if __name__ == "__main__":
    main()
