"""Material outside the repository: ../shared beside the repository root (the prose spec and
Zulip's Markdown test cases, which must not be copied in). CI checks it out; a plain clone has
none, and the tests that read it skip, saying so. Nothing else is looked for: only the
repository root's parent."""

from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
SHARED = REPO_ROOT.parent / "shared"


def shared_file(*parts):
    """The path of ../shared/<parts>, or a skip that names it."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"needs ../shared: {path} is absent (a plain clone has no Zulip material; CI has it)")
    return path
