"""Custom emoji through HTTP: upload, list, deactivate, images, rendering, reactions, events."""


from chat_appliance.models import RealmEmoji, database

from ..support.helpers import PNG, active_ids, err, ok, polled, queues, register, upload_emoji


def test_upload_list_and_serve(org):
    """Does an upload appear in GET /realm/emoji with Zulip's fields, and is its image served at
    source_url without credentials?"""
    ok(upload_emoji(org, org.hamlet, "party_parrot"))
    emoji = ok(org.client(org.othello).get("realm/emoji"))["emoji"]
    [(emoji_id, entry)] = emoji.items()
    assert entry == {"id": emoji_id, "name": "party_parrot", "deactivated": False, "author_id": org.hamlet.id,
                     "source_url": f"/user_avatars/{org.realm.id}/emoji/images/{emoji_id}.png", "still_url": None}
    image = org.flask_client.get(entry["source_url"])
    assert image.status_code == 200 and image.data == PNG and image.mimetype == "image/png"
    assert org.flask_client.get(f"/user_avatars/{org.realm.id}/emoji/images/999.png").status_code == 404


def test_upload_errors_change_nothing(org):
    """Are bad names, duplicates, guests, built-in names for members, no file, two files and
    non-images refused with Zulip's texts, storing nothing?"""
    ok(upload_emoji(org, org.hamlet, "taken"))
    cases = [
        (org.hamlet, "Bad_Name", {}, "Emoji names must contain only lowercase alphanumeric characters, "
                                     "underscores, and hyphens."),
        (org.hamlet, "ends_", {}, "Emoji names must end with either a letter or digit."),
        (org.hamlet, "taken", {}, "A custom emoji with this name already exists."),
        (org.guest, "guesty", {}, "Insufficient permission"),
        (org.hamlet, "smile", {}, "Only administrators can override built-in emoji."),
        (org.hamlet, "nofile", {"files": 0}, "You must upload exactly one file."),
        (org.hamlet, "twofiles", {"files": 2}, "You must upload exactly one file."),
        (org.hamlet, "text", {"content": b"just text", "filename": "a.png"}, "Invalid image format"),
    ]
    for user, name, kwargs, msg in cases:
        err(upload_emoji(org, user, name, **kwargs), 400, "BAD_REQUEST", msg)
    with database.connection_context():
        assert [e.name for e in RealmEmoji.select()] == ["taken"]
    ok(upload_emoji(org, org.admin, "smile"))


def test_deactivate_rules(org):
    """May the author and administrators deactivate, others not; is a missing emoji a 404; does a
    deactivated emoji stay listed as deactivated?"""
    ok(upload_emoji(org, org.hamlet, "my_own"))
    ok(upload_emoji(org, org.hamlet, "other"))
    err(org.client(org.othello).delete("realm/emoji/my_own"), 400, "BAD_REQUEST",
        "Must be an organization administrator or emoji author")
    ok(org.client(org.hamlet).delete("realm/emoji/my_own"))
    ok(org.client(org.admin).delete("realm/emoji/other"))
    err(org.client(org.admin).delete("realm/emoji/my_own"), 404, "BAD_REQUEST", "Emoji 'my_own' does not exist")
    listed = ok(org.client(org.hamlet).get("realm/emoji"))["emoji"]
    assert sorted((e["name"], e["deactivated"]) for e in listed.values()) == [("my_own", True), ("other", True)]
    ok(upload_emoji(org, org.hamlet, "my_own"))  # the name is free again


def test_emoji_in_messages_and_reactions(org):
    """Does :name: render as the emoji's image, and can one react with it by name or by id
    (reaction_type realm_emoji), but not once it is deactivated?"""
    ok(upload_emoji(org, org.hamlet, "appliance_parrot"))
    hamlet = org.client(org.hamlet)
    emoji_id = next(iter(ok(hamlet.get("realm/emoji"))["emoji"]))
    message_id = ok(hamlet.post("messages", type="stream", to="Denmark", topic="t", content="hi :appliance_parrot:"))["id"]
    html = ok(hamlet.get(f"messages/{message_id}"))["message"]["content"]
    assert f'src="/user_avatars/{org.realm.id}/emoji/images/{emoji_id}.png"' in html and 'alt=":appliance_parrot:"' in html
    ok(hamlet.post(f"messages/{message_id}/reactions", emoji_name="appliance_parrot"))
    ok(org.client(org.othello).post(f"messages/{message_id}/reactions", emoji_name="appliance_parrot", emoji_code=emoji_id,
                                    reaction_type="realm_emoji"))
    reactions = ok(hamlet.get(f"messages/{message_id}"))["message"]["reactions"]
    assert {(r["emoji_code"], r["reaction_type"], r["user_id"]) for r in reactions} == {
        (emoji_id, "realm_emoji", org.hamlet.id), (emoji_id, "realm_emoji", org.othello.id)}
    err(hamlet.post(f"messages/{message_id}/reactions", emoji_name="wrong", emoji_code=emoji_id,
                    reaction_type="realm_emoji"), 400, "BAD_REQUEST", "Invalid custom emoji name.")
    ok(hamlet.delete("realm/emoji/appliance_parrot"))
    err(org.client(org.admin).post(f"messages/{message_id}/reactions", emoji_name="appliance_parrot", emoji_code=emoji_id,
                                   reaction_type="realm_emoji"), 400, "BAD_REQUEST",
        "This custom emoji has been deactivated.")
    ok(hamlet.delete(f"messages/{message_id}/reactions", emoji_name="appliance_parrot", emoji_code=emoji_id,
                     reaction_type="realm_emoji"))
    plain = ok(hamlet.post("messages", type="stream", to="Denmark", topic="t", content=":appliance_parrot:"))["id"]
    assert "<img" not in ok(hamlet.get(f"messages/{plain}"))["message"]["content"]


def test_realm_emoji_events_and_register(org, events):
    """Does every change send the whole set to everyone, and does /register carry it?"""
    qs = queues(org, org.othello, event_types=["realm_emoji"])
    ok(upload_emoji(org, org.hamlet, "wave_custom"))
    ok(org.client(org.hamlet).delete("realm/emoji/wave_custom"))
    received = polled(qs, org.othello)
    assert [(e["op"], [v["deactivated"] for v in e["realm_emoji"].values()]) for e in received] == [
        ("update", [False]), ("update", [True])]
    assert [set(ids) for _event, ids in events.of("realm_emoji")] == [active_ids(org)] * 2
    state = register(org.client(org.othello), fetch_event_types=["realm_emoji"])
    assert [v["name"] for v in state["realm_emoji"].values()] == ["wave_custom"]


def test_custom_emoji_as_status(org):
    """Can a status use a custom emoji by name (found as realm_emoji, its id the code), and is a
    deactivated one refused?"""
    ok(upload_emoji(org, org.hamlet, "status_parrot"))
    hamlet = org.client(org.hamlet)
    emoji_id = next(iter(ok(hamlet.get("realm/emoji"))["emoji"]))
    ok(hamlet.post("users/me/status", emoji_name="status_parrot"))
    assert ok(hamlet.get(f"users/{org.hamlet.id}/status"))["status"] == {
        "emoji_name": "status_parrot", "emoji_code": emoji_id, "reaction_type": "realm_emoji"}
    ok(hamlet.delete("realm/emoji/status_parrot"))
    err(hamlet.post("users/me/status", emoji_name="status_parrot", emoji_code=emoji_id, reaction_type="realm_emoji"),
        400, "BAD_REQUEST", "This custom emoji has been deactivated.")
