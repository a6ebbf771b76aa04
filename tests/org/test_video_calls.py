"""The organization's video call settings: Zulip's realm_video_chat_provider and Jitsi server
URL in /register, changed by administrators through PATCH /realm, with their realm events."""

from ..support.helpers import err, ok, polled, queues, register


def video_state(client):
    state = register(client, fetch_event_types=["realm"])
    return {k: state[k] for k in ("realm_video_chat_provider", "realm_jitsi_server_url", "server_jitsi_server_url",
                                  "jitsi_server_url", "realm_available_video_chat_providers")}


def test_register_offers_jitsi_by_default(org):
    """Does /register say Jitsi Meet is the provider, on the server's Jitsi (meet.jit.si), with
    the providers it may choose from?"""
    state = video_state(org.client(org.hamlet))
    assert state == {
        "realm_video_chat_provider": 1, "realm_jitsi_server_url": None, "server_jitsi_server_url": "https://meet.jit.si",
        "jitsi_server_url": "https://meet.jit.si",
        "realm_available_video_chat_providers": {"disabled": {"name": "None", "id": 0}, "jitsi_meet": {"name": "Jitsi Meet", "id": 1}},
    }


def test_administrators_choose_provider_and_server(org):
    """Do an administrator's changes of the provider and the Jitsi server show in /register and
    reach members as realm update events, "default" going back to the server's Jitsi?"""
    qs = queues(org, org.hamlet, event_types=["realm"])
    admin = org.client(org.admin)
    ok(admin.patch("realm", jitsi_server_url='"https://jitsi.example.org"'))
    ok(admin.patch("realm", video_chat_provider=0))
    state = video_state(org.client(org.hamlet))
    assert state["realm_jitsi_server_url"] == "https://jitsi.example.org"
    assert state["jitsi_server_url"] == "https://jitsi.example.org"
    assert state["realm_video_chat_provider"] == 0
    events = [(e["property"], e["value"]) for e in polled(qs, org.hamlet) if e["type"] == "realm"]
    assert events == [("jitsi_server_url", "https://jitsi.example.org"), ("video_chat_provider", 0)]
    ok(admin.patch("realm", jitsi_server_url='"default"', video_chat_provider=1))
    state = video_state(org.client(org.hamlet))
    assert (state["realm_jitsi_server_url"], state["realm_video_chat_provider"]) == (None, 1)


def test_bad_values_and_members_are_refused(org):
    """Is an unknown provider or a URL that is not http(s) refused with nothing changed, and may
    a member not change either?"""
    admin = org.client(org.admin)
    err(admin.patch("realm", video_chat_provider=7), 400, "BAD_REQUEST")
    err(admin.patch("realm", jitsi_server_url='"ftp://x"'), 400, "BAD_REQUEST")
    assert org.client(org.hamlet).patch("realm", video_chat_provider=0).status_code == 400
    state = video_state(org.client(org.hamlet))
    assert (state["realm_video_chat_provider"], state["realm_jitsi_server_url"]) == (1, None)
