"""Pygments' regex lexing with the same tokens and far fewer regex calls.

Pygments' ``RegexLexer`` tries the rules of the current state one by one at
every position until one matches: Python's root state has 56 rules, so an
ordinary name costs dozens of failed ``match`` calls, and lexing was most of
the cost of rendering a message full of code.

Here each rule's regex is analysed once (with the ``re`` module's own parser)
for the characters a match can start with, and each state gets a table from
the next character to the rules that could match there, in their original
order.  A rule is left out for a character only when the analysis proves it
cannot match there; anything it cannot decide (back-references, a possibly
empty match, case-insensitive non-ASCII letters, unknown constructs) keeps
the rule for every character.  The first rule that matches is therefore the
one Pygments would have picked, with the same match, so the tokens are the
same.  The same goes for ``ExtendedRegexLexer`` (YAML, Ruby...), whose
callbacks move a context; lexers that override ``get_tokens_unprocessed``
are left alone.
``tests/markdown/test_code_blocks.py`` compares the tokens with Pygments' own.
"""

from __future__ import annotations

import re
import string
from typing import Any, Optional

from pygments.lexer import ExtendedRegexLexer, LexerContext, RegexLexer
from pygments.token import Error, Text, Whitespace, _TokenType

from chat_appliance.markdown import budget

try:  # Python 3.11+
    from re import _constants as sre_constants, _parser as sre_parse  # type: ignore[attr-defined]  # private, not in typeshed
except ImportError:  # pragma: no cover - Python 3.10
    import sre_constants  # type: ignore[no-redef]  # the same module under its Python 3.10 name
    import sre_parse  # type: ignore[no-redef]  # as above

OTHER = 128  # stands for every non-ASCII character
_ANY = None  # "may start with any character"

_CATEGORIES = {
    sre_constants.CATEGORY_DIGIT: frozenset(map(ord, string.digits)) | {OTHER},
    sre_constants.CATEGORY_WORD: frozenset(map(ord, string.ascii_letters + string.digits + "_")) | {OTHER},
    sre_constants.CATEGORY_SPACE: frozenset(map(ord, " \t\n\r\f\v\x1c\x1d\x1e\x1f")) | {OTHER},
    sre_constants.CATEGORY_LINEBREAK: frozenset({10}),
}


def _fold(chars: set, ignore_case: bool) -> set:
    if not ignore_case:
        return chars
    folded = set(chars)
    for c in chars:
        if c < OTHER:
            folded.add(ord(chr(c).lower()))
            folded.add(ord(chr(c).upper()))
    folded.add(OTHER)  # ASCII letters fold to some non-ASCII ones (K, ſ)
    return folded


def _first_of_class(items: Any, ignore_case: bool) -> Optional[set]:
    chars: set = set()
    for op, av in items:
        if op is sre_constants.LITERAL:
            if av >= OTHER and ignore_case:
                return _ANY
            chars.add(min(av, OTHER))
        elif op is sre_constants.RANGE:
            low, high = av
            if high >= OTHER and ignore_case:
                return _ANY
            chars.update(range(low, min(high, OTHER - 1) + 1))
            if high >= OTHER:
                chars.add(OTHER)
        elif op is sre_constants.CATEGORY and av in _CATEGORIES:
            chars |= _CATEGORIES[av]
        else:  # negated classes and anything else
            return _ANY
    return _fold(chars, ignore_case)


def _first_of_sequence(items: Any, ignore_case: bool) -> tuple[Optional[set], bool]:
    """(characters a match may start with or _ANY, whether it may be empty)."""
    chars: set = set()
    for op, av in items:
        first, may_be_empty = _first_of_item(op, av, ignore_case)
        if first is _ANY:
            return _ANY, False
        chars |= first
        if not may_be_empty:
            return chars, False
    return chars, True


def _first_of_item(op: Any, av: Any, ignore_case: bool) -> tuple[Optional[set], bool]:
    if op is sre_constants.LITERAL:
        if av >= OTHER and ignore_case:
            return _ANY, False
        return _fold({min(av, OTHER)}, ignore_case), False
    if op is sre_constants.IN:
        return _first_of_class(av, ignore_case), False
    if op is sre_constants.BRANCH:
        chars: set = set()
        may_be_empty = False
        for branch in av[1]:
            first, empty = _first_of_sequence(branch, ignore_case)
            if first is _ANY:
                return _ANY, False
            chars |= first
            may_be_empty = may_be_empty or empty
        return chars, may_be_empty
    if op is sre_constants.SUBPATTERN:
        _group, add_flags, del_flags, items = av
        scoped = (ignore_case or bool(add_flags & re.IGNORECASE)) and not del_flags & re.IGNORECASE
        return _first_of_sequence(items, scoped)
    if op in (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT, getattr(sre_constants, "POSSESSIVE_REPEAT", None)):
        low, _high, items = av
        first, empty = _first_of_sequence(items, ignore_case)
        if first is _ANY:
            return _ANY, False
        return first, low == 0 or empty
    if op is getattr(sre_constants, "ATOMIC_GROUP", None):
        return _first_of_sequence(av, ignore_case)
    if op in (sre_constants.AT, sre_constants.ASSERT, sre_constants.ASSERT_NOT):
        return set(), True  # zero width: what follows decides (over-approximated)
    return _ANY, False


def first_characters(rx: "re.Pattern[str]") -> Optional[set]:
    """Character codes (OTHER for non-ASCII) a match of ``rx`` may start with;
    _ANY when it may be empty or the analysis cannot tell."""
    try:
        first, may_be_empty = _first_of_sequence(sre_parse.parse(rx.pattern, rx.flags), bool(rx.flags & re.IGNORECASE))
    except Exception:  # noqa: BLE001 - any surprise means "do not filter"
        return _ANY
    return _ANY if first is _ANY or may_be_empty else first


_TABLES: dict = {}


def _table(lexer_cls: type, state: str, rules: list) -> list:
    key = (lexer_cls, state)
    table = _TABLES.get(key)
    if table is None:
        with budget.once():
            table = _TABLES[key] = _build_table(rules)
    return table


def _build_table(rules: list) -> list:
    firsts = []
    for rule in rules:
        rx = getattr(rule[0], "__self__", None)
        firsts.append(first_characters(rx) if isinstance(rx, re.Pattern) else _ANY)
    return [tuple(rule for rule, first in zip(rules, firsts) if first is _ANY or c in first)
            for c in range(OTHER + 1)]


def fast_get_tokens_unprocessed(self: Any, text: str, stack: tuple = ("root",)):
    """RegexLexer.get_tokens_unprocessed, trying only the rules that can match
    at the next character."""
    cls = type(self)
    pos = 0
    size = len(text)
    tokendefs = self._tokens
    statestack = list(stack)
    statetokens = tokendefs[statestack[-1]]
    table = _table(cls, statestack[-1], statetokens)
    while 1:
        if pos < size:
            code = ord(text[pos])
            candidates = table[code if code < OTHER else OTHER]
        else:
            candidates = statetokens
        for rexmatch, action, new_state in candidates:
            m = rexmatch(text, pos)
            if m:
                if action is not None:
                    if type(action) is _TokenType:
                        yield pos, action, m.group()
                    else:
                        yield from action(self, m)
                pos = m.end()
                if new_state is not None:
                    if isinstance(new_state, tuple):
                        for state in new_state:
                            if state == "#pop":
                                if len(statestack) > 1:
                                    statestack.pop()
                            elif state == "#push":
                                statestack.append(statestack[-1])
                            else:
                                statestack.append(state)
                    elif isinstance(new_state, int):
                        if abs(new_state) >= len(statestack):
                            del statestack[1:]
                        else:
                            del statestack[new_state:]
                    elif new_state == "#push":
                        statestack.append(statestack[-1])
                    else:
                        raise AssertionError(f"wrong state def: {new_state!r}")
                    statetokens = tokendefs[statestack[-1]]
                    table = _table(cls, statestack[-1], statetokens)
                break
        else:
            # No rule matched here.
            try:
                if text[pos] == "\n":
                    statestack = ["root"]
                    statetokens = tokendefs["root"]
                    table = _table(cls, "root", statetokens)
                    yield pos, Whitespace, "\n"
                    pos += 1
                    continue
                yield pos, Error, text[pos]
                pos += 1
            except IndexError:
                break


def fast_extended_get_tokens_unprocessed(self: Any, text: Optional[str] = None, context: Any = None):
    """ExtendedRegexLexer.get_tokens_unprocessed (callbacks see and move a
    context), trying only the rules that can match at the next character."""
    cls = type(self)
    tokendefs = self._tokens
    if not context:
        ctx = LexerContext(text, 0)
        statetokens = tokendefs["root"]
        table = _table(cls, "root", statetokens)
    else:
        ctx = context
        statetokens = tokendefs[ctx.stack[-1]]
        table = _table(cls, ctx.stack[-1], statetokens)
        text = ctx.text
    while 1:
        if ctx.pos < ctx.end:
            code = ord(text[ctx.pos])  # type: ignore[index]  # str: LexerContext(text) or the context's own text
            candidates = table[code if code < OTHER else OTHER]
        else:
            candidates = statetokens
        for rexmatch, action, new_state in candidates:
            m = rexmatch(text, ctx.pos, ctx.end)
            if m:
                if action is not None:
                    if type(action) is _TokenType:
                        yield ctx.pos, action, m.group()
                        ctx.pos = m.end()
                    else:
                        yield from action(self, m, ctx)
                        if not new_state:
                            # the callback may have changed the state stack
                            statetokens = tokendefs[ctx.stack[-1]]
                            table = _table(cls, ctx.stack[-1], statetokens)
                if new_state is not None:
                    if isinstance(new_state, tuple):
                        for state in new_state:
                            if state == "#pop":
                                if len(ctx.stack) > 1:
                                    ctx.stack.pop()
                            elif state == "#push":
                                ctx.stack.append(ctx.stack[-1])
                            else:
                                ctx.stack.append(state)
                    elif isinstance(new_state, int):
                        if abs(new_state) >= len(ctx.stack):
                            del ctx.stack[1:]
                        else:
                            del ctx.stack[new_state:]
                    elif new_state == "#push":
                        ctx.stack.append(ctx.stack[-1])
                    else:
                        raise AssertionError(f"wrong state def: {new_state!r}")
                    statetokens = tokendefs[ctx.stack[-1]]
                    table = _table(cls, ctx.stack[-1], statetokens)
                break
        else:
            try:
                if ctx.pos >= ctx.end:
                    break
                if text[ctx.pos] == "\n":  # type: ignore[index]  # str: LexerContext(text) or the context's own text
                    ctx.stack = ["root"]
                    statetokens = tokendefs["root"]
                    table = _table(cls, "root", statetokens)
                    yield ctx.pos, Text, "\n"
                    ctx.pos += 1
                    continue
                yield ctx.pos, Error, text[ctx.pos]  # type: ignore[index]  # str: LexerContext(text) or the context's own text
                ctx.pos += 1
            except IndexError:
                break


def speed_up(lexer: Any) -> Any:
    """Give a lexer instance the dispatching loop when it uses Pygments' own."""
    own = type(lexer).get_tokens_unprocessed
    if own is RegexLexer.get_tokens_unprocessed:
        lexer.get_tokens_unprocessed = fast_get_tokens_unprocessed.__get__(lexer)
    elif own is ExtendedRegexLexer.get_tokens_unprocessed:
        lexer.get_tokens_unprocessed = fast_extended_get_tokens_unprocessed.__get__(lexer)
    return lexer
