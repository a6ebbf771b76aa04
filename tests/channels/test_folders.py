"""Channel folders: create, list, update, archive; PATCH /streams/{id} folder_id."""

from ..support.helpers import active_ids, err, ok


def create(org, name="Work", description="Work things"):
    return ok(org.client(org.admin).post("channel_folders/create", name=name, description=description))[
        "channel_folder_id"]


def test_create_and_list(org, events):
    """Does an administrator create a folder that everyone lists, with an add event to everyone?"""
    folder_id = create(org)
    folders = ok(org.client(org.guest).get("channel_folders"))["channel_folders"]
    assert [(f["id"], f["name"], f["description"], f["is_archived"]) for f in folders] == [
        (folder_id, "Work", "Work things", False)]
    event, ids = events.one("channel_folder", op="add")
    assert event["channel_folder"]["id"] == folder_id and ids == active_ids(org)


def test_member_cannot_create(org):
    """Is creating a folder refused to a member?"""
    err(org.client(org.hamlet).post("channel_folders/create", name="X"), 400, "UNAUTHORIZED_PRINCIPAL",
        "Must be an organization administrator")


def test_update_name_and_description(org, events):
    """Does PATCH change name and description, announcing the changed fields to everyone?"""
    folder_id = create(org)
    ok(org.client(org.admin).patch(f"channel_folders/{folder_id}", name="Play", description="Fun"))
    folder = ok(org.client(org.hamlet).get("channel_folders"))["channel_folders"][0]
    assert (folder["name"], folder["description"]) == ("Play", "Fun")
    event, ids = events.one("channel_folder", op="update")
    assert event["data"]["name"] == "Play" and ids == active_ids(org)


def test_name_and_description_limits(org):
    """Are a too-long name, a too-long description and an empty name refused?"""
    folder_id = create(org)
    client = org.client(org.admin)
    err(client.patch(f"channel_folders/{folder_id}", name="x" * 61), 400, "BAD_REQUEST")
    err(client.patch(f"channel_folders/{folder_id}", description="x" * 1025), 400, "BAD_REQUEST")
    err(client.patch(f"channel_folders/{folder_id}", name=" "), 400, "BAD_REQUEST")


def test_archive_and_unarchive(org):
    """Does is_archived hide the folder from the default list and bring it back when false?"""
    folder_id = create(org)
    client = org.client(org.admin)
    ok(client.patch(f"channel_folders/{folder_id}", is_archived=True))
    assert ok(client.get("channel_folders"))["channel_folders"] == []
    assert ok(client.get("channel_folders", include_archived=True))["channel_folders"][0]["is_archived"]
    ok(client.patch(f"channel_folders/{folder_id}", is_archived=False))
    assert len(ok(client.get("channel_folders"))["channel_folders"]) == 1


def test_member_cannot_archive(org):
    """Is archiving refused to a member?"""
    folder_id = create(org)
    err(org.client(org.hamlet).patch(f"channel_folders/{folder_id}", is_archived=True), 400,
        "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator")


def test_invalid_folder_id(org):
    """Does an unknown folder id give BAD_REQUEST 'Invalid channel folder ID'?"""
    err(org.client(org.admin).patch("channel_folders/999", name="X"), 400, "BAD_REQUEST",
        "Invalid channel folder ID")


def test_assign_channel_to_folder(org, events):
    """Does PATCH /streams/{id} folder_id put a channel in a folder (and null take it out), told to who may see it?"""
    folder_id = create(org)
    client = org.client(org.admin)
    ok(client.patch(f"streams/{org.secret.id}", folder_id=folder_id))
    assert ok(client.get(f"streams/{org.secret.id}"))["stream"]["folder_id"] == folder_id
    _event, ids = events.one("stream", property="folder_id", value=folder_id)
    assert ids == {org.owner.id, org.admin.id, org.hamlet.id}
    ok(client.call("PATCH", f"streams/{org.secret.id}", {"folder_id": "null"}))
    assert ok(client.get(f"streams/{org.secret.id}"))["stream"]["folder_id"] is None
    err(client.patch(f"streams/{org.secret.id}", folder_id=999), 400, "BAD_REQUEST", "Invalid channel folder ID")
