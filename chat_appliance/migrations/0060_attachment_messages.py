"""Migration 60: a file is shared by the messages that link it, recorded in attachment_message.

Knowing a file's URL is not access: a message linking it shares it with that message's readers
only if its sender could open the file. Existing links are carried over under the same rule:
the sender uploaded the file, or had received an earlier message that shared it; any other link
was never access and is not carried over. Plain integer columns, as the model has: the rows go
with their message in the one deletion path.
"""

from peewee import IntegerField

from chat_appliance.migrations.frozen import Frozen

DESCRIPTION = "files shared by the messages that link them"


def apply(database, backend):
    frozen = Frozen(database)

    class AttachmentMessage(frozen.Model):
        attachment_id = IntegerField()
        message_id = IntegerField(index=True)

        class Meta:
            table_name = "attachment_message"
            legacy_table_names = True  # index names from the class name, as shipped (111 renames them)
            indexes = ((("attachment_id", "message_id"), True),)

    frozen.create(AttachmentMessage)
    attachments = database.execute_sql("SELECT id, path_id, owner_id, realm_id FROM attachment").fetchall()
    for attachment_id, path_id, owner_id, realm_id in attachments:
        rows = database.execute_sql(
            f"SELECT id, sender_id FROM message WHERE realm_id = {database.param} AND content LIKE {database.param} "
            "ORDER BY id", (realm_id, f"%/user_uploads/{path_id}%")).fetchall()
        linked = []
        for message_id, sender_id in rows:
            allowed = sender_id == owner_id or (linked and database.execute_sql(
                f"SELECT 1 FROM user_message WHERE user_profile_id = {database.param} AND message_id IN "
                f"({', '.join([database.param] * len(linked))})", (sender_id, *linked)).fetchone())
            if allowed:
                AttachmentMessage.insert(attachment_id=attachment_id, message_id=message_id).execute()
                linked.append(message_id)
