"""The KaTeX engine is shared: one person's formulas cannot hold it, queue others behind it,
spend it without limit, or store megabytes."""

import threading
import time

import pytest

from chat_appliance.markdown import RenderContext, katex, render

from ..support.helpers import content_of, send

# About a second of KaTeX's time in 1.2 KB: a macro that doubles its argument, six deep, makes
# 64 copies of 400 superscripts (8 MB of output). Deep nesting alone is no longer slow: the
# current V8 typesets 400 nested fractions in 70 ms.
SLOW = "$$\\def\\twice#1{#1#1}" + "\\twice{" * 6 + "x^2" * 400 + "}" * 6 + "$$"


@pytest.fixture(autouse=True)
def engine_started():
    """The engine started (its first start is not a message's), and every allowance fresh."""
    render("$$x$$")
    allowances = getattr(katex, "_allowance", None)
    if allowances is not None:
        allowances.spent.clear()
    yield
    if allowances is not None:
        allowances.spent.clear()


def test_a_slow_formula_is_stopped_within_the_message_limit(monkeypatch):
    """Does a formula that takes KaTeX a second stop at the per-message limit, as error markup?
    (With no output cap in the way, only the time limit can turn it into the error markup; the
    engine then typesets the next formula as usual.)"""
    monkeypatch.setattr(katex, "MAX_OUTPUT_CHARS", 10**9)
    monkeypatch.setattr(katex, "FORMULA_SECONDS", 0.05)
    assert render(SLOW).html.startswith('<p><span class="tex-error">')
    monkeypatch.setattr(katex, "FORMULA_SECONDS", 30.0)
    typeset = katex.render_tex([(SLOW.strip("$"), True)], seconds=30.0)  # it is only slow
    assert typeset[0] is not None and typeset[0].startswith('<span class="katex-display">')
    assert 'class="katex"' in render("$$x^2$$").html


def test_a_busy_engine_fails_fast_to_the_error_markup():
    """While another message's formulas hold the engine, does a person's `$$x^2$$` come back as
    error markup rather than wait for it? The test holds the engine itself: a render that queued
    behind it would not return until the test let go."""
    result = {}
    with katex._engine.lock:
        worker = threading.Thread(target=lambda: result.update(html=render("$$x^2$$").html))
        worker.start()
        worker.join(timeout=30)
        queued = worker.is_alive()
    worker.join()
    assert not queued
    assert result["html"] == '<p><span class="tex-error">$$x^2$$</span></p>'
    assert 'class="katex"' in render("$$x^2$$").html  # free again


def spend_at_least(seconds, owner, spend):
    """Call spend() until `owner` has used `seconds` of engine time (a fast machine typesets SLOW
    in far less than a second, so the count of calls cannot be fixed); return the debt."""
    for _ in range(200):
        spend()
        debt = katex._allowance.spent.get(owner, (0.0, 0.0))[0]
        if debt >= seconds:
            return debt
    pytest.fail(f"{owner!r} spent only {debt:.3f} s of engine time in 200 calls")


def test_each_person_has_a_budget_of_engine_time(monkeypatch):
    """Once one person has spent their engine time, do their formulas render as error markup
    while another person's still typeset?"""
    mallory, alice = RenderContext(tex_owner=1), RenderContext(tex_owner=2)
    debt = spend_at_least(0.1, 1, lambda: render(SLOW, mallory))
    # An allowance below what mallory has spent, and still ample for one small formula.
    monkeypatch.setattr(katex, "ENGINE_SECONDS_PER_MINUTE", debt * 0.8)
    assert render("$$x^2$$", mallory).html.startswith('<p><span class="tex-error">')
    assert 'class="katex"' in render("$$x^2$$", alice).html


def test_the_senders_budget_applies_through_the_api(org, monkeypatch):
    """Does a message sent through the API spend its sender's engine time (and only theirs)?"""
    hamlet, othello = org.client(org.hamlet), org.client(org.othello)
    debt = spend_at_least(0.1, org.hamlet.id, lambda: send(hamlet, content=SLOW))
    monkeypatch.setattr(katex, "ENGINE_SECONDS_PER_MINUTE", debt * 0.8)
    assert 'class="tex-error"' in content_of(hamlet, send(hamlet, content="$$x^2$$"))
    assert 'class="katex"' in content_of(othello, send(othello, content="$$x^2$$"))


def test_typeset_output_per_message_is_capped(monkeypatch):
    """Is a message's typeset HTML held under the output cap (KaTeX's markup can be a hundred
    times its source), the formulas past it shown as source?"""
    formula = "$$" + "\\sqrt{" * 15 + "x" + "}" * 15 + "$$"
    one = len(render(formula).html)
    monkeypatch.setattr(katex, "MAX_OUTPUT_CHARS", int(one * 2.5))
    html = render(" ".join([formula] * 8)).html
    assert len(html) < one * 2.5 + 8 * len(formula)
    assert html.count('class="katex"') == 2 and html.count('class="tex-error"') == 6


def test_the_engine_starts_afresh_when_its_heap_grew(monkeypatch):
    """After a long call that left V8's heap past the restart size, is the next formula typeset
    by a fresh engine?"""
    monkeypatch.setattr(katex, "HEAP_RESTART_BYTES", 0)
    monkeypatch.setattr(katex, "HEAP_CHECK_AFTER_SECONDS", 0.0)
    before = katex._engine.generation
    render("$$y$$")
    assert katex._engine.generation[0] == before[0]  # the same process,
    assert katex._engine.generation[1] > before[1]  # with a fresh V8 context
    assert 'class="katex"' in render("$$z$$").html


def test_the_engine_runs_in_a_process_that_ends_when_idle(monkeypatch):
    """Is V8 kept out of the server's own process (its library is tens of MB that a process
    cannot give back), does the engine's process end after IDLE_SECONDS without a formula, and
    does the next formula start another and typeset?"""
    with open("/proc/self/maps") as maps:
        assert "mini_racer" not in maps.read()
    engine = katex._engine
    first = engine.process
    assert first is not None and first.poll() is None
    monkeypatch.setattr(katex, "IDLE_SECONDS", 0.2)
    render("$$a$$")  # used now (by a second process if the first had already ended meanwhile)
    first.wait(timeout=10)
    for _ in range(100):  # whichever process typeset it ends too, within a second or so
        if engine.process is None:
            break
        time.sleep(0.05)
    assert engine.process is None
    assert 'class="katex"' in render("$$b$$").html
    assert engine.process is not None and engine.process.pid != first.pid


def test_an_engine_process_killed_from_outside_is_replaced():
    """If the engine's process is killed while idle (the kernel's OOM killer, an operator), is
    the next formula typeset by a new one rather than shown as source?"""
    engine = katex._engine
    killed = engine.process
    killed.kill()
    killed.wait(timeout=10)
    assert 'class="katex"' in render("$$c$$").html
    assert engine.process.pid != killed.pid


def test_an_engine_process_that_stops_answering_is_killed_and_replaced(monkeypatch):
    """If the engine's process stops answering (stopped, stuck), does the message's TeX come back
    as error markup soon after its time limit, is that process killed, and does the next formula
    start a new one?"""
    import os
    import signal

    engine = katex._engine
    stuck = engine.process
    monkeypatch.setattr(katex, "ANSWER_GRACE_SECONDS", 0.3)
    os.kill(stuck.pid, signal.SIGSTOP)
    try:
        began = time.monotonic()
        assert render("$$x^3$$").html == '<p><span class="tex-error">$$x^3$$</span></p>'
        assert time.monotonic() - began < katex.FORMULA_SECONDS + 0.3 + 2
        assert stuck.wait(timeout=10) is not None  # killed (a stopped process cannot end by itself)
    finally:
        if stuck.poll() is None:
            os.kill(stuck.pid, signal.SIGCONT)
    assert 'class="katex"' in render("$$x^3$$").html
    assert engine.process.pid != stuck.pid


def test_a_formula_while_an_idle_process_exits_is_typeset(monkeypatch):
    """While an idle engine's process is being ended (here it cannot end by itself, so the
    server waits a second before killing it), is a new formula typeset by a process of its own
    rather than finding the engine busy and shown as source?"""
    import os
    import signal

    engine = katex._engine
    leaving = engine.process
    os.kill(leaving.pid, signal.SIGSTOP)
    try:
        monkeypatch.setattr(katex, "IDLE_SECONDS", 0.1)
        for _ in range(100):
            if engine.process is None:
                break
            time.sleep(0.02)
        assert engine.process is None and leaving.poll() is None  # detached, still exiting
        assert 'class="katex"' in render("$$e$$").html
        assert engine.process.pid != leaving.pid
        assert leaving.wait(timeout=10) is not None
    finally:
        if leaving.poll() is None:
            os.kill(leaving.pid, signal.SIGCONT)
