"""Narrows: parse both wire forms, turn operators into query conditions, fetch a range.

A narrow with a channel operator for a channel whose history the user may read (or
`channels:public`) searches every message of it ("shared history"); any other narrow searches
the user's personal history (their UserMessage rows).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

import functools
import html
import re

from peewee import SQL, Expression, ForeignKeyField, IntegerField, Tuple

from chat_appliance.db.connection import backend
from chat_appliance.models import (
    FLAG_BITS,
    DirectMessageGroup,
    DirectMessageGroupMember,
    Message,
    Reaction,
    Stream,
    Subscription,
    UserMessage,
    UserProfile,
    UserTopic,
    database,
    in_ids,
    received_conditions,
    unread_conditions,
)
from chat_appliance.models import TOPIC_FOLLOWED, TOPIC_MUTED, TOPIC_UNMUTED
from chat_appliance.models.base import query_rows
from chat_appliance.lib.access import (
    can_access_stream_metadata,
    can_read_stream_history,
    find_user_by_email,
    get_stream_by_name,
    is_subscribed,
    stream_in_realm,
    user_can_access_message,
)
from chat_appliance.lib.errors import BadNarrowError, JsonableError, ParamError
from chat_appliance.lib.messages import EMPTY_TOPIC_ALIASES, display_topic
# Zulip's anchor for "no such message", larger than any message id, lives with parse_anchor
# (lib/validators.py), which clamps anchors to it.
from chat_appliance.lib.validators import LARGER_THAN_MAX_MESSAGE_ID, MAX_INT, check_json_list, is_id_string

if TYPE_CHECKING:
    import peewee

RESOLVED_TOPIC_PREFIX = "✔ "

# Older names of operators, for the SQL builder and the in-memory predicate alike.
OPERATOR_ALIASES = {
    "stream": "channel", "streams": "channels", "subject": "topic", "pm-with": "dm", "pm_with": "dm",
    "group-pm-with": "dm-including",
}


# No client builds narrows this long; longer ones only grow the SQL until the engine refuses it.
MAX_NARROW_TERMS = 100


def canonical_operator(operator: str) -> str:
    """The current name of a narrow operator (lower case, aliases resolved)."""
    operator = operator.lower()
    return OPERATOR_ALIASES.get(operator, operator)


def parse_narrow(var_name: str, value: Any) -> list[tuple[str, Any, bool]]:
    """Accept [{"operator", "operand", "negated"}] and legacy [[operator, operand]]."""
    value = check_json_list(var_name, value)
    if len(value) > MAX_NARROW_TERMS:
        raise ParamError(f"{var_name} has too many terms (limit: {MAX_NARROW_TERMS})")
    terms: list[tuple[str, Any, bool]] = []
    for index, term in enumerate(value):
        if isinstance(term, dict):
            operator, operand, negated = term.get("operator"), term.get("operand"), term.get("negated", False)
        elif isinstance(term, list) and len(term) == 2:
            (operator, operand), negated = term, False
        else:
            raise ParamError(f"{var_name}[{index}] is not a valid narrow term")
        if not isinstance(operator, str) or not isinstance(negated, bool):
            raise ParamError(f"{var_name}[{index}] is not a valid narrow term")
        if not isinstance(operand, (str, int, list)) or isinstance(operand, bool):
            raise ParamError(f"{var_name}[{index}] has an invalid operand")
        terms.append((canonical_operator(operator), operand, negated))
    return terms


def _never():
    return SQL("0 = 1")


def operand_id(operand: Any) -> int | None:
    """An id operand (an integer or a string of ASCII digits) as an int within 64 bits, else None."""
    if isinstance(operand, int) and not isinstance(operand, bool):
        return operand if 0 <= operand <= MAX_INT else None
    return int(operand) if is_id_string(operand) else None


class Narrow:
    """A parsed narrow for one user: conditions, history mode, search terms. `search_prefixes`:
    search words match as the start of words' stems, not whole (see narrow_query)."""
    def __init__(self, user, terms, *, search_prefixes=False):
        self.user = user
        self.terms = terms
        self.search_prefixes = search_prefixes
        self.search_terms = []
        self.search_conditions: list[tuple[Any, list[str]]] = []  # (condition, terms) of each search (not negated)
        self.shared_history = False
        # Channels and subscriptions are read as kept at the configuration generation the
        # account was read with (lib/snapshots.py): a channel narrow then costs no statement.
        self.at = getattr(user, "config_at", None)
        # "is:unread" is no condition of its own: RangeQuery queries each of unread_conditions()
        # (the unread index, and new messages' rows not yet in it) with the other conditions.
        unread = ("is", "unread", False)
        self.unread = unread in terms
        self.conditions = [self._condition(*term) for term in terms if term != unread]

    # --- operand resolution ---

    def _stream(self, operand):
        """(the channel, whether the user is subscribed to it)."""
        if operand_id(operand) is not None:
            stream = stream_in_realm(self.user.realm_id, operand_id(operand), self.at)
        elif isinstance(operand, str) and not operand.isdigit():
            stream = get_stream_by_name(self.user.realm_id, operand, self.at)
        else:
            stream = None
        subscribed = stream is not None and is_subscribed(self.user, stream, self.at)
        if stream is None or not can_access_stream_metadata(self.user, stream, subscribed):
            raise BadNarrowError("unknown channel")
        return stream, subscribed

    def _user(self, operand):
        if operand == "me":
            return self.user
        if operand_id(operand) is not None:
            user = UserProfile.get_or_none((UserProfile.id == operand_id(operand))
                                           & (UserProfile.realm == self.user.realm_id))
        elif isinstance(operand, str) and not operand.isdigit():
            user = find_user_by_email(self.user, operand)
        else:
            user = None
        if user is None or user.realm_id != self.user.realm_id:
            raise BadNarrowError("unknown user")
        return user

    def _users(self, operand):
        if isinstance(operand, str):
            # zulip-terminal joins emails with ", ".
            operand = [part.strip() for part in operand.split(",") if part.strip()]
        elif isinstance(operand, int):
            operand = [operand]
        if not operand:
            raise BadNarrowError("no users")
        return [self._user(item) for item in operand]

    # --- operators ---

    def _condition(self, operator, operand, negated):
        handler = getattr(self, "op_" + operator.replace("-", "_"), None)
        if handler is None:
            raise BadNarrowError(f"unknown operator {operator}")
        condition = handler(operand, negated)
        return ~condition if negated else condition

    def op_channel(self, operand: Any, negated: bool) -> peewee.Expression:
        stream, subscribed = self._stream(operand)
        if not negated and can_read_stream_history(self.user, stream, subscribed):
            self.shared_history = True
        return Message.recipient == stream.recipient_id

    def op_channels(self, operand: Any, negated: bool) -> Any:
        if operand != "public":
            raise BadNarrowError("unknown channels operand")
        if not negated and not self.user.is_guest:
            self.shared_history = True
        public = Stream.select(Stream.id).where((Stream.realm == self.user.realm_id) & ~Stream.invite_only)
        return Message.stream.in_(public)

    def op_topic(self, operand: Any, negated: bool) -> Any:
        if not isinstance(operand, str):
            raise BadNarrowError("invalid topic")
        topic = operand.strip()
        topic = "" if topic in EMPTY_TOPIC_ALIASES else topic
        return (Message.topic_key == topic.casefold()) & Message.stream.is_null(False)

    def op_sender(self, operand: Any, negated: bool) -> peewee.Expression:
        return Message.sender == self._user(operand).id

    def op_dm(self, operand: list[int], negated: bool) -> peewee.Expression:
        users = {u.id for u in self._users(operand)} | {self.user.id}
        key = ",".join(str(uid) for uid in sorted(users))
        group = DirectMessageGroup.get_or_none(DirectMessageGroup.member_key == key)
        return Message.recipient == group.recipient_id if group else _never()

    def op_dm_including(self, operand: list[Any], negated: bool) -> Any:
        other = self._users(operand)[0]
        groups_of = lambda uid: DirectMessageGroupMember.select(DirectMessageGroupMember.group).where(  # noqa: E731
            DirectMessageGroupMember.user_profile == uid)
        recipients = DirectMessageGroup.select(DirectMessageGroup.recipient).where(
            DirectMessageGroup.id.in_(groups_of(other.id)) & DirectMessageGroup.id.in_(groups_of(self.user.id)))
        return Message.recipient.in_(recipients)

    def _flag_set(self, name):
        return UserMessage.flags.bin_and(FLAG_BITS[name]) != 0

    def op_is(self, operand: str, negated: bool) -> peewee.Expression:
        if operand in ("dm", "private"):
            return Message.stream.is_null(True)
        if operand == "starred":
            return self._flag_set("starred")
        if operand == "unread":  # only negated here (Narrow.unread): "not unread" is "read"
            return UserMessage.flags.bin_and(FLAG_BITS["read"]) == 0
        if operand == "mentioned":
            bits = sum(FLAG_BITS[n] for n in ("mentioned", "stream_wildcard_mentioned",
                                              "topic_wildcard_mentioned", "group_mentioned"))
            return UserMessage.flags.bin_and(bits) != 0
        if operand == "alerted":
            return self._flag_set("has_alert_word")
        if operand == "resolved":
            return Message.topic.startswith(RESOLVED_TOPIC_PREFIX)
        if operand == "followed":
            return self._topics_with_policy([TOPIC_FOLLOWED])
        if operand == "muted":
            return self._muted_condition()
        raise BadNarrowError(f"unknown 'is' operand {operand}")

    def _topics_with_policy(self, policies):
        """Messages in the user's topics with one of these visibility policies. One row-value IN
        over a subquery, not an OR per topic: a chain of a few hundred ORs passed SQLite's
        expression depth limit (1000) and answered 500."""
        topics = UserTopic.select(UserTopic.stream, UserTopic.topic_key).where(
            (UserTopic.user_profile == self.user) & UserTopic.visibility_policy.in_(policies))
        return Tuple(Message.stream, Message.topic_key).in_(topics)

    def _muted_condition(self):
        muted_streams = [s.stream_id for s in Subscription.select(Subscription.stream).where(
            (Subscription.user_profile == self.user) & Subscription.is_muted)]
        in_muted_stream = Message.stream.in_(muted_streams) if muted_streams else _never()
        unmuted_topics = self._topics_with_policy([TOPIC_UNMUTED, TOPIC_FOLLOWED])
        return (in_muted_stream & ~unmuted_topics) | self._topics_with_policy([TOPIC_MUTED])

    def op_in(self, operand: Any, negated: bool) -> Any:
        if operand == "home":
            return ~self._muted_condition()
        if operand == "all":
            return SQL("1 = 1")
        raise BadNarrowError(f"unknown 'in' operand {operand}")

    def op_has(self, operand: Any, negated: bool) -> Any:
        columns = {"link": Message.has_link, "image": Message.has_image, "attachment": Message.has_attachment}
        if operand in columns:
            return columns[operand] == True  # noqa: E712  (a SQL comparison)
        if operand == "reaction":
            return Message.id.in_(Reaction.select(Reaction.message))
        raise BadNarrowError(f"unknown 'has' operand {operand}")

    def op_search(self, operand: str, negated: bool) -> peewee.Expression:
        if not isinstance(operand, str):
            raise BadNarrowError("invalid search")
        terms = search_terms(operand)
        if not terms:
            return SQL("1 = 1")
        condition = backend().search_condition(Message.id, terms, self.search_prefixes)
        if not negated:
            self.search_terms.extend(terms)
            self.search_conditions.append((condition, terms))
        return condition

    def op_near(self, operand: int, negated: bool) -> peewee.SQL:
        """`near` positions a view around a message; it filters nothing."""
        return SQL("1 = 1")

    def op_id(self, operand: int, negated: bool) -> peewee.Expression:
        if operand_id(operand) is None:
            raise BadNarrowError("invalid message id")
        return Message.id == operand_id(operand)

    def op_with(self, operand: int, negated: bool) -> Any:
        """The conversation (channel and topic, or direct-message group) of a message."""
        if operand_id(operand) is None:
            raise BadNarrowError("invalid message id")
        message = Message.get_or_none(Message.id == operand_id(operand))
        if message is None or not user_can_access_message(self.user, message):
            return _never()
        if message.stream_id is None:
            return Message.recipient == message.recipient_id
        stream = Stream.get_by_id(message.stream_id)
        if not negated and can_read_stream_history(self.user, stream):
            self.shared_history = True
        return (Message.recipient == message.recipient_id) & (Message.topic_key == message.topic_key)


def narrow_query(user: UserProfile, terms: list[Any], adjust: Callable[[Narrow], Any] | None = None, *,
                 probe: bool = True) -> RangeQuery:
    """The RangeQuery of these narrow operators for this user (its Narrow is `.narrow`). Search
    words match whole words, by stem, as Zulip's search does; when that finds nothing the narrow
    could show, they match as the start of words instead (a word still being typed, or a fragment
    remembered), as they always did here.

    Whole words first because the full-text engines find a word's newest matches without reading
    its older ones, while a prefix makes SQLite gather every match of every word it starts:
    that grew with the history, from 3.4 ms at 10,000 messages to 21.6 ms at a million. The
    choice depends only on what this user's narrow matches, so it tells nobody about messages
    they cannot see; one query of a row, on the RangeQuery returned, decides it. `adjust(narrow)`
    changes a narrow before it is queried (as the caller will query it). `probe=False` leaves
    that query out, for a caller that reads the whole narrow anyway: it calls widened() on the
    query when it found nothing."""
    query = RangeQuery(user, _adjusted(Narrow(user, terms), adjust))
    if probe and query.narrow.search_terms and not query.rows(None, True, 1):
        return query.widened(adjust)
    return query


def _adjusted(narrow: Narrow, adjust: Callable[[Narrow], Any] | None) -> Narrow:
    if adjust is not None:
        adjust(narrow)
    return narrow


def search_terms(query: str) -> list[str]:
    """Words and "quoted phrases" of a search query."""
    return [a or b for a, b in re.findall(r'"([^"]+)"|(\S+)', query) if (a or b).strip()]


# The tables' names in a fetch's SQL. RangeQuery writes the SELECT, the joins, the order and the
# limit itself, around conditions that peewee compiles with these names: a fetch of the newest 100
# of a channel spent a third of its time in peewee building the same scaffolding again.
_MESSAGE_ALIAS, _ROW_ALIAS, _MATCH_ALIAS = '"m"', '"um"', '"s"'
# How a query of the user's own rows reaches their messages. Left out when no condition names
# the message table: a row's message always exists (the row's key refers to it), and looking each
# one up cost is:unread, is:starred and a plain search a B-tree descent per row.
_MESSAGE_JOIN = f' INNER JOIN "message" AS {_MESSAGE_ALIAS} ON ({_ROW_ALIAS}."message_id" = {_MESSAGE_ALIAS}."id")'


_SIMPLE_ALIASES = {Message: _MESSAGE_ALIAS, UserMessage: _ROW_ALIAS}
_SIMPLE_OPERATORS = frozenset(("=", "<", "<=", ">", ">="))


def _simple(condition: Any) -> tuple[str, list[Any]] | None:
    """_compile's text of a comparison of a message's or row's integer column with an integer,
    or of an AND of such (a channel, a sender, an anchor), written without peewee, whose compiler
    took a tenth of a channel fetch for them; None for any other condition."""
    if type(condition) is not Expression:
        return None
    if condition.op == "AND":
        left, right = _simple(condition.lhs), _simple(condition.rhs)
        if left is None or right is None:
            return None
        return f"({left[0]} AND {right[0]})", left[1] + right[1]
    field, value = condition.lhs, condition.rhs
    if (condition.op not in _SIMPLE_OPERATORS or type(value) is not int
            or not isinstance(field, (IntegerField, ForeignKeyField)) or field.model not in _SIMPLE_ALIASES):
        return None
    return f'({_SIMPLE_ALIASES[field.model]}."{field.column_name}" {condition.op} {database.param})', [value]


def _compile(condition: Any, search_table: Any = None) -> tuple[str, list[Any]]:
    """A peewee condition as SQL text (and its parameters) naming the tables as RangeQuery's SQL does."""
    simple = _simple(condition)
    if simple is not None:
        return simple
    context = database.get_sql_context()
    context.alias_manager[Message._meta.table] = _MESSAGE_ALIAS.strip('"')
    context.alias_manager[UserMessage._meta.table] = _ROW_ALIAS.strip('"')
    if search_table is not None:
        context.alias_manager[search_table] = _MATCH_ALIAS.strip('"')
    # As within a query: a subquery in the condition gets its parentheses.
    with context(subquery=True):
        context.sql(condition)
    return context.query()


class RangeQuery:
    """Rows (message id, flag bits) matching a narrow, for one user."""
    def __init__(self, user, narrow):
        self.user = user
        self.narrow = narrow
        m, um, p = _MESSAGE_ALIAS, _ROW_ALIAS, database.param
        if narrow.shared_history:
            self.id_column = Message.id
            self.select = (f'SELECT {m}."id", {um}."flags" FROM "message" AS {m} LEFT OUTER JOIN "user_message" AS {um}'
                           f' ON ({um}."message_id" = {m}."id" AND {um}."user_profile_id" = {p})')
            self.select_params = [user.id]
            self.conditions = list(narrow.conditions)
        else:
            # Ordering by the personal row's message id lets the per-user index serve "newest N"
            # without scanning history.
            self.id_column = UserMessage.message
            self.select = f'SELECT {um}."message_id" AS "id", {um}."flags" FROM "user_message" AS {um}' + _MESSAGE_JOIN
            self.select_params = []
            self.conditions = [UserMessage.user_profile == user.id, *narrow.conditions]
        self.parts = self._parts(narrow.unread)
        self.searched = self._searched(user, narrow)

    @staticmethod
    def _searched(user, narrow) -> Any:
        """For a search narrow, where the engine can read its matches in id order (SQLite's
        full-text table, backend().search_source): (the matches' table, its id column, the SQL
        that starts from the matches and looks up each one's row for `user`, its parameters, the
        conditions), so that "newest 100" reads matches until it has 100 rows, whatever the
        number of matches in the history; None otherwise. A message's row is looked up by its
        key, so one query serves rows in either state of the unread index."""
        source = getattr(backend(), "search_source", None)
        # A search with nothing to match (punctuation only) matches no message: that narrow keeps
        # its conditions.
        if source is None or not narrow.search_conditions or any(
                source(terms) is None for _, terms in narrow.search_conditions):
            return None
        table, rowid, match = source(narrow.search_terms, narrow.search_prefixes)
        m, um, s, p = _MESSAGE_ALIAS, _ROW_ALIAS, _MATCH_ALIAS, database.param
        # CROSS JOIN: SQLite keeps the tables in the order written, the matches outermost.
        if narrow.shared_history:
            select = (f'SELECT {m}."id", {um}."flags" FROM "message_search" AS {s}'
                      f' CROSS JOIN "message" AS {m} ON ({m}."id" = {s}."rowid")'
                      f' LEFT OUTER JOIN "user_message" AS {um}'
                      f' ON ({um}."message_id" = {m}."id" AND {um}."user_profile_id" = {p})')
        else:
            select = (f'SELECT {um}."message_id" AS "id", {um}."flags" FROM "message_search" AS {s}'
                      f' CROSS JOIN "user_message" AS {um}'
                      f' ON ({um}."message_id" = {s}."rowid" AND {um}."user_profile_id" = {p})' + _MESSAGE_JOIN)
        searched = [condition for condition, _ in narrow.search_conditions]
        conditions = [match, *(c for c in narrow.conditions if not any(c is other for other in searched))]
        return table, rowid, select, [user.id], conditions

    def _parts(self, unread: bool) -> list[Any]:
        """The conditions (None: none) whose rows together match the narrow (`unread`: its
        unread rows): one per condition of unread_conditions() or, for the user's own rows, of
        received_conditions(), each of which an index serves. A shared history is read by
        message, one query."""
        if unread:
            return unread_conditions(self.id_column)
        if self.narrow.shared_history:
            return [None]
        return received_conditions(self.id_column)

    @staticmethod
    def _sql(select, params, conditions, search_table=None, order=None, limit=None) -> tuple[str, list[Any]]:
        """SQL of the rows of `select` (SQL text up to its WHERE, and its parameters) where every
        condition holds, in `order` (SQL text) and up to `limit`; and its parameters."""
        conditions = [condition for condition in conditions if condition is not None]
        where, where_params = (_compile(functools.reduce(lambda a, b: a & b, conditions), search_table)
                               if conditions else ("", []))
        if select.endswith(_MESSAGE_JOIN) and _MESSAGE_ALIAS + "." not in where:
            select = select[:-len(_MESSAGE_JOIN)]
        sql, params = [select], [*params, *where_params]
        if where:
            sql.append(" WHERE " + where)
        if order is not None:
            sql.append(" ORDER BY " + order)
        if limit is not None:
            sql.append(" LIMIT " + database.param)
            params.append(limit)
        return "".join(sql), params

    def _order_column(self) -> str:
        return f'{_MESSAGE_ALIAS}."id"' if self.id_column is Message.id else f'{_ROW_ALIAS}."message_id"'

    def row_queries(self, condition: Callable[[Any], Any] | None, descending: bool, limit: int,
                    unread: bool = False) -> list[tuple[str, list[Any]]]:
        """The queries (SQL, parameters) whose rows rows() joins, with the same arguments."""
        direction = " DESC" if descending else " ASC"
        if self.searched is not None:
            table, column, select, params, conditions = self.searched
            read = FLAG_BITS["read"]
            extra = [UserMessage.flags.bin_and(read) == 0 if unread or self.narrow.unread else None]
            queries = [(select, params, conditions + extra, table, f'{_MATCH_ALIAS}."rowid"')]
        else:
            column = self.id_column
            parts = self._parts(True) if unread and not self.narrow.unread else self.parts
            queries = [(self.select, self.select_params, [*self.conditions, part], None, self._order_column())
                       for part in parts]
        extra_condition = None if condition is None else condition(column)
        return [self._sql(select, params, [*conditions, extra_condition], table, order + direction, limit)
                for select, params, conditions, table, order in queries]

    def rows(self, condition: Callable[[Any], Any] | None, descending: bool, limit: int,
             unread: bool = False) -> list[tuple[int, int | None]]:
        """The first `limit` matching rows in id order (`unread`: of the unread ones only);
        `condition(id column)` narrows them further."""
        queries = self.row_queries(condition, descending, limit, unread)
        found = []
        for sql, params in queries:
            # The rows straight from the cursor: peewee's row wrappers cost more than the query.
            found += database.execute_sql(sql, params).fetchall()
        if len(queries) > 1:
            found = sorted({row[0]: row for row in found}.values(), key=lambda row: row[0], reverse=descending)
            del found[limit:]
        return found

    def widened(self, adjust: Callable[[Narrow], Any] | None = None) -> RangeQuery:
        """The same narrow with its search words matching as the start of words (narrow_query):
        for a whole-word search that found nothing in the narrow. Itself otherwise."""
        narrow = self.narrow
        if not narrow.search_terms or narrow.search_prefixes:
            return self
        return RangeQuery(self.user, _adjusted(Narrow(self.user, narrow.terms, search_prefixes=True), adjust))

    def first_unread_id(self) -> Any:
        rows = self.rows(None, False, 1, unread=True)
        return rows[0][0] if rows else None

    def first_on_or_after(self, timestamp: int) -> Any:
        rows = self.rows(lambda _: Message.date_sent >= timestamp, False, 1)
        return rows[0][0] if rows else None

    def with_ids(self, message_ids: list[int]) -> list[tuple[int, int]]:
        rows = [(row[0], row[1]) for part in self.parts for row in database.execute_sql(*self._sql(
            self.select, self.select_params, [*self.conditions, part, in_ids(self.id_column, message_ids)],
            order=self._order_column())).fetchall()]
        if len(self.parts) > 1:
            rows = sorted(dict(rows).items())
        return rows

    def fetch(self, anchor: int, num_before: int, num_after: int,
              include_anchor: bool) -> tuple[list[tuple[Any, ...]], tuple[bool, bool, bool]]:
        """Rows around an anchor id, and (found_anchor, found_oldest, found_newest)."""
        before = self.rows(lambda column: column < anchor, True, num_before + 1) if anchor > 0 else []
        found_oldest = len(before) <= num_before
        before = list(reversed(before[:num_before]))
        after = (self.rows(lambda column: column >= anchor, False, num_after + 2)
                 if anchor < LARGER_THAN_MAX_MESSAGE_ID else [])
        found_anchor = bool(after) and after[0][0] == anchor
        anchor_rows = after[:1] if found_anchor else []
        rest = after[1:] if found_anchor else after
        found_newest = len(rest) <= num_after
        rest = rest[:num_after]
        rows = before + (anchor_rows if include_anchor else []) + rest
        return rows, (found_anchor and include_anchor, found_oldest, found_newest)


def search_matches(message_ids: list[int], terms: list[str],
                   allow_empty_topic_name: bool) -> dict[int, tuple[str, str]]:
    """{id: (match_content, match_subject)} of these messages (those that still exist), in the
    order given. Only the two columns highlighted are read: loading whole message records, with
    their senders and channels, cost more than the rest of a search page."""
    if not message_ids:
        return {}
    stored = {mid: (topic, rendered) for mid, topic, rendered in query_rows(
        'SELECT "id", "topic", "rendered_content" FROM "message" WHERE "id" IN {ids}', ids=message_ids)}
    return {mid: (highlight(stored[mid][1], terms),
                  highlight_topic(display_topic(stored[mid][0], allow_empty_topic_name), terms))
            for mid in message_ids if mid in stored}


def highlight_topic(topic: str, terms: list[str]) -> str:
    """match_subject: the topic is plain text and clients insert the field as HTML, so it is
    escaped before the highlights are added (a topic can hold any markup)."""
    return highlight(html.escape(topic), terms)


def highlight(text_html: str, terms: list[str]) -> str:
    """Wrap matches of the search terms in <span class="highlight"> outside of tags: a term at
    a word's start, in any case, the longest first where two start at the same place."""
    if not terms:
        return text_html
    pattern, folded_terms = _highlighter(tuple(terms))
    # A pattern that ignores case makes Python's regular expressions try it at every position of
    # the text, most of a search page's time. The case-folded text is searched instead, by C,
    # and the pattern used only where folding changed the text's length (so its positions).
    folded = text_html.casefold()
    if len(folded) != len(text_html):
        return pattern.sub(_HIGHLIGHT, text_html)
    found = []
    for term in folded_terms:
        at = folded.find(term)
        while at >= 0:
            found.append((at, -len(term)))
            at = folded.find(term, at + 1)
    if not found:
        return text_html
    found.sort()  # by place, the longest first
    pieces, done = [], 0
    for at, negative_length in found:
        end = at - negative_length
        if at < done or not _word_start(text_html, at) or _within_tag(folded, end):
            continue
        pieces += [text_html[done:at], '<span class="highlight">', text_html[at:end], "</span>"]
        done = end
    pieces.append(text_html[done:])
    return "".join(pieces)


def _is_word(character: str) -> bool:
    return character.isalnum() or character == "_"  # a regular expression's \w


def _word_start(text: str, at: int) -> bool:
    """Whether a regular expression's \b holds before text[at]."""
    return (at > 0 and _is_word(text[at - 1])) != _is_word(text[at])


def _within_tag(text_html: str, end: int) -> bool:
    """Whether text_html[end] is inside a tag: sanitised HTML escapes every ">" but a tag's end,
    so a ">" before any "<" closes the tag the position is in."""
    closing = text_html.find(">", end)
    return closing >= 0 and text_html.find("<", end, closing) < 0


_HIGHLIGHT = r'<span class="highlight">\g<0></span>'


@functools.lru_cache(maxsize=64)
def _highlighter(terms: tuple[str, ...]) -> tuple[re.Pattern[str], list[str]]:
    """(the pattern highlight() uses where folding moved positions, the terms case-folded): a
    term at a word's start, the longest first, that is not inside a tag (_within_tag). The
    lookahead runs only where a term matched: matching each tag instead, to skip it, cost a
    Python call per tag."""
    escaped = [html.escape(t, quote=False) for t in sorted(terms, key=len, reverse=True)]
    words = "|".join(r"\b" + re.escape(term) for term in escaped)
    return re.compile(rf"(?:{words})(?![^<]*>)", re.IGNORECASE), [term.casefold() for term in escaped]


def resolve_anchor(query: RangeQuery, anchor: Any, anchor_date: Any) -> int:
    """A numeric anchor from the anchor parameter."""
    if anchor == "newest":
        return LARGER_THAN_MAX_MESSAGE_ID
    if anchor == "oldest":
        return 0
    if anchor == "first_unread":
        return query.first_unread_id() or LARGER_THAN_MAX_MESSAGE_ID
    if anchor == "date":
        if anchor_date is None:
            raise JsonableError("Missing 'anchor_date' argument", code="REQUEST_VARIABLE_MISSING",
                                var_name="anchor_date")
        return query.first_on_or_after(anchor_date) or LARGER_THAN_MAX_MESSAGE_ID
    return anchor


# --- the same narrows decided in memory, for message events (legacy [[operator, operand]] pairs) ---

MENTION_FLAGS = {"mentioned", "stream_wildcard_mentioned", "topic_wildcard_mentioned", "group_mentioned"}


def _participants(message, key):
    recipients = message.get("display_recipient")
    return {str(r[key]).lower() for r in recipients} if isinstance(recipients, list) else set()


def _dm_matches(message, operand, user_id, user_email):
    """A direct message between exactly the operand's users (with or without the receiver)."""
    if message.get("type") != "private":
        return False
    if isinstance(operand, list):
        wanted, own, found = {str(int(x)) for x in operand}, str(user_id), _participants(message, "id")
    else:
        # zulip-terminal joins emails with ", ", so split and strip.
        wanted = {e.strip().lower() for e in str(operand).split(",") if e.strip()}
        own, found = user_email.lower(), _participants(message, "email")
    return found in (wanted | {own}, wanted)


def _id_or_name_matches(operand, message_id, message_name):
    # is_id_string, not str.isdigit(): "²" is a digit to Python and no int to int().
    if (isinstance(operand, int) and not isinstance(operand, bool)) or is_id_string(operand):
        return message_id == int(operand)
    return str(message_name or "").lower() == str(operand).lower()


def message_matches_narrow(narrow: list[tuple[str, Any]], message: Any, flags: list[str], *, user_id: int,
                           user_email: str) -> bool:
    """Whether a message event's message dict belongs to a queue's narrow: (operator, operand)
    pairs, every one required, an empty narrow matching everything. Operators an event cannot
    decide (search, has, near, ...) let it through."""
    for operator, operand in narrow:
        operator = canonical_operator(operator)
        if operator == "channel":
            if message.get("type") != "stream" or not _id_or_name_matches(
                    operand, message.get("stream_id"), message.get("display_recipient")):
                return False
        elif operator == "topic":
            topic = message.get("subject", message.get("topic", ""))
            if message.get("type") != "stream" or topic.lower() != str(operand).lower():
                return False
        elif operator == "sender":
            if not _id_or_name_matches(operand, message.get("sender_id"), message.get("sender_email")):
                return False
        elif operator == "is":
            kind = str(operand).lower()
            if kind in ("dm", "private") and message.get("type") != "private":
                return False
            if kind == "starred" and "starred" not in flags:
                return False
            if kind == "mentioned" and not MENTION_FLAGS & set(flags):
                return False
        elif operator == "dm":
            if not _dm_matches(message, operand, user_id, user_email):
                return False
    return True
