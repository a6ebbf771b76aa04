"""The renderer's shortcut for plain lines (markdown/engine.py): for every line it takes, the
result is exactly the full renderer's, and it is taken for ordinary chat lines."""

import random
from dataclasses import asdict

from chat_appliance.markdown.context import RenderContext
from chat_appliance.markdown.engine import _PLAIN_LINE_RE, render, render_markdown

ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ,;?!'."
WORDS = ["ok", "thanks", "I", "don't", "know", "see", "you", "at", "3", "pm", "e", "g", "www", "com", "http",
         "1", "A", "No", "hello", "world", "done", "x", "v2", "etc", "why", "ship", "it", "me", "here", "there"]
PUNCTUATION = ["", "", "", ",", ".", "!", "?", ";", "...", "'", ". ", "!!", " ."]


def samples(count, seed):
    rng = random.Random(seed)
    for _ in range(count):
        if rng.random() < 0.5:
            yield "".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, 60)))
        else:
            words = [rng.choice(WORDS) + rng.choice(PUNCTUATION) for _ in range(rng.randint(1, 12))]
            yield rng.choice(["", " ", "  "]).join(words)


def test_the_shortcut_renders_exactly_as_the_full_renderer():
    """For 4,000 random lines over the shortcut's alphabet, is every field of the result the
    same as the full renderer's, and does the shortcut take a good share of them?"""
    taken = 0
    for content in samples(4000, seed=15):
        if not _PLAIN_LINE_RE.fullmatch(content):
            continue
        taken += 1
        assert asdict(render(content)) == asdict(render_markdown(content, RenderContext())), content
    assert taken > 1000


def test_ordinary_lines_take_the_shortcut_and_markup_does_not():
    """Are chat lines plain, and is anything that could be syntax (a list number, a domain,
    emphasis, a mention, an emoticon, a second line) left to the full renderer?"""
    for plain in ["sounds good, see you tomorrow!", "Why not? It's done.", "ok", "x" * 200]:
        assert _PLAIN_LINE_RE.fullmatch(plain), plain
    for markup in ["1. first", "see example.com", "**bold**", "@**King Hamlet**", "hi :)", "a\nb", " lead",
                   "trail ", "#general", "caf\u00e9", "<b>", "a & b", "- item", "> quote", "/me waves"]:
        assert not _PLAIN_LINE_RE.fullmatch(markup), markup


def test_linkifiers_turn_the_shortcut_off():
    """With a linkifier that matches a plain word, is the word still linked?"""
    context = RenderContext(linkifiers=((r"ticket", "https://tickets.example.com/"),))
    assert "tickets.example.com" in render("open ticket now", context).html
