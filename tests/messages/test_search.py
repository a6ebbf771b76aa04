"""Full-text search answers the same on SQLite (FTS5, porter) and PostgreSQL (tsvector, english
stemming): these cases are pinned, and the suite runs on both engines. Words match as prefixes
and by stem, quoted phrases match in order, every term must match, and nothing a user types is
a syntax error."""

import pytest

from ..support.helpers import ok, send

TEXTS = {
    "running": "The team is running the deploy tonight",
    "connect": "Connection problems: we connected twice and keep connecting",
    "fox": "the quick brown fox jumps over the lazy dog",
    "reverse": "a brown quick fox is not the same",
    "platypus": "platypus sightings near the river",
    "cafe": "Lunch at the café downstairs",
    "tobe": "to be or not to be",
    "email": "write to alice@example.com about foo.bar.baz and e-mail",
    "numbers": "release 2024 build 17b",
}

CASES = [
    ("runs", {"running"}),               # stem: run
    ("run", {"running"}),
    ("deployed", {"running"}),           # stem of deploy
    ("connections", {"connect"}),
    ("connect", {"connect"}),
    ("platyp", {"platypus"}),            # a word is a prefix (of the stem)
    ('"quick brown"', {"fox"}),          # a phrase keeps its order
    ('"brown quick"', {"reverse"}),
    ("quick brown", {"fox", "reverse"}),  # every word, any order
    ("fox lazy", {"fox"}),
    ("the", {"running", "fox", "reverse", "platypus", "cafe"}),  # no stop words dropped
    ('"to be"', {"tobe"}),
    ("cafe", {"cafe"}),                  # diacritics removed
    ("café", {"cafe"}),
    ("alice", {"email"}),                # addresses and dotted names split into words
    ("example", {"email"}),
    ("bar", {"email"}),
    ("mail", {"email"}),
    ("2024", {"numbers"}),
    ("17b", {"numbers"}),
    ("RELEASE", {"numbers"}),            # case does not matter
    ("zebra", set()),
]

# Inputs that are query syntax somewhere (FTS5, tsquery, websearch); none may be an error.
ODD_INPUTS = ['"unbalanced', "foo & | ! bar", "a:*", "(", ")", "'", "\\", "-foo", "OR", "AND NOT", "NEAR(a b)",
              "*", '""', "...", "a <-> b", "col:value", "^start", "🙂", "x" * 300, "% _"]


@pytest.fixture
def corpus(org):
    hamlet = org.client(org.hamlet)
    return hamlet, {send(hamlet, content=text): key for key, text in TEXTS.items()}


def found(client, corpus_ids, query, narrow_extra=()):
    body = ok(client.get("messages", anchor="newest", num_before=100, num_after=0,
                         narrow=[*narrow_extra, ["search", query]]))
    return {corpus_ids[m["id"]] for m in body["messages"] if m["id"] in corpus_ids}, body


@pytest.mark.parametrize("query, expected", CASES, ids=[c[0] for c in CASES])
def test_words_phrases_and_stems_match_the_same_on_both_engines(corpus, query, expected):
    """Does this query find exactly these messages (pinned for SQLite and PostgreSQL alike)?"""
    hamlet, ids = corpus
    assert found(hamlet, ids, query)[0] == expected


@pytest.mark.parametrize("query", ODD_INPUTS)
def test_anything_typed_is_an_answer_not_an_error(corpus, query):
    """Is every input, including query syntax of either engine, a successful (possibly empty)
    answer rather than a 500?"""
    hamlet, ids = corpus
    matches, _body = found(hamlet, ids, query)
    assert matches <= set(TEXTS)


def test_search_combines_with_other_operators_and_highlights(org, corpus):
    """Does search combine with a channel and topic narrow, and highlight the matched words with
    the same markup on both engines?"""
    hamlet, ids = corpus
    other = send(hamlet, to="Verona", topic="elsewhere", content="the quick brown fox again")
    matches, body = found(hamlet, ids, "quick", narrow_extra=[["channel", "Denmark"], ["topic", "castle"]])
    assert matches == {"fox", "reverse"}
    assert other not in [m["id"] for m in body["messages"]]
    fox = next(m for m in body["messages"] if ids.get(m["id"]) == "fox")
    assert fox["match_content"] == ('<p>the <span class="highlight">quick</span> brown fox jumps over the lazy'
                                    ' dog</p>')
    assert fox["match_subject"] == "castle"
