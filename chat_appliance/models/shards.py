"""What several processes share beyond the organization's data. For `serve --shard-id` processes
(docs/scaling.md): events too large for a notification, rate-limit counts, and which shards hold
queues of whom, written and read with SQL by events/shards.py and web/shared_rate_limit.py; a
single process leaves these tables empty. On SQLite, for every process on the file (a server, an
admin command): the counter of configuration changes that triggers raise (ConfigGeneration)."""

from peewee import BigIntegerField, CharField, DoubleField, IntegerField, TextField

from chat_appliance.models.base import BaseModel


class EventLog(BaseModel):
    """An event whose notification payload is over PostgreSQL's limit: the notification carries
    this row's id, every shard reads the row. Pruned after a few minutes."""

    payload = TextField()
    created = DoubleField()

    class Meta:
        table_name = "event_log"
        indexes = ((("created",), False),)


class RateLimitBucket(BaseModel):
    """One token bucket ("domain|key|seconds|limit"): tokens left at `updated` (UNIX time)."""

    key = TextField(primary_key=True)
    tokens = DoubleField()
    updated = DoubleField()
    seconds = IntegerField()

    class Meta:
        table_name = "rate_limit_bucket"


class RateLimitFailure(BaseModel):
    """One failed login, counted in the window of `key` ("domain|key|seconds|limit")."""

    key = TextField()
    at = DoubleField()
    seconds = IntegerField()

    class Meta:
        table_name = "rate_limit_failure"
        indexes = ((("key", "at"), False),)


class ShardQueueHolder(BaseModel):
    """A user who has an event queue that takes messages on a shard, as that shard last said
    (`seen`, UNIX time): whether someone is away (missed-message mail) is asked of every shard's
    queues, not only of the shard that sends the mail."""

    user_id = IntegerField()
    shard = CharField(max_length=16)
    seen = DoubleField()

    class Meta:
        table_name = "shard_queue_holder"
        indexes = ((("user_id", "shard"), True), (("shard",), False))


class ShardCacheGeneration(BaseModel):
    """One row (id 1): a counter that every write announcing a change to what the caches hold
    (an edit, a reaction, a renamed user ...) raises in its transaction. A shard compares it with
    the value it last saw before trusting a cache, so an edit committed on one shard empties the
    caches of every shard before their next read."""

    value = BigIntegerField()

    class Meta:
        table_name = "shard_cache_generation"


class ConfigGeneration(BaseModel):
    """One row (id 1), on SQLite: a counter that triggers raise with every change to a row of the
    tables a send's kept reads depend on (migration 117 lists them). backends/sqlite.Versions reads
    it, and lib/snapshots.py trusts a kept read while it has not moved. Empty on PostgreSQL, which
    keeps no reads."""

    value = BigIntegerField()

    class Meta:
        table_name = "config_generation"
