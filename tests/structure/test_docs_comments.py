"""Comments and docstrings in the package say why the code is as it is, not which issue, review
or benchmark round changed it: git keeps the history, the code keeps the reasons."""

import ast
import io
import re
import tokenize
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "chat_appliance"
ORDINALS = ("first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|thirteenth|"
            "fourteenth|fifteenth|sixteenth|seventeenth|eighteenth|nineteenth|twentieth|\\d+(?:st|nd|rd|th)")
CITATION = re.compile(
    r"\bissues? ?#?\d+"                              # issue 26, issue #32
    r"|(?<![\w&/])#\d+\b"                            # #32 (not &#106; nor a URL fragment)
    r"|\b(?:security |code )?review\b"               # the review, security review
    r"|\bfindings? [A-Z]\d+\b"                       # finding M6
    r"|\b(?:" + ORDINALS + r")\"?,?(?: and \w+)? rounds?\b"   # fourteenth round, "Ninth round"
    r"|\bround \d+\b",                               # round 3
    re.IGNORECASE)
# A comment in JavaScript or CSS: // to the end of the line (not inside a URL), or /* ... */.
JS_COMMENT = re.compile(r"(?<![:\"'\w])//[^\n]*|/\*.*?\*/", re.DOTALL)


def python_texts(path):
    """(line, text) of every comment and docstring of a Python file."""
    source = path.read_text()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc:
                yield getattr(node, "lineno", 1), doc


def script_texts(path):
    """(line, text) of every comment of a JavaScript or CSS file."""
    source = path.read_text()
    for match in JS_COMMENT.finditer(source):
        yield source.count("\n", 0, match.start()) + 1, match.group()


def citations():
    """'path:line: text' for each comment or docstring in the package that cites an issue, a
    review or a benchmark round."""
    found = []
    for path in sorted(PACKAGE.rglob("*")):
        if path.suffix == ".py":
            texts = python_texts(path)
        elif path.suffix in (".js", ".css") and ".min." not in path.name:
            texts = script_texts(path)
        else:
            continue
        for line, text in texts:
            for match in CITATION.finditer(text):
                found.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {match.group()!r}")
    return found


def test_no_comment_or_docstring_cites_an_issue_a_review_or_a_round():
    """Does no comment or docstring in chat_appliance/ cite an issue number, a review or a
    benchmark round instead of giving the reason?"""
    assert citations() == []


def test_the_check_recognises_each_kind_of_citation():
    """Would the check catch each form a citation takes, and leave ordinary words alone?"""
    for text in ("(issue 26, M1)", "issue #32", "see #32", "security review, finding M6",
                 "BENCHMARKS.md, fourteenth round", 'BENCHMARKS.md, "Ninth round"',
                 "thirteenth and seventeenth rounds", "round 3"):
        assert CITATION.search(text), text
    for text in ("image previews", "a round trip", "rounded down", "&#106;", "a rounding error",
                 "https://example.com/#42"):
        assert not CITATION.search(text), text
