"""Channel creation, archiving and unarchiving, default channels, channel email addresses,
PATCH /users/me/subscriptions, subscription status, and reordering channel folders."""

from chat_appliance.models import Stream, Subscription, database

from ..support.helpers import active_ids, err, get_events, kinds, ok, polled, queues


def stream_names(client, **params):
    return sorted(s["name"] for s in ok(client.get("streams", **params))["streams"])


def sub_names(client):
    return sorted(s["name"] for s in ok(client.get("users/me/subscriptions"))["subscriptions"])


def test_create_channel_with_settings_and_subscribers(org):
    """Does POST /channels/create make a private channel with its description, folder and groups,
    subscribe the listed users, and tell exactly who may see it?"""
    admin = org.client(org.admin)
    folder_id = ok(admin.post("channel_folders/create", name="Work"))["channel_folder_id"]
    groups = {g["name"]: g["id"] for g in ok(admin.get("user_groups"))["user_groups"]}
    qs = queues(org, org.hamlet, org.othello, org.cordelia, event_types=["stream", "subscription"])
    stream_id = ok(admin.post("channels/create", name="plans", subscribers=[org.hamlet.id, org.othello.id],
                              description="Secret plans", invite_only=True, folder_id=folder_id,
                              can_send_message_group=groups["role:administrators"]))["id"]
    stream = ok(org.client(org.hamlet).get(f"streams/{stream_id}"))["stream"]
    assert (stream["name"], stream["description"], stream["invite_only"], stream["folder_id"]) == (
        "plans", "Secret plans", True, folder_id)
    assert stream["can_send_message_group"] == groups["role:administrators"]
    assert ok(admin.get(f"streams/{stream_id}/members"))["subscribers"] == sorted([org.hamlet.id, org.othello.id])
    assert ("stream", "create") in kinds(polled(qs, org.hamlet))
    assert ("subscription", "add") in kinds(polled(qs, org.othello))
    assert polled(qs, org.cordelia) == []


def test_create_channel_errors_change_nothing(org):
    """Are an existing name (409), guests, a member making a default channel, another user's
    subscription without permission, a bad group and a bad folder refused with no channel made?"""
    hamlet = org.client(org.hamlet)
    err(hamlet.post("channels/create", name="denmark", subscribers=[]), 409, "CHANNEL_ALREADY_EXISTS",
        "Channel 'denmark' already exists")
    err(org.client(org.guest).post("channels/create", name="new", subscribers=[]), 400, "BAD_REQUEST",
        "Insufficient permission")
    err(hamlet.post("channels/create", name="new", subscribers=[], is_default_stream=True), 400,
        "UNAUTHORIZED_PRINCIPAL")
    err(org.client(org.admin).post("channels/create", name="new", subscribers=[], is_default_stream=True,
                                   invite_only=True), 400, "BAD_REQUEST", "A default channel cannot be private.")
    err(hamlet.post("channels/create", name="new", subscribers=[99999]), 400, "BAD_REQUEST", "No such user")
    err(hamlet.post("channels/create", name="new", subscribers=[], can_send_message_group=99999), 400,
        "BAD_REQUEST", "Invalid user group ID: 99999")
    err(hamlet.post("channels/create", name="new", subscribers=[], folder_id=99999), 400, "BAD_REQUEST",
        "Invalid channel folder ID")
    err(hamlet.post("channels/create", name=" ", subscribers=[]), 400, "BAD_REQUEST")
    err(hamlet.post("channels/create", name="new"), 400, "REQUEST_VARIABLE_MISSING")
    with database.connection_context():
        org.realm.settings = dict(org.realm.settings, can_add_subscribers_group="role:administrators")
        org.realm.save()
    err(hamlet.post("channels/create", name="new", subscribers=[org.othello.id]), 400, "BAD_REQUEST",
        "You do not have permission to subscribe other users to channels.")
    with database.connection_context():
        assert not Stream.select().where(Stream.name_key == "new").exists()
    ok(hamlet.post("channels/create", name="new", subscribers=[org.hamlet.id]))


def test_create_permission_follows_realm_setting(org):
    """Does can_create_private_channel_group set to administrators stop members creating private channels only?"""
    groups = {g["name"]: g["id"] for g in ok(org.client(org.admin).get("user_groups"))["user_groups"]}
    ok(org.client(org.admin).patch("realm", can_create_private_channel_group=groups["role:administrators"]))
    hamlet = org.client(org.hamlet)
    err(hamlet.post("channels/create", name="p", subscribers=[], invite_only=True), 400, "BAD_REQUEST",
        "Insufficient permission")
    ok(hamlet.post("channels/create", name="p", subscribers=[]))


def test_default_channel_created_and_given_to_new_users(org, events):
    """Does an administrator's default channel reach /register, default_streams events, and new users?"""
    admin = org.client(org.admin)
    stream_id = ok(admin.post("channels/create", name="lobby", subscribers=[], is_default_stream=True))["id"]
    event, ids = events.one("default_streams")
    assert sorted(event["default_streams"]) == sorted([org.general.id, stream_id])
    assert org.guest.id not in ids and org.hamlet.id in ids
    state = ok(admin.post("register", fetch_event_types=["default_streams"]))
    assert sorted(state["realm_default_streams"]) == sorted([org.general.id, stream_id])
    assert ok(org.client(org.guest).post("register", fetch_event_types=["default_streams"]))[
        "realm_default_streams"] == []
    new_id = ok(admin.post("users", email="newbie@zulip.example", password="pw-pw-pw-pw", full_name="Newbie"))[
        "user_id"]
    assert ok(admin.get(f"users/{new_id}/subscriptions/{stream_id}"))["is_subscribed"] is True


def test_default_streams_add_and_remove(org, events):
    """Do POST and DELETE /default_streams change the set with events, refusing private channels,
    members and unknown ids?"""
    admin = org.client(org.admin)
    ok(admin.post("default_streams", stream_id=org.denmark.id))
    assert ok(admin.get("streams", include_default=True, include_public=False, include_subscribed=False))[
        "streams"][0]["is_default"] is True
    assert sorted(events.of("default_streams")[-1][0]["default_streams"]) == sorted([org.general.id, org.denmark.id])
    err(admin.post("default_streams", stream_id=org.secret.id), 400, "BAD_REQUEST",
        "Private channels cannot be made default.")
    err(admin.post("default_streams", stream_id=99999), 400, "BAD_REQUEST", "Invalid channel ID")
    err(org.client(org.hamlet).post("default_streams", stream_id=org.verona.id), 400, "UNAUTHORIZED_PRINCIPAL")
    ok(admin.delete("default_streams", stream_id=org.denmark.id))
    assert events.of("default_streams")[-1][0]["default_streams"] == [org.general.id]
    assert len(events.of("default_streams")) == 2


def test_archive_and_unarchive(org, events):
    """Does archiving keep subscriptions, hide the channel from default lists, refuse sending, drop it
    from the default channels, note it in the channel, and does unarchiving undo it?"""
    admin = org.client(org.admin)
    ok(admin.post("default_streams", stream_id=org.denmark.id))
    ok(admin.delete(f"streams/{org.denmark.id}"))
    assert "Denmark" not in stream_names(admin)
    assert "Denmark" in stream_names(admin, exclude_archived=False)
    err(org.client(org.hamlet).post("messages", type="stream", to="Denmark", topic="t", content="x"), 400,
        "STREAM_DOES_NOT_EXIST")
    assert events.of("default_streams")[-1][0]["default_streams"] == [org.general.id]
    with database.connection_context():
        assert Subscription.select().where((Subscription.stream == org.denmark.id) & Subscription.active).count() == 3
    err(admin.delete(f"streams/{org.denmark.id}"), 400, "BAD_REQUEST", "Channel is already deactivated")
    notes = ok(admin.get("messages", anchor="newest", num_before=5, num_after=0, apply_markdown=False,
                         narrow=[{"operator": "channel", "operand": org.denmark.id}]))["messages"]
    assert notes[-1]["subject"] == "channel events" and "archived this channel" in notes[-1]["content"]
    assert "read" in notes[-1]["flags"]
    ok(admin.patch(f"streams/{org.denmark.id}", is_archived=False))
    assert "Denmark" in stream_names(org.client(org.hamlet))
    ok(org.client(org.hamlet).post("messages", type="stream", to="Denmark", topic="t", content="back"))
    err(admin.patch(f"streams/{org.denmark.id}", is_archived=False), 400, "BAD_REQUEST",
        "Channel is not currently deactivated")


def test_archive_events_follow_capability(org):
    """Do clients with archived_channels get stream update is_archived, and others stream delete,
    then create on unarchiving?"""
    modern = org.client(org.hamlet)
    modern_queue = ok(modern.post("register", event_types=["stream"],
                                  client_capabilities={"archived_channels": True}))["queue_id"]
    qs = queues(org, org.othello, event_types=["stream"])
    ok(org.client(org.admin).delete(f"streams/{org.denmark.id}"))

    [update] = get_events(modern, modern_queue)
    assert (update["op"], update["property"], update["value"]) == ("update", "is_archived", True)
    [delete] = polled(qs, org.othello)
    assert delete["op"] == "delete" and delete["stream_ids"] == [org.denmark.id]
    ok(org.client(org.admin).patch(f"streams/{org.denmark.id}", is_archived=False))
    assert [e["op"] for e in polled(qs, org.othello)] == ["delete", "create"]


def test_archive_permissions(org):
    """May only administrators (or the channel's administrators) archive, and not an invisible channel?"""
    err(org.client(org.hamlet).delete(f"streams/{org.denmark.id}"), 400, "UNAUTHORIZED_PRINCIPAL")
    err(org.client(org.othello).delete(f"streams/{org.secret.id}"), 400, "BAD_REQUEST", "Invalid channel ID")
    groups = {g["name"]: g["id"] for g in ok(org.client(org.admin).get("user_groups"))["user_groups"]}
    ok(org.client(org.admin).patch(f"streams/{org.verona.id}", can_administer_channel_group=groups["role:members"]))
    ok(org.client(org.hamlet).delete(f"streams/{org.verona.id}"))


def test_stream_email_address(org):
    """Is a channel's address stable per sender, different for another sender, and refused for a
    sender the requester does not control or an invisible channel?"""
    hamlet = org.client(org.hamlet)
    first = ok(hamlet.get(f"streams/{org.denmark.id}/email_address"))["email"]
    assert first == ok(hamlet.get(f"streams/{org.denmark.id}/email_address"))["email"]
    assert first.startswith("denmark.") and first.endswith(".show-sender@zulip.example")
    own = ok(hamlet.get(f"streams/{org.denmark.id}/email_address", sender_id=org.hamlet.id))["email"]
    bot = ok(hamlet.get(f"streams/{org.denmark.id}/email_address", sender_id=org.bot.id))["email"]
    assert len({first, own, bot}) == 3
    err(hamlet.get(f"streams/{org.denmark.id}/email_address", sender_id=org.othello.id), 400, "BAD_REQUEST",
        "No such bot")
    err(org.client(org.othello).get(f"streams/{org.denmark.id}/email_address", sender_id=org.bot.id), 400,
        "BAD_REQUEST", "Insufficient permission")
    ok(org.client(org.admin).get(f"streams/{org.denmark.id}/email_address", sender_id=org.bot.id))
    err(org.client(org.othello).get(f"streams/{org.secret.id}/email_address"), 400, "BAD_REQUEST",
        "Invalid channel ID")


def test_subscription_status(org):
    """Does GET /users/{id}/subscriptions/{stream_id} tell whether that user is subscribed?"""
    hamlet = org.client(org.hamlet)
    assert ok(hamlet.get(f"users/{org.othello.id}/subscriptions/{org.denmark.id}"))["is_subscribed"] is True
    assert ok(hamlet.get(f"users/{org.cordelia.id}/subscriptions/{org.denmark.id}"))["is_subscribed"] is False
    err(hamlet.get(f"users/99999/subscriptions/{org.denmark.id}"), 400, "BAD_REQUEST", "No such user")
    err(org.client(org.othello).get(f"users/{org.hamlet.id}/subscriptions/{org.secret.id}"), 400, "BAD_REQUEST",
        "Invalid channel ID")


def test_patch_subscriptions_adds_and_removes(org):
    """Does PATCH /users/me/subscriptions subscribe (with a colour, creating a channel) and unsubscribe at once?"""
    cordelia = org.client(org.cordelia)
    body = ok(cordelia.patch("users/me/subscriptions", add=[{"name": "Denmark", "color": "#e79ab5"},
                                                            {"name": "brand-new", "description": "fresh"}],
                             delete=["Verona"]))
    assert sorted(body["subscribed"][str(org.cordelia.id)]) == ["Denmark", "brand-new"]
    assert body["removed"] == ["Verona"] and body["not_removed"] == []
    subs = {s["name"]: s for s in ok(cordelia.get("users/me/subscriptions"))["subscriptions"]}
    assert sorted(subs) == ["Denmark", "brand-new", "general"]
    assert subs["Denmark"]["color"] == "#e79ab5" and subs["brand-new"]["description"] == "fresh"


def test_patch_subscriptions_bad_input(org):
    """Are an empty request, an unknown channel to leave and a bad colour refused with nothing changed?"""
    cordelia = org.client(org.cordelia)
    before = sub_names(cordelia)
    err(cordelia.patch("users/me/subscriptions"), 400, "BAD_REQUEST",
        'Nothing to do. Specify at least one of "add" or "delete".')
    err(cordelia.patch("users/me/subscriptions", add=[{"name": "Denmark"}], delete=["nowhere"]), 400,
        "BAD_REQUEST", "Channel(s) (nowhere) do not exist")
    err(cordelia.patch("users/me/subscriptions", add=[{"name": "Denmark", "color": "red"}]), 400, "BAD_REQUEST")
    err(cordelia.patch("users/me/subscriptions", add=[{"color": "#fff"}]), 400, "BAD_REQUEST")
    assert sub_names(cordelia) == before


def test_reorder_channel_folders(org, events):
    """Does PATCH /channel_folders reorder every folder (archived ones included), told to everyone, and
    refuse partial or repeated lists and members?"""
    admin = org.client(org.admin)
    ids = [ok(admin.post("channel_folders/create", name=n))["channel_folder_id"] for n in ("A", "B", "C")]
    ok(admin.patch(f"channel_folders/{ids[1]}", is_archived=True))
    ok(admin.patch("channel_folders", order=[ids[2], ids[0], ids[1]]))
    listed = ok(admin.get("channel_folders", include_archived=True))["channel_folders"]
    assert [f["id"] for f in listed] == [ids[2], ids[0], ids[1]]
    event, audience = events.one("channel_folder", op="reorder")
    assert event["order"] == [ids[2], ids[0], ids[1]] and audience == active_ids(org)
    err(admin.patch("channel_folders", order=[ids[2], ids[0]]), 400, "BAD_REQUEST", "Invalid order mapping")
    err(admin.patch("channel_folders", order=[ids[2], ids[0], ids[0]]), 400, "BAD_REQUEST", "Invalid order mapping")
    err(org.client(org.hamlet).patch("channel_folders", order=ids), 400, "UNAUTHORIZED_PRINCIPAL")
    assert [f["id"] for f in ok(admin.get("channel_folders", include_archived=True))["channel_folders"]] == [
        ids[2], ids[0], ids[1]]


def test_subscribe_endpoint_follows_creation_and_subscribe_settings(org):
    """Does POST /users/me/subscriptions follow can_create_public_channel_group for new channels and
    can_add_subscribers_group for subscribing others?"""
    groups = {g["name"]: g["id"] for g in ok(org.client(org.admin).get("user_groups"))["user_groups"]}
    admin, hamlet = org.client(org.admin), org.client(org.hamlet)
    ok(admin.patch("realm", can_create_public_channel_group=groups["role:administrators"],
                   can_add_subscribers_group=groups["role:administrators"]))
    err(hamlet.post("users/me/subscriptions", subscriptions=[{"name": "fresh"}]), 400, "BAD_REQUEST",
        "Insufficient permission")
    err(hamlet.post("users/me/subscriptions", subscriptions=[{"name": "Denmark"}], principals=[org.cordelia.id]),
        400, "BAD_REQUEST", "Insufficient permission")
    ok(hamlet.post("users/me/subscriptions", subscriptions=[{"name": "Verona"}]))
    ok(admin.post("users/me/subscriptions", subscriptions=[{"name": "fresh"}], principals=[org.cordelia.id]))


def test_register_lists_archived_channels_only_with_capability(org):
    """Does /register list an archived channel's subscription (is_archived true) only to clients that
    declared archived_channels?"""
    ok(org.client(org.admin).delete(f"streams/{org.denmark.id}"))
    hamlet = org.client(org.hamlet)
    plain = ok(hamlet.post("register", fetch_event_types=["subscription"]))
    assert "Denmark" not in [s["name"] for s in plain["subscriptions"]]
    modern = ok(hamlet.post("register", fetch_event_types=["subscription"],
                            client_capabilities={"archived_channels": True}))
    [denmark] = [s for s in modern["subscriptions"] if s["name"] == "Denmark"]
    assert denmark["is_archived"] is True


def test_default_streams_and_reorder_events_on_queues(org):
    """Do default_streams and channel_folder reorder pass Zulip's event schemas on real queues, with
    default_streams kept from guests?"""
    qs = queues(org, org.hamlet, org.guest, event_types=["default_streams", "channel_folder"])
    admin = org.client(org.admin)
    ok(admin.post("default_streams", stream_id=org.denmark.id))
    ids = [ok(admin.post("channel_folders/create", name=n))["channel_folder_id"] for n in ("A", "B")]
    ok(admin.patch("channel_folders", order=list(reversed(ids))))
    assert kinds(polled(qs, org.hamlet)) == [("default_streams", None), ("channel_folder", "add"),
                                             ("channel_folder", "add"), ("channel_folder", "reorder")]
    assert ("default_streams", None) not in kinds(polled(qs, org.guest))


def test_new_subscribers_told_by_notification_bot(org):
    """Does Notification Bot tell the other users a new channel's creator subscribed, unless asked not to?"""
    def last_dm(user):
        return ok(org.client(user).get("messages", anchor="newest", num_before=1, num_after=0,
                                       narrow=[{"operator": "is", "operand": "dm"}]))["messages"][-1]

    admin = org.client(org.admin)
    ok(admin.post("channels/create", name="told", subscribers=[org.admin.id, org.cordelia.id]))
    note = last_dm(org.cordelia)
    assert note["sender_email"].startswith("notification-bot@") and "told" in note["content"]
    before = last_dm(org.othello)["id"]
    ok(admin.post("channels/create", name="quiet", subscribers=[org.othello.id], send_new_subscription_messages=False))
    assert last_dm(org.othello)["id"] == before
    state = ok(admin.post("register", fetch_event_types=["realm"]), undocumented=("server_report_message_types",))
    assert state["max_bulk_new_subscription_messages"] == 100
