"""Migration 114: the tables several `serve --shard-id` processes share (docs/scaling.md):
event_log (events too large for a NOTIFY payload), rate_limit_bucket and rate_limit_failure (rate
limits counted across shards) and shard_queue_holder (who holds a queue where, for missed-message
mail). A single process leaves them empty.
"""

from peewee import BigIntegerField, CharField, DoubleField, IntegerField, TextField

from chat_appliance.migrations.frozen import Frozen

DESCRIPTION = "shards: event log, shared rate limits, queue holders, cache generation"


def apply(database, backend):
    frozen = Frozen(database)

    class FrozenEventLog(frozen.Model):
        payload = TextField()
        created = DoubleField()

        class Meta:
            table_name = "event_log"
            indexes = ((("created",), False),)

    class FrozenRateLimitBucket(frozen.Model):
        key = TextField(primary_key=True)
        tokens = DoubleField()
        updated = DoubleField()
        seconds = IntegerField()

        class Meta:
            table_name = "rate_limit_bucket"

    class FrozenRateLimitFailure(frozen.Model):
        key = TextField()
        at = DoubleField()
        seconds = IntegerField()

        class Meta:
            table_name = "rate_limit_failure"
            indexes = ((("key", "at"), False),)

    class FrozenShardQueueHolder(frozen.Model):
        user_id = IntegerField()
        shard = CharField(max_length=16)
        seen = DoubleField()

        class Meta:
            table_name = "shard_queue_holder"
            indexes = ((("user_id", "shard"), True), (("shard",), False))

    class FrozenShardCacheGeneration(frozen.Model):
        value = BigIntegerField()

        class Meta:
            table_name = "shard_cache_generation"

    frozen.create(FrozenEventLog, FrozenRateLimitBucket, FrozenRateLimitFailure, FrozenShardQueueHolder,
                  FrozenShardCacheGeneration)
