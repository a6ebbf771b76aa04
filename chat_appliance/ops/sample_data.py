"""The sample organization `chat-appliance dev` starts on: people with known passwords, bots of
each kind, channels (one private) with a few hundred messages in several topics, reactions, a
direct conversation and a user group. Deterministic, so that bot authors' scripts can rely on
the names; quick, so that `dev` on a fresh folder starts in a couple of seconds.
"""

import random
from dataclasses import dataclass
from pathlib import Path

from chat_appliance.actions.bot_services import check_service_settings
from chat_appliance.actions.channels import do_create_streams, subscribe_users_to_streams
from chat_appliance.actions.messages import check_send_message
from chat_appliance.actions.reactions import check_emoji, do_add_reaction
from chat_appliance.actions.realm import do_create_realm
from chat_appliance.actions.user_groups import do_create_group
from chat_appliance.actions.users import do_create_bot, do_create_user
from chat_appliance.db.connection import write_transaction
from chat_appliance.models import ROLE_ADMINISTRATOR, ROLE_GUEST, ROLE_MEMBER, Message, database

REALM_NAME = "Chat Appliance Dev"
REALM_HOST = "example.com"
# (short name, full name, role); each person's password is "<short name>-dev-password".
PEOPLE = [
    ("desdemona", "Desdemona", None),  # the owner
    ("iago", "Iago", ROLE_ADMINISTRATOR),
    ("hamlet", "King Hamlet", ROLE_MEMBER),
    ("othello", "Othello", ROLE_MEMBER),
    ("cordelia", "Cordelia", ROLE_MEMBER),
    ("polonius", "Polonius", ROLE_GUEST),
]
# The outgoing webhook bot posts to zulip-botserver's default address; botserverrc runs helloworld.
BOTSERVER_URL = "http://127.0.0.1:5002/"
CHANNELS = [
    ("design", "Sketches, mock-ups and critique", False),
    ("engineering", "Builds, reviews and incidents", False),
    ("random", "Everything else", False),
    ("leadership", "Plans not yet announced", True),
]
TOPICS = ["standup", "release 1.0", "lunch", "bug triage", "ideas"]
SENTENCES = [
    "Shipping the new build this afternoon.", "Can someone review my change?", "The tests are green again.",
    "Lunch at noon?", "I wrote up the plan in the doc.", "Found the cause: a missing index.",
    "**Heads up:** the staging server restarts at 5.", "Here is the log:\n```\nERROR timeout after 30s\n```",
    "Agreed :+1:", "Let's pick this up tomorrow.", "Which version are we on?", "I'll take this one.",
]
MESSAGES_PER_CHANNEL = 60
DIRECT_MESSAGES = 20


def password_for(short_name):
    return f"{short_name}-dev-password"


@dataclass
class Account:
    """Someone (or a bot) of the sample organization, as `dev` prints and writes them."""

    short_name: str
    full_name: str
    email: str
    api_key: str
    password: str | None
    kind: str


def build_sample_organization(site_url, *, password_method, limits, progress=None):
    """Create the sample organization on the (empty) database in use; returns (accounts, botserver
    sections) where each section is (bot name, email, key, token)."""
    rng = random.Random(20)
    step = progress or (lambda _text: None)
    with database.connection_context():
        step("people")
        realm, owner = do_create_realm(REALM_NAME, REALM_HOST, site_url, f"desdemona@{REALM_HOST}", "Desdemona",
                                       password_for("desdemona"), password_method=password_method)
        people = {"desdemona": owner}
        for short, full, role in PEOPLE[1:]:
            people[short] = do_create_user(realm, f"{short}@{REALM_HOST}", password_for(short), full, role=role,
                                           password_method=password_method)
        step("bots")
        generic = do_create_bot(people["hamlet"], "Sample Bot", "sample", 1)
        incoming = do_create_bot(people["hamlet"], "Alerts Bot", "alerts", 2)
        outgoing_service = check_service_settings(3, payload_url=BOTSERVER_URL, interface_type=1, service_name=None,
                                                  config_data=None, allow_private=True)
        outgoing = do_create_bot(people["hamlet"], "Helloworld Bot", "helloworld", 3, service=outgoing_service)
        step("channels")
        with write_transaction():
            public, _ = do_create_streams(realm, [(n, d) for n, d, private in CHANNELS if not private],
                                          invite_only=False, history_public_to_subscribers=None, creator=owner,
                                          limits=limits)
            private, _ = do_create_streams(realm, [(n, d) for n, d, private in CHANNELS if private],
                                           invite_only=True, history_public_to_subscribers=True, creator=owner,
                                           limits=limits)
        humans = [people[short] for short, _full, _role in PEOPLE]
        members = [u for u in humans if u.role != ROLE_GUEST]
        subscribe_users_to_streams(list(public.values()), members + [generic, outgoing])
        subscribe_users_to_streams(list(private.values()), [people["desdemona"], people["iago"], people["hamlet"]])
        subscribe_users_to_streams([public["random"]], [people["polonius"]])
        step("messages")
        send = lambda sender, **kw: check_send_message(sender, client_name="dev", limits=limits, **kw)[0]  # noqa: E731
        message_ids = []
        for stream in list(public.values()) + list(private.values()):
            senders = [u for u in members if stream.invite_only is False or u in
                       (people["desdemona"], people["iago"], people["hamlet"])]
            for _ in range(MESSAGES_PER_CHANNEL):
                message_ids.append(send(rng.choice(senders), message_type="stream", to=stream.id,
                                        topic=rng.choice(TOPICS), content=rng.choice(SENTENCES)))
        for index in range(DIRECT_MESSAGES):
            a, b = (people["hamlet"], people["othello"]) if index % 2 == 0 else (people["othello"], people["hamlet"])
            send(a, message_type="private", to=[b.id], topic=None, content=rng.choice(SENTENCES))
        step("reactions and a group")
        for message_id in rng.sample(message_ids, 25):
            reactor = rng.choice(members)
            message = Message.get_by_id(message_id)
            try:
                do_add_reaction(reactor, message, *check_emoji(rng.choice(["+1", "tada", "heart", "eyes"]),
                                                               None, "unicode_emoji"))
            except Exception:  # noqa: BLE001 - the same person may pick the same emoji twice
                pass
        do_create_group(owner, "engineers", "People who fix the build",
                        [people["hamlet"].id, people["othello"].id, people["iago"].id], [], {})
        accounts = [Account(short, u.full_name, u.email, u.api_key, password_for(short), "owner" if u == owner else
                            {ROLE_ADMINISTRATOR: "admin", ROLE_GUEST: "guest"}.get(u.role, "member"))
                    for short, u in people.items()]
        for short, bot, kind in (("sample", generic, "generic bot"), ("alerts", incoming, "incoming webhook bot"),
                                 ("helloworld", outgoing, "outgoing webhook bot")):
            accounts.append(Account(short, bot.full_name, bot.email, bot.api_key, None, kind))
        sections = [("helloworld", outgoing.email, outgoing.api_key, outgoing.services.get().token)]
        return accounts, sections


def write_client_files(folder, site_url, accounts, sections):
    """A zuliprc for every account, and a botserverrc for zulip-botserver, in `folder`."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths = {}
    for account in accounts:
        path = folder / f"{account.short_name}.zuliprc"
        path.write_text(f"[api]\nemail={account.email}\nkey={account.api_key}\nsite={site_url}\n")
        path.chmod(0o600)  # zulip-terminal refuses a zuliprc others can read
        paths[account.short_name] = path
    botserverrc = folder / "botserverrc"
    botserverrc.write_text("".join(f"[{name}]\nemail={email}\nkey={key}\nsite={site_url}\ntoken={token}\n\n"
                                   for name, email, key, token in sections))
    botserverrc.chmod(0o600)
    return paths, botserverrc
