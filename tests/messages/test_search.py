"""Full-text search answers the same on SQLite (FTS5, porter) and PostgreSQL (tsvector, english
stemming): these cases are pinned, and the suite runs on both engines. Words match whole words
by stem, and as prefixes when whole words find nothing; quoted phrases match in order, every term
must match, and nothing a user types is a syntax error."""

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
    ("platyp", {"platypus"}),            # no whole word: a prefix (of the stem)
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


def test_a_search_pages_through_many_matches_as_other_fetches_do(org):
    """With more matches than a page, most of them in a channel the reader is not in, do pages
    of a search (newest first, oldest first, around an anchor, unread only, from the first
    unread) hold exactly the reader's matching messages that a fetch without search finds, in
    order, with the right found_oldest and found_newest?"""
    hamlet, othello = org.client(org.hamlet), org.client(org.othello)
    ok(othello.post("mark_all_as_read"))
    for n in range(45):
        # Othello is in Denmark, not in Verona: two of every three matches are not his.
        send(hamlet, to="Denmark" if n % 3 == 0 else "Verona", topic=f"t{n % 4}", content=f"common word {n}")
        send(hamlet, to="Denmark", topic="noise", content=f"something else {n}")
    everything = ok(othello.get("messages", anchor="newest", num_before=1000, num_after=0))["messages"]
    mine = [m["id"] for m in everything if "common word" in m["content"]]
    assert len(mine) == 15

    def page(**params):
        body = ok(othello.get("messages", narrow=[["search", "common"]], **params))
        return [m["id"] for m in body["messages"]], body["found_oldest"], body["found_newest"]

    assert page(anchor="newest", num_before=6, num_after=0) == (mine[-6:], False, True)
    assert page(anchor=mine[-6], num_before=6, num_after=0, include_anchor=False) == (mine[-12:-6], False, False)
    assert page(anchor="oldest", num_before=0, num_after=20) == (mine, True, True)
    assert page(anchor=mine[7], num_before=2, num_after=3) == (mine[5:11], False, False)
    ok(othello.post("messages/flags", messages=mine[:9], op="add", flag="read"))
    assert page(anchor="first_unread", num_before=0, num_after=3) == (mine[9:13], False, False)
    body = ok(othello.get("messages", narrow=[["search", "common"], ["is", "unread"]], anchor="newest",
                          num_before=100, num_after=0))
    assert [m["id"] for m in body["messages"]] == mine[9:]
    body = ok(othello.get("messages", narrow=[["search", "common"], ["topic", "t0"]], anchor="newest",
                          num_before=100, num_after=0))
    assert [m["id"] for m in body["messages"]] == [m["id"] for m in everything if m["id"] in mine
                                                   and m["subject"] == "t0"]


def test_sqlite_reads_a_searchs_matches_in_order_and_stops_at_the_limit(org):
    """On SQLite, does a search fetch start from the full-text matches in id order, looking up
    the reader's row of each, with no sort and no list of every match first? (Collecting every
    match first cost time in proportion to the matches in the whole history.)"""
    from chat_appliance.db.connection import backend
    from chat_appliance.lib.narrow import Narrow, RangeQuery
    from chat_appliance.models import database

    if backend().NAME != "sqlite":
        pytest.skip("PostgreSQL searches its GIN index of documents")
    with database.connection_context():
        for narrow in ([("search", "common", False)],
                       [("search", "common", False), ("is", "unread", False)],
                       [("channel", "Denmark", False), ("search", "common", False)]):
            query = RangeQuery(org.othello, Narrow(org.othello, narrow))
            assert query.searched is not None, narrow
            [(sql, params)] = query.row_queries(lambda column: column < 1000, True, 10)
            plan = [row[-1] for row in database.execute_sql("EXPLAIN QUERY PLAN " + sql, params)]
            assert plan[0].startswith("SCAN") and "VIRTUAL TABLE" in plan[0], (narrow, plan)
            assert not [step for step in plan if "TEMP B-TREE" in step or "SUBQUERY" in step], (narrow, plan)


def test_a_search_for_punctuation_alone_matches_nothing_beside_another_search(org, corpus):
    """Does a search operand with nothing to match (punctuation only) match no message, alone
    and beside a search that matches some?"""
    hamlet, ids = corpus
    assert found(hamlet, ids, "fox")[0] == {"fox", "reverse"}
    assert found(hamlet, ids, "!!")[0] == set()
    assert found(hamlet, ids, "fox", narrow_extra=[["search", "!!"]])[0] == set()


def test_a_whole_word_matches_by_stem_and_a_fragment_as_a_prefix(org):
    """Does a word that matches whole words find those (by stem) and not the longer words it
    starts, as Zulip's search does, while a fragment that is no word of the reader's messages
    matches as the start of words? And do the engines agree?"""
    hamlet = org.client(org.hamlet)
    ids = {send(hamlet, content=text): key for key, text in
           {"cat": "the cat sleeps", "cats": "two cats", "category": "a category of its own"}.items()}
    assert found(hamlet, ids, "cat")[0] == {"cat", "cats"}
    assert found(hamlet, ids, "categ")[0] == {"category"}
    # The narrow as a whole: whole words find nothing together, so every word is a prefix.
    assert found(hamlet, ids, "categ cat")[0] == {"category"}
    # From the oldest, the fetch covers the narrow only by chance of its size: the narrow is
    # asked first (from the newest, the fetch itself tells).
    for query, expected in (("categ", {"category"}), ("cat", {"cat", "cats"})):
        body = ok(hamlet.get("messages", anchor="oldest", num_before=0, num_after=100,
                             narrow=[["search", query]]))
        assert {ids[m["id"]] for m in body["messages"] if m["id"] in ids} == expected, query


def test_whether_a_word_matches_whole_depends_only_on_what_the_reader_can_see(org):
    """When a word appears whole only in a conversation the reader is not part of, does their
    search still match it as the start of words, exactly as if that conversation did not exist
    (so the search tells nothing about it)?"""
    hamlet, othello = org.client(org.hamlet), org.client(org.othello)
    mine = send(othello, content="the platform team")
    assert found(othello, {mine: "mine"}, "plat")[0] == {"mine"}
    ok(org.client(org.cordelia).post("messages", type="private", to=f"[{org.hamlet.id}]", content="plat du jour"))
    assert found(othello, {mine: "mine"}, "plat")[0] == {"mine"}
    # Hamlet, who received the direct message, finds the word whole, and so not the prefix.
    assert found(hamlet, {mine: "mine"}, "plat")[0] == set()


def test_marking_by_a_search_narrow_follows_the_same_rule(org):
    """Does POST /messages/flags/narrow with a search for a fragment mark the messages whose
    words it starts, as GET /messages finds them?"""
    hamlet, othello = org.client(org.hamlet), org.client(org.othello)
    target = send(hamlet, content="a giraffe walked in")
    result = ok(othello.post("messages/flags/narrow", anchor="newest", num_before=10, num_after=0,
                             narrow='[{"operator": "search", "operand": "giraf"}]', op="add", flag="starred"))
    assert result["first_processed_id"] == result["last_processed_id"] == target


def test_highlights_are_those_of_the_pattern_on_any_text():
    """Does highlight(), which searches the case-folded text, wrap exactly what its regular
    expression (a term at a word's start, in any case, outside tags, the longest first) would,
    on texts of tags, entities, case pairs and characters whose folding is longer?"""
    import random

    from chat_appliance.lib.narrow import _HIGHLIGHT, _highlighter, highlight

    pieces = ["a", "b", "ab", "A", "B", " ", "<", ">", "<p>", "</p>", '<a href="ab">', "_", "é", "É", "ß",
              "1", "&amp;", "-", "\n", "İ"]
    words = ["a", "ab", "b", "aB", "é", "a_b", "&", "1a", "-a", "ss"]
    chance = random.Random(55)
    for _ in range(5000):
        text = "".join(chance.choice(pieces) for _ in range(chance.randint(0, 30)))
        terms = chance.sample(words, chance.randint(1, 3))
        assert highlight(text, terms) == _highlighter(tuple(terms))[0].sub(_HIGHLIGHT, text), (text, terms)
