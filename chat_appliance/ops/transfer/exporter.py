"""Write this server's organization in Zulip's export layout (see layout.py).

What is exported: the organization, users (system bots as Zulip's cross-realm bots), groups and
memberships, channels, recipients, subscriptions, direct-message groups, messages with every
user's flags, reactions, uploads and their files, custom emoji and their images, linkifiers,
playgrounds, custom profile fields and values, default channels, channel folders, topic visibility,
alert words, muted users, statuses, presence, bot storage, saved snippets, navigation views and the
new-user settings defaults. Like Zulip,
not exported: passwords and API keys (the importing server hands out new ones), drafts, push
registrations. Our own organization settings that Zulip has no column for travel in an extra
table, chat_appliance_realm, which Zulip's importer ignores.
"""

import hashlib
import json
import os
import shutil
from pathlib import Path

from chat_appliance.lib.uploads import messages_linking
from chat_appliance.lib.user_settings import all_user_settings
from chat_appliance import migrations
from chat_appliance.models import (
    FLAG_BITS,
    AlertWord,
    Attachment,
    BotStorageData,
    ChannelFolder,
    CustomProfileField,
    CustomProfileFieldValue,
    DirectMessageGroup,
    DirectMessageGroupMember,
    GroupGroupMembership,
    Linkifier,
    Message,
    MutedUser,
    NavigationView,
    Reaction,
    Realm,
    RealmEmoji,
    RealmPlayground,
    Recipient,
    SavedSnippet,
    Stream,
    Subscription,
    UserGroup,
    UserGroupMembership,
    UserMessage,
    UserPresence,
    UserProfile,
    UserStatus,
    UserTopic,
)
from chat_appliance.ops.transfer import layout

# Zulip's export types: public data only, or a standard export with the private data of the
# users who consented (allow_private_data_export). `chat-appliance export` writes everything.
EXPORT_PUBLIC, EXPORT_WITH_CONSENT, EXPORT_FULL = 1, 2, 3
# Our name for Zulip's own emoji namespace (chat-api.md) and Zulip's, in exports.
ZULIP_REACTION_TYPES = {"service_extra_emoji": "zulip_extra_emoji"}


def _float(timestamp):
    return None if timestamp is None else float(timestamp)


def write_json(path, data, indent=2):
    """JSON, indented as Zulip writes it (diffable by people) except for the big message files,
    where Python's indenting encoder would cost more than everything else."""
    Path(path).write_text(json.dumps(data, indent=indent, sort_keys=False))


def _sorted(rows):
    return sorted(rows, key=lambda row: row["id"])


class Exporter:
    """One export of one organization into `output_dir`; `instance_path` holds the files."""
    def __init__(self, realm, instance_path, output_dir, progress=None, export_type=EXPORT_FULL):
        self.realm = realm
        self.export_type = export_type
        self.instance = Path(instance_path)
        self.out = Path(output_dir)
        self.progress = progress or (lambda label, done, total: None)

    # --- tables -------------------------------------------------------------------------------

    def realm_tables(self):
        realm = self.realm
        settings = dict(realm.settings or {})
        tables = {}
        tables["zerver_realm"] = [{
            "id": realm.id, "name": realm.name, "string_id": realm.host.split(".")[0] if realm.host else "",
            "description": realm.description, "date_created": _float(realm.date_created), "deactivated": False,
            "allow_message_editing": realm.allow_message_editing,
            "message_content_edit_limit_seconds": realm.message_content_edit_limit_seconds,
            "message_edit_history_visibility_policy": realm.message_edit_history_visibility_policy,
            "moderation_request_channel": realm.moderation_request_channel_id,
            "can_mention_many_users_group": realm.can_mention_many_users_group_id,
            "mandatory_topics": bool(settings.get("mandatory_topics", False)),
        }]
        tables["chat_appliance_realm"] = [{"id": realm.id, "host": realm.host, "url": realm.url,
                                           "settings": settings}]
        tables["zerver_defaultstream"] = [{"id": i, "realm": realm.id, "stream": stream_id}
                                          for i, stream_id in enumerate(settings.get("default_stream_ids", []), 1)]
        defaults = dict(settings.get("user_settings_defaults", {}))
        tables["zerver_realmuserdefault"] = [{"id": 1, "realm": realm.id, **defaults}]
        tables.update(self.user_tables())
        tables.update(self.group_tables())
        tables.update(self.channel_tables())
        tables.update(self.customization_tables())
        return tables

    def users(self):
        return list(UserProfile.select().where(UserProfile.realm == self.realm.id).order_by(UserProfile.id))

    def user_tables(self):
        users = self.users()
        self.personal_recipient = {}
        next_recipient = (Recipient.select(Recipient.id).order_by(Recipient.id.desc()).scalar() or 0) + 1
        for user in users:
            self.personal_recipient[user.id] = next_recipient
            next_recipient += 1
        rows, crossrealm = [], []
        for user in users:
            if user.is_system_bot:
                crossrealm.append({"id": user.id, "email": user.email,
                                   "recipient_id": self.personal_recipient[user.id]})
                continue
            row = all_user_settings(user)
            row.update({
                "id": user.id, "email": user.email, "delivery_email": user.delivery_email,
                "full_name": user.full_name, "realm": user.realm_id, "role": user.role, "is_active": user.is_active,
                "is_bot": user.is_bot, "bot_type": user.bot_type, "bot_owner": user.bot_owner_id,
                "date_joined": _float(user.date_joined), "timezone": user.timezone,
                "email_address_visibility": user.email_address_visibility, "avatar_source": "G",
                "avatar_version": user.avatar_version, "is_mirror_dummy": False,
                # Soft deactivation, as Zulip exports it: an idle person's rows after
                # last_active_message_id exist only where they carry a flag.
                "long_term_idle": bool(user.long_term_idle), "last_active_message_id": user.last_active_message_id,
                "recipient": self.personal_recipient[user.id],
            })
            rows.append(row)
        user_ids = [u.id for u in users]
        tables = {"zerver_userprofile": rows, "zerver_userprofile_mirrordummy": [],
                  "zerver_userprofile_crossrealm": crossrealm}
        tables["zerver_alertword"] = [{"id": a.id, "user_profile": a.user_profile_id, "realm": self.realm.id,
                                       "word": a.word} for a in AlertWord.select().where(
                                           AlertWord.user_profile.in_(user_ids))]
        tables["zerver_muteduser"] = [{"id": m.id, "user_profile": m.user_profile_id, "muted_user": m.muted_user_id,
                                       "date_muted": _float(m.date_muted)} for m in MutedUser.select().where(
                                           MutedUser.user_profile.in_(user_ids))]
        tables["zerver_userstatus"] = [{"id": s.id, "user_profile": s.user_profile_id,
                                        "timestamp": _float(s.timestamp), "client": 1,
                                        "status_text": s.status_text, "emoji_name": s.emoji_name,
                                        "emoji_code": s.emoji_code, "reaction_type": s.reaction_type or "unicode_emoji"}
                                       for s in UserStatus.select().where(UserStatus.user_profile.in_(user_ids))]
        tables["zerver_userpresence"] = [{"id": p.id, "user_profile": p.user_profile_id, "realm": self.realm.id,
                                          "last_connected_time": _float(p.last_connected_time),
                                          "last_active_time": _float(p.last_active_time),
                                          "last_update_id": p.last_update_id}
                                         for p in UserPresence.select().where(UserPresence.user_profile.in_(user_ids))]
        tables["zerver_botstoragedata"] = [{"id": b.id, "bot_profile": b.bot_profile_id, "key": b.key,
                                            "value": b.value} for b in BotStorageData.select().where(
                                                BotStorageData.bot_profile.in_(user_ids))]
        tables["zerver_customprofilefieldvalue"] = [
            {"id": v.id, "user_profile": v.user_profile_id, "field": v.field_id, "value": v.value,
             "rendered_value": v.rendered_value}
            for v in CustomProfileFieldValue.select().where(CustomProfileFieldValue.user_profile.in_(user_ids))]
        return tables

    def group_tables(self):
        groups = list(UserGroup.select().where(UserGroup.realm == self.realm.id).order_by(UserGroup.id))
        ids = [g.id for g in groups]
        return {
            "zerver_usergroup": [{"id": g.id, "realm": g.realm_id} for g in groups],
            "zerver_namedusergroup": [{
                "usergroup_ptr": g.id, "name": g.name, "description": g.description,
                "is_system_group": g.is_system_group, "realm_for_sharding": g.realm_id, "deactivated": g.deactivated,
                "date_created": _float(g.date_created), "creator": g.creator_id, **(g.settings or {}),
            } for g in groups],
            "zerver_usergroupmembership": [
                {"id": m.id, "user_group": m.user_group_id, "user_profile": m.user_profile_id}
                for m in UserGroupMembership.select().where(UserGroupMembership.user_group.in_(ids))],
            "zerver_groupgroupmembership": [
                {"id": m.id, "supergroup": m.supergroup_id, "subgroup": m.subgroup_id}
                for m in GroupGroupMembership.select().where(GroupGroupMembership.supergroup.in_(ids))],
        }

    def channel_tables(self):
        streams = list(Stream.select().where(Stream.realm == self.realm.id).order_by(Stream.id))
        active = {u.id: u.is_active for u in self.users()}
        stream_rows = [{
            "id": s.id, "name": s.name, "realm": s.realm_id, "date_created": _float(s.date_created),
            "deactivated": s.deactivated, "description": s.description,
            "rendered_description": s.rendered_description, "invite_only": s.invite_only,
            "history_public_to_subscribers": s.history_public_to_subscribers, "is_web_public": s.is_web_public,
            "recipient": s.recipient_id, "message_retention_days": s.message_retention_days,
            "first_message_id": s.first_message_id, "creator": s.creator_id, "folder": s.folder_id,
            **(s.settings or {}),
        } for s in streams]
        recipients = [{"id": s.recipient_id, "type": layout.RECIPIENT_STREAM, "type_id": s.id} for s in streams]
        subscriptions = [{
            "id": sub.id, "user_profile": sub.user_profile_id, "recipient": sub.stream.recipient_id,
            "active": sub.active, "is_user_active": active.get(sub.user_profile_id, False), "is_muted": sub.is_muted,
            "color": sub.color, "pin_to_top": sub.pin_to_top, "desktop_notifications": sub.desktop_notifications,
            "audible_notifications": sub.audible_notifications, "push_notifications": sub.push_notifications,
            "email_notifications": sub.email_notifications, "wildcard_mentions_notify": sub.wildcard_mentions_notify,
        } for sub in Subscription.select(Subscription, Stream).join(Stream).where(Stream.realm == self.realm.id)]
        next_sub = max([s["id"] for s in subscriptions], default=0) + 1

        def synthetic_subscription(user_id, recipient_id):
            nonlocal next_sub
            row = {"id": next_sub, "user_profile": user_id, "recipient": recipient_id, "active": True,
                   "is_user_active": active.get(user_id, False), "is_muted": False, "color": "#c2c2c2",
                   "pin_to_top": False, "desktop_notifications": None, "audible_notifications": None,
                   "push_notifications": None, "email_notifications": None, "wildcard_mentions_notify": None}
            next_sub += 1
            return row

        for user_id, recipient_id in self.personal_recipient.items():
            recipients.append({"id": recipient_id, "type": layout.RECIPIENT_PERSONAL, "type_id": user_id})
            subscriptions.append(synthetic_subscription(user_id, recipient_id))
        huddles = []
        user_ids = set(active)
        members = {}
        for row in DirectMessageGroupMember.select():
            members.setdefault(row.group_id, []).append(row.user_profile_id)
        for group in DirectMessageGroup.select().order_by(DirectMessageGroup.id):
            member_ids = sorted(members.get(group.id, []))
            if not member_ids or not set(member_ids) <= user_ids:
                continue
            huddles.append({"id": group.id, "huddle_hash": hashlib.sha1(group.member_key.encode()).hexdigest(),
                            "recipient": group.recipient_id, "group_size": group.group_size})
            recipients.append({"id": group.recipient_id, "type": layout.RECIPIENT_HUDDLE, "type_id": group.id})
            subscriptions.extend(synthetic_subscription(uid, group.recipient_id) for uid in member_ids)
        topics = [{
            "id": t.id, "user_profile": t.user_profile_id, "stream": t.stream_id, "recipient": t.stream.recipient_id,
            "topic_name": t.topic, "last_updated": _float(t.last_updated), "visibility_policy": t.visibility_policy,
        } for t in UserTopic.select(UserTopic, Stream).join(Stream).where(Stream.realm == self.realm.id)
            if self.may_export_topic_of(t.user_profile_id, t.stream)]
        return {"zerver_stream": stream_rows, "zerver_recipient": recipients, "zerver_subscription": subscriptions,
                "zerver_huddle": huddles, "zerver_usertopic": topics}

    def customization_tables(self):
        realm_id = self.realm.id
        user_ids = [u.id for u in self.users()]
        return {
            "zerver_channelfolder": [{
                "id": f.id, "realm": f.realm_id, "name": f.name, "description": f.description,
                "rendered_description": f.rendered_description, "date_created": _float(f.date_created),
                "creator": f.creator_id, "order": f.order, "is_archived": f.is_archived,
            } for f in ChannelFolder.select().where(ChannelFolder.realm == realm_id)],
            "zerver_savedsnippet": [{
                "id": s.id, "realm": realm_id, "user_profile": s.user_profile_id, "title": s.title,
                "content": s.content, "date_created": _float(s.date_created),
            } for s in SavedSnippet.select().where(SavedSnippet.user_profile.in_(user_ids))],
            "zerver_navigationview": [{
                "id": v.id, "user": v.user_profile_id, "fragment": v.fragment, "is_pinned": v.is_pinned,
                "name": v.name,
            } for v in NavigationView.select().where(NavigationView.user_profile.in_(user_ids))],
            "zerver_realmemoji": [{"id": e.id, "realm": e.realm_id, "author": e.author_id, "name": e.name,
                                   "file_name": e.file_name, "is_animated": e.is_animated,
                                   "deactivated": e.deactivated}
                                  for e in RealmEmoji.select().where(RealmEmoji.realm == realm_id)],
            "zerver_realmfilter": [{"id": f.id, "realm": f.realm_id, "pattern": f.pattern,
                                    "url_template": f.url_template, "order": f.order}
                                   for f in Linkifier.select().where(Linkifier.realm == realm_id)],
            "zerver_realmplayground": [{"id": p.id, "realm": p.realm_id, "name": p.name,
                                        "pygments_language": p.pygments_language, "url_template": p.url_template}
                                       for p in RealmPlayground.select().where(RealmPlayground.realm == realm_id)],
            "zerver_customprofilefield": [{
                "id": f.id, "realm": f.realm_id, "name": f.name, "hint": f.hint, "field_type": f.field_type,
                "field_data": f.field_data, "order": f.order,
                "display_in_profile_summary": f.display_in_profile_summary, "required": f.required,
                "editable_by_user": f.editable_by_user,
            } for f in CustomProfileField.select().where(CustomProfileField.realm == realm_id)],
        }

    # --- messages -------------------------------------------------------------------------------

    def may_export_topic_of(self, user_id, stream):
        """Whether a person's topic setting (which names the topic) goes into this export: under
        the access model a private channel's topic names are private data, so the public export
        holds public channels' only, and the export with consent adds those of consenting people
        (one private channel's topic names would otherwise leak to every reader of the export)."""
        if self.export_type == EXPORT_FULL or not stream.invite_only:
            return True
        return self.export_type == EXPORT_WITH_CONSENT and user_id in self.consenting

    def write_messages(self, tables):
        """messages-NNNNNN.json files; returns (message ids, client table, reactions)."""
        recipients = {r["id"] for r in tables["zerver_recipient"]}
        ids = [m.id for m in Message.select(Message.id).where(Message.realm == self.realm.id).order_by(Message.id)]
        clients, reactions, exported = {}, [], []
        usermessage_id = 0
        total = len(ids)
        for file_number, start in enumerate(range(0, max(total, 1), layout.MESSAGES_PER_FILE), 1):
            chunk_ids = ids[start:start + layout.MESSAGES_PER_FILE]
            messages = list(Message.select().where(Message.id.in_(chunk_ids)).order_by(Message.id))
            rows = []
            for m in messages:
                if m.recipient_id not in recipients:
                    continue
                client_id = clients.setdefault(m.sending_client or "Unspecified", len(clients) + 1)
                rows.append({
                    "id": m.id, "sender": m.sender_id, "recipient": m.recipient_id, "realm": m.realm_id,
                    "subject": m.topic, "content": m.content, "rendered_content": m.rendered_content,
                    "rendered_content_version": 1, "date_sent": _float(m.date_sent), "sending_client": client_id,
                    "last_edit_time": _float(m.last_edit_time),
                    "edit_history": json.dumps(m.edit_history) if m.edit_history is not None else None,
                    "has_attachment": m.has_attachment, "has_image": m.has_image, "has_link": m.has_link,
                    "is_channel_message": m.stream_id is not None, "type": 1,
                })
            rows = self.exportable(rows, tables)
            row_ids = [r["id"] for r in rows]
            usermessages = []
            for user_id, message_id, flags in (
                    UserMessage.select(UserMessage.user_profile, UserMessage.message, UserMessage.flags)
                    .where(UserMessage.message.in_(row_ids))
                    .order_by(UserMessage.message, UserMessage.user_profile).tuples()):
                if self.export_type == EXPORT_WITH_CONSENT and user_id not in self.consenting:
                    continue
                usermessage_id += 1
                usermessages.append({"id": usermessage_id, "user_profile": user_id, "message": message_id,
                                     "flags_mask": layout.zulip_flags_mask(flags, FLAG_BITS)})
            reactions += [{"id": r.id, "user_profile": r.user_profile_id, "message": r.message_id,
                           "emoji_name": r.emoji_name, "emoji_code": r.emoji_code,
                           "reaction_type": ZULIP_REACTION_TYPES.get(r.reaction_type, r.reaction_type)}
                          for r in Reaction.select().where(Reaction.message.in_(row_ids))]
            if rows or file_number == 1:
                write_json(self.out / layout.MESSAGE_FILE_TEMPLATE.format(file_number),
                           {"zerver_message": rows, "zerver_usermessage": usermessages}, indent=None)
            exported += row_ids
            self.progress("messages", min(start + layout.MESSAGES_PER_FILE, total), total)
        client_rows = [{"id": cid, "name": name} for name, cid in clients.items()]
        return set(exported), client_rows, reactions

    def exportable(self, rows, tables):
        """The messages this export type includes. Public: messages of public channels. With consent
        (our reading of Zulip's rule): those, plus private-channel and direct messages that a
        consenting user received."""
        if self.export_type == EXPORT_FULL:
            return rows
        public = {s["recipient"] for s in tables["zerver_stream"] if not s["invite_only"]}
        if self.export_type == EXPORT_PUBLIC:
            return [r for r in rows if r["recipient"] in public]
        private_ids = [r["id"] for r in rows if r["recipient"] not in public]
        received = {um.message_id for um in UserMessage.select(UserMessage.message).where(
            UserMessage.message.in_(private_ids) & UserMessage.user_profile.in_(list(self.consenting)))}
        return [r for r in rows if r["recipient"] in public or r["id"] in received]

    # --- files ----------------------------------------------------------------------------------

    def write_uploads(self, message_ids):
        attachments = list(Attachment.select().where(Attachment.realm == self.realm.id).order_by(Attachment.id))

        rows, records = [], []
        for index, attachment in enumerate(attachments, 1):
            linking = sorted(m.id for m in messages_linking(attachment) if m.id in message_ids)
            if not linking and self.export_type != EXPORT_FULL:
                continue  # as Zulip: an API export holds the files its messages link
            rows.append({"id": attachment.id, "file_name": attachment.file_name, "path_id": attachment.path_id,
                         "owner": attachment.owner_id, "realm": attachment.realm_id,
                         "create_time": _float(attachment.create_time), "is_realm_public": None,
                         "is_web_public": None, "size": attachment.size, "content_type": attachment.content_type,
                         "messages": linking, "scheduled_messages": []})
            source = self.instance / "uploads" / attachment.path_id
            if source.is_file():
                target = self.out / "uploads" / attachment.path_id
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, target)
                records.append({"realm_id": attachment.realm_id, "user_profile_id": attachment.owner_id,
                                "user_profile_email": attachment.owner.email, "s3_path": attachment.path_id,
                                "path": attachment.path_id, "size": source.stat().st_size,
                                "last_modified": source.stat().st_mtime, "content_type": attachment.content_type})
            self.progress("uploads", index, len(attachments))
        write_json(self.out / "attachment.json", {"zerver_attachment": rows})
        (self.out / "uploads").mkdir(exist_ok=True)
        write_json(self.out / "uploads" / "records.json", sorted(records, key=lambda r: r["path"]))

    def write_emoji(self):
        records = []
        for emoji in RealmEmoji.select().where(RealmEmoji.realm == self.realm.id).order_by(RealmEmoji.id):
            path = f"{emoji.realm_id}/emoji/images/{emoji.file_name}"
            source = self.instance / "avatars" / path
            if not source.is_file():
                continue
            target = self.out / "emoji" / path
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
            records.append({"realm_id": emoji.realm_id, "author": emoji.author_id, "path": path, "s3_path": path,
                            "file_name": emoji.file_name, "name": emoji.name, "deactivated": emoji.deactivated})
        (self.out / "emoji").mkdir(exist_ok=True)
        write_json(self.out / "emoji" / "records.json", sorted(records, key=lambda r: r["path"]))
        for folder in ("avatars", "realm_icons"):
            (self.out / folder).mkdir(exist_ok=True)
            write_json(self.out / folder / "records.json", [])

    def write_migration_status(self):

        write_json(self.out / "migration_status.json", {
            "migrations_by_app": {"chat_appliance": [f"[X] {v:04d}_{doc.replace(' ', '_')}"
                                                     for v, doc, _fn in migrations.MIGRATIONS]},
            "zulip_version": layout.ZULIP_VERSION,
            layout.FORMAT_KEY: layout.FORMAT_VERSION,
        })

    def run(self):
        """Write the whole export; return its folder."""
        self.out.mkdir(mode=0o700, parents=True, exist_ok=False)  # its own data, the owner's only (M5)
        self.consenting = {u.id for u in self.users() if all_user_settings(u)["allow_private_data_export"]}
        tables = self.realm_tables()
        message_ids, clients, reactions = self.write_messages(tables)
        tables["zerver_client"] = clients
        tables["zerver_reaction"] = reactions
        write_json(self.out / "realm.json", {name: _sorted(rows) if rows and "id" in rows[0] else rows
                                             for name, rows in tables.items()})
        self.write_uploads(message_ids)
        self.write_emoji()
        self.write_migration_status()
        return self.out


def export_realm(realm, instance_path, output_dir, progress=None, export_type=EXPORT_FULL):
    """Export the organization to `output_dir` (which must not exist); return the folder."""
    return Exporter(Realm.get_by_id(realm.id), instance_path, output_dir, progress, export_type).run()


def make_tarball(folder):
    """folder.tar.gz beside the folder, holding it as its one top-level directory (Zulip's shape)."""
    import tarfile

    folder = Path(folder)
    tarball = folder.with_name(folder.name + ".tar.gz")
    with tarfile.open(tarball, "w:gz") as tar:
        tar.add(folder, arcname=folder.name)
    os.chmod(tarball, 0o600)
    return tarball
