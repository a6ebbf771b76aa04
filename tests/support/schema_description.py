"""A database's schema as plain data, read from the engine's own catalog (SQLite's pragmas,
PostgreSQL's pg_catalog and information_schema), so that two databases can be compared: one
made by the migrations, one made from the models, or one upgraded and one made new.

describe(db, backend_name) -> {table: {"columns", "primary_key", "indexes", "foreign_keys"}}:
- columns: {name: (type, nullable, default)}. The type as the engine states it (SQLite: the
  declared type, upper case; PostgreSQL: data_type with its length); the default as SQL text
  without PostgreSQL's casts (`'G'::character varying` is `'G'`), None for none and for an id
  sequence's nextval (which the primary key already says).
- primary_key: the primary key's columns, in order.
- indexes: {name: (columns, unique, predicate)}, the primary key's own index left out; the
  predicate of a partial index with spaces and parentheses removed (the engines print it
  differently), else None.
- foreign_keys: sorted (column, table, column it refers to, ON DELETE action).
"""

import re

ON_DELETE = {"a": "NO ACTION", "r": "RESTRICT", "c": "CASCADE", "n": "SET NULL", "d": "SET DEFAULT"}


def describe(db, backend_name, tables=None):
    """The schema of `tables` (default: every table) of an open peewee database."""
    read = _sqlite_table if backend_name == "sqlite" else _postgres_table
    return {table: read(db, table) for table in sorted(tables if tables is not None else all_tables(db, backend_name))}


def all_tables(db, backend_name):
    """Every table, SQLite's internal ones and FTS5's shadow tables (made by the FTS5 table) left out."""
    if backend_name == "sqlite":
        rows = db.execute_sql("SELECT name, sql FROM sqlite_master WHERE type = 'table'").fetchall()
        virtual = {name for name, sql in rows if sql and sql.upper().startswith("CREATE VIRTUAL TABLE")}
        return sorted(name for name, _sql in rows if not name.startswith("sqlite_")
                      and not any(name.startswith(f"{v}_") for v in virtual))
    rows = db.execute_sql("SELECT tablename FROM pg_tables WHERE schemaname = 'public'").fetchall()
    return sorted(name for (name,) in rows)


def predicate(text):
    """A partial index's WHERE clause, comparable across engines."""
    return re.sub(r"[\s()]", "", text).lower().replace("<>", "!=") if text else None


def _sqlite_table(db, table):
    columns, primary_key = {}, []
    for _cid, name, type_, notnull, default, pk in db.execute_sql(f'PRAGMA table_info("{table}")').fetchall():
        columns[name] = (type_.upper(), not notnull, default)
        if pk:
            primary_key.append((pk, name))
    indexes = {}
    for _seq, name, unique, origin, _partial in db.execute_sql(f'PRAGMA index_list("{table}")').fetchall():
        if origin == "pk":
            continue
        index_columns = tuple(row[2] for row in sorted(db.execute_sql(f'PRAGMA index_info("{name}")').fetchall()))
        (sql,) = db.execute_sql("SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?", (name,)).fetchone()
        where = re.search(r"\bWHERE\b(.*)$", sql or "", re.IGNORECASE | re.DOTALL)
        indexes[name] = (index_columns, bool(unique), predicate(where.group(1) if where else None))
    foreign_keys = sorted((row[3], row[2], row[4], row[6].upper())
                          for row in db.execute_sql(f'PRAGMA foreign_key_list("{table}")').fetchall())
    return {"columns": columns, "primary_key": tuple(name for _pk, name in sorted(primary_key)),
            "indexes": indexes, "foreign_keys": foreign_keys}


def _postgres_default(text):
    if text is None or text.startswith("nextval("):
        return None
    return re.sub(r"::[a-z ]+(\[\])?", "", text)


def _postgres_table(db, table):
    columns = {}
    for name, data_type, length, nullable, default in db.execute_sql(
            "SELECT column_name, data_type, character_maximum_length, is_nullable, column_default"
            " FROM information_schema.columns WHERE table_schema = 'public' AND table_name = %s", (table,)).fetchall():
        columns[name] = (f"{data_type}({length})" if length else data_type, nullable == "YES", _postgres_default(default))
    (primary_key,) = db.execute_sql(
        "SELECT ARRAY(SELECT a.attname FROM unnest(c.conkey) WITH ORDINALITY AS k(attnum, n)"
        " JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum ORDER BY k.n)"
        " FROM pg_constraint c WHERE c.conrelid = %s::regclass AND c.contype = 'p'", (f'public."{table}"',)
    ).fetchone() or ([],)
    indexes = {}
    for name, unique, where, index_columns in db.execute_sql(
            "SELECT i.relname, x.indisunique, pg_get_expr(x.indpred, x.indrelid),"
            " ARRAY(SELECT pg_get_indexdef(x.indexrelid, k, true) FROM generate_series(1, x.indnatts) AS k ORDER BY k)"
            " FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid"
            " WHERE x.indrelid = %s::regclass AND NOT x.indisprimary", (f'public."{table}"',)).fetchall():
        indexes[name] = (tuple(c.strip('"') for c in index_columns), unique, predicate(where))
    foreign_keys = sorted((column, target, target_column, ON_DELETE[action]) for column, target, target_column, action
                          in db.execute_sql(
        "SELECT a.attname, t.relname, ta.attname, c.confdeltype FROM pg_constraint c"
        " JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]"
        " JOIN pg_class t ON t.oid = c.confrelid"
        " JOIN pg_attribute ta ON ta.attrelid = c.confrelid AND ta.attnum = c.confkey[1]"
        " WHERE c.conrelid = %s::regclass AND c.contype = 'f'", (f'public."{table}"',)).fetchall())
    return {"columns": columns, "primary_key": tuple(primary_key), "indexes": indexes, "foreign_keys": foreign_keys}
