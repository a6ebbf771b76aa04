"""The renderer's budget: a message whose rendering runs past its
budget is stored as escaped text, with a log line. (Linearity itself is checked by
tests/markdown/test_linear_time.py; scripts/bench_markdown_worst.py holds the 50 ms target.)"""

import logging
import time

import pytest

from chat_appliance.markdown import engine

from ..support.helpers import ok


def test_a_message_over_the_render_budget_is_stored_as_escaped_text(org, monkeypatch, caplog):
    """With a budget no rendering can meet, is a message stored as escaped plain text, with a
    log line naming its size but not its text, and is the send itself a success?"""
    monkeypatch.setattr(engine, "RENDER_BUDGET_SECONDS", 0.0)
    hamlet = org.client(org.hamlet)
    with caplog.at_level(logging.WARNING, logger="chat_appliance.markdown"):
        message_id = ok(hamlet.post("messages", type="stream", to="Denmark", topic="t",
                                    content="**bold** <b>x</b>\n\n# heading"))["id"]
    message = ok(hamlet.get(f"messages/{message_id}"))["message"]
    assert message["content"] == "<p>**bold** &lt;b&gt;x&lt;/b&gt;</p>\n<p># heading</p>"
    [record] = [r for r in caplog.records if "plain text" in r.getMessage()]
    assert "28 characters" in record.getMessage() and "bold" not in record.getMessage()


def test_within_the_budget_messages_render_as_usual(org):
    """Control: with the default budget, does the same message render as Markdown?"""
    hamlet = org.client(org.hamlet)
    message_id = ok(hamlet.post("messages", type="stream", to="Denmark", topic="t",
                                content="**bold** <b>x</b>\n\n# heading"))["id"]
    assert "<strong>bold</strong>" in ok(hamlet.get(f"messages/{message_id}"))["message"]["content"]


def test_one_time_work_is_not_charged_to_the_message():
    """Is CPU time spent in budget.once() (a lexer's first load) left out of the message's
    budget, while the same time spent rendering the message itself counts?"""
    from types import SimpleNamespace

    from chat_appliance.markdown import budget

    def burn(seconds):
        until = time.thread_time() + seconds
        while time.thread_time() < until:
            pass

    md = SimpleNamespace()
    budget.start(md, 0.05)
    with budget.once():
        burn(0.1)
    budget.check(md)  # within the budget: the burn was one-time work
    burn(0.1)
    with pytest.raises(budget.RenderBudgetExceeded):
        budget.check(md)
    budget.start(md, 0.05)  # a new message starts with nothing set aside
    burn(0.1)
    with pytest.raises(budget.RenderBudgetExceeded):
        budget.check(md)
