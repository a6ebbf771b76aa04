"""The model base class, bound to a database chosen at start-up (late initialisation)."""

import json
import time
from typing import TYPE_CHECKING, Any

import peewee
from peewee import (AutoField, BigAutoField, BigIntegerField, CharField, DatabaseProxy, ForeignKeyAccessor, IntegerField,
                    Model, TextField)

from chat_appliance.db import runtime
from chat_appliance.models.limits import check_text_lengths


class RuntimeDatabase(DatabaseProxy):
    """The models' database: the current runtime's (runtime.current()), so that each app's
    requests use its own database. `initialize` is not used: runtimes are installed instead."""

    __slots__ = ()

    @property
    def obj(self):
        active = runtime.current()
        return active.database if active is not None else None

    @obj.setter
    def obj(self, value):
        if value is not None:
            raise AttributeError("install a runtime.Runtime instead of initialising the proxy")

    def __setattr__(self, attr, value):
        object.__setattr__(self, attr, value)

    def __getattr__(self, attr):
        # peewee's Proxy looks the database up twice per attribute (a check, then the use); the
        # models reach it several times per query.
        active = runtime.current()
        if active is None:
            raise AttributeError("Cannot use uninitialized Proxy.")
        return getattr(active.database, attr)


database = RuntimeDatabase()

# The largest integer an id or timestamp column holds (64-bit signed on SQLite and PostgreSQL);
# a larger client-sent number must be refused before a query, which would raise OverflowError.
MAX_DATABASE_INT = 2**63 - 1


def now():
    """The current UNIX time in whole seconds, as every API timestamp is."""
    return int(time.time())


class JSONField(TextField):
    """JSON text, decoded to Python on read."""

    if TYPE_CHECKING:
        # For mypy only: a JSONField attribute of a row holds decoded JSON (a dict, a list, ...).
        def __get__(self, instance: Any, owner: Any) -> Any: ...

    def db_value(self, value):
        return None if value is None else json.dumps(value, separators=(",", ":"))

    def python_value(self, value):
        return None if value is None else json.loads(value)


class RowForeignKeyAccessor(ForeignKeyAccessor):
    """peewee's lazy loading of a related row (`message.sender`, `user.realm`), through SQL
    built once: peewee assembles a query for each load, which made `sender.realm` alone cost
    more than a whole send's inserts."""

    def get_rel_instance(self, instance):
        related = instance.__rel__
        if self.name in related:
            return related[self.name]
        value = instance.__data__.get(self.name)
        if value is None:
            if not self.field.null and self.field.lazy_load:
                raise self.rel_model.DoesNotExist
            return value
        if not self.field.lazy_load:
            return value
        rows = raw_select(self.rel_model, f'"{self.field.rel_field.column_name}" = {{p}}', value)
        if not rows:
            raise self.rel_model.DoesNotExist(f"{self.rel_model.__name__} {value} does not exist")
        related[self.name] = rows[0]
        return rows[0]


class ForeignKeyField(peewee.ForeignKeyField):
    """The models' foreign keys: peewee's, loading related rows through RowForeignKeyAccessor."""

    accessor_class = RowForeignKeyAccessor


class BaseModel(Model):
    """Every write through a model is held to the table of text limits (models/limits.py)."""

    class Meta:
        database = database
        legacy_table_names = False

    @classmethod
    def insert(cls, __data=None, **insert):
        check_text_lengths(cls, __data or insert)
        return super().insert(__data, **insert)

    @classmethod
    def insert_many(cls, rows, fields=None):
        rows = list(rows)
        for row in rows:
            if isinstance(row, dict):
                check_text_lengths(cls, row)
            elif fields is not None:
                check_text_lengths(cls, dict(zip(fields, row)))
        return super().insert_many(rows, fields)

    @classmethod
    def update(cls, __data=None, **update):
        check_text_lengths(cls, __data or update)
        return super().update(__data, **update)

    def save(self, *args, **kwargs):
        # Only what changes: a row stored before a limit existed can still be saved otherwise.
        changed = {name: value for name, value in self.__data__.items() if name in self._dirty}
        check_text_lengths(type(self), changed)
        return super().save(*args, **kwargs)


def in_ids(column, ids):
    """`column IN (?, ?, ...)` bound as one fragment. Peewee builds a node per value for a
    plain `.in_(list)`, which costs more than the query on the hot fetch path."""
    from peewee import SQL

    ids = list(ids)
    if not ids:
        return SQL("0 = 1")
    return column.in_(SQL("(" + ",".join([database.param] * len(ids)) + ")", ids))


# SQL text of raw_select, by (model, condition, placeholder, list length).
_RAW_SELECT_SQL: dict[tuple, str] = {}


def raw_select(model, condition, *params, ids=None):
    """Rows of `model` (all columns, as model instances) WHERE `condition`, a SQL fragment with
    `{p}` for each parameter and `{ids}` for an optional list of ids. The SQL is built once per
    shape: on the hot paths (a send, a fetch) peewee's query building costs more than the
    lookups themselves."""
    build = _ROW_BUILDERS.get(model) or _row_builder(model)
    return [build(row) for row in raw_select_rows(model, condition, *params, ids=ids)]


def raw_select_rows(model, condition, *params, ids=None):
    """raw_select's rows as the driver's tuples, for a caller that keeps them (lib/snapshots.py)
    and makes instances of them with `instance_from_row`."""
    param = model._meta.database.param
    key = (model, condition, param, None if ids is None else len(ids))
    sql = _RAW_SELECT_SQL.get(key)
    if sql is None:
        columns = ", ".join(f'"{field.column_name}"' for field in model._meta.sorted_fields)
        id_list = "" if ids is None else "(" + ",".join([param] * len(ids)) + ")"
        sql = _RAW_SELECT_SQL[key] = (f'SELECT {columns} FROM "{model._meta.table_name}" WHERE '
                                      + condition.format(p=param, ids=id_list))
    return database.execute_sql(sql, (*params, *(ids or ()))).fetchall()


def instance_from_row(model, row):
    """A new instance of `model` from a row of raw_select_rows."""
    return (_ROW_BUILDERS.get(model) or _row_builder(model))(row)


# Model -> function making an instance from a row of all its columns, in sorted_fields order.
_ROW_BUILDERS: dict = {}
# Fields whose database value is already the Python value (peewee's python_value only copies it).
_PLAIN_FIELDS = (AutoField, BigAutoField, IntegerField, BigIntegerField, CharField)


def _row_builder(model):
    """What peewee does for each row of `model.raw(...)`, without its per-field setattr calls:
    a fifth of the cost, on paths that read a row per request (the account, the channel)."""
    fields = model._meta.sorted_fields
    names = [field.name for field in fields]
    converted = []
    for field in fields:
        target = field.rel_field if isinstance(field, peewee.ForeignKeyField) else field
        if type(target) not in _PLAIN_FIELDS and type(target) is not TextField:
            converted.append((field.name, target.python_value))
    new = model.__new__

    def build(row):
        data = dict(zip(names, row))
        for name, convert in converted:
            value = data[name]
            if value is not None:
                data[name] = convert(value)
        instance = new(model)
        instance.__data__ = data
        instance._dirty = set()
        instance.__rel__ = {}
        return instance

    _ROW_BUILDERS[model] = build
    return build


# SQL text of insert_row, by (model, field names, placeholder).
_INSERT_SQL: dict[tuple, str] = {}


def insert_row(model, **values):
    """INSERT one row of `model` from field values (as Model.create takes them, related rows
    included) and return it as an instance with its new id, through SQL built once per shape:
    peewee assembling the INSERT cost more than the insert on the send path. SQLite (3.35 and
    later) and PostgreSQL both answer RETURNING."""
    check_text_lengths(model, values)
    fields = model._meta.fields
    param = database.param
    key = (model, tuple(values), param)
    sql = _INSERT_SQL.get(key)
    if sql is None:
        columns = ", ".join(f'"{fields[name].column_name}"' for name in values)
        primary_key = model._meta.primary_key.column_name
        sql = _INSERT_SQL[key] = (f'INSERT INTO "{model._meta.table_name}" ({columns}) VALUES '
                                  f'({", ".join([param] * len(values))}) RETURNING "{primary_key}"')
    row_id = database.execute_sql(sql, [fields[name].db_value(value) for name, value in values.items()]).fetchone()[0]
    instance = model(**values)
    instance._pk = row_id
    instance._dirty.clear()
    return instance


# SQL text of query_rows, by (template, placeholder, list length).
_QUERY_ROWS_SQL: dict[tuple, str] = {}


def query_rows(template, *params, ids=None):
    """Tuples from a hand-written query whose text is formatted once per shape: `{p}` stands for
    each parameter and `{ids}` for an optional list of ids. For hot queries only; the SQL must run
    on SQLite and PostgreSQL alike (quoted names; booleans tested bare, as `AND "active"`)."""
    param = database.param
    key = (template, param, None if ids is None else len(ids))
    sql = _QUERY_ROWS_SQL.get(key)
    if sql is None:
        id_list = "" if ids is None else "(" + ",".join([param] * len(ids)) + ")"
        sql = _QUERY_ROWS_SQL[key] = template.format(p=param, ids=id_list)
    return database.execute_sql(sql, (*params, *(ids or ()))).fetchall()
