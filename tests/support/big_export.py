"""A Zulip export of an organization of any size, written as a Zulip server lays it out, one
message file at a time (so that writing a million messages needs no more memory than writing a
thousand). Used by the streaming-import test at a small size and by scripts/bench_big_org.py at
full size.

The shape follows a large company: a few admins, guests and bots; everyone in `general`, each
person in 20-40 other channels; most traffic in the smaller channels, general about 2%, one big
channel about a tenth; 85% of messages in channels over many topics, 15% direct (one-to-one and
groups); Markdown of varied length with mentions, reactions on some messages, an upload on a
few; each person with 0-5,000 unread messages, spread over their history.

Channel sizes are uneven, as a company's are: a few channels nearly everyone is in, and many team
channels of a few dozen people, which carry most of the traffic. Each person's channels are drawn
by popularity (the channel of rank r with weight 1/r^1.4), and a channel's traffic falls with its
size (as 1/size^1.5); the big channel, a busy team's, has about 150 members at 2,000 people. At
2,000 people that gives channels of 15 to 2,000 members (median about 60) and about 68 per-user
rows per message with a quarter of the people idle, near the density of the export the issue's
outside measurement used (15 million per-user rows for 200,000 messages: 75). Drawn from the same
20-40 channels a person, uniformly (`uniform_channels`, the shape of the benchmarks before
2026-12-08), every channel had about 200 members and a message about 250 rows.

A share of the people (`idle_share`, a quarter by default) are long-term idle, as a Zulip server's
soft deactivation leaves them (docs/scaling.md): each stopped coming at some point of the history
(at least a month before its end), sent nothing after it, and from then on has per-user rows only
for direct messages and mentions; the export carries long_term_idle and last_active_message_id.
A quarter is for a company, where most people use chat every day: the idle are those on leave,
part-timers, people who left and whose accounts nobody deactivated, and those who tried it once.
An open community's server has most of its accounts idle (use a share of 0.9 for one).
"""

import json
import math
import random
from collections import Counter
from pathlib import Path

REALM_ID = 7
FIRST_USER_ID = 10
START = 1_600_000_000
THREE_YEARS = 3 * 365 * 24 * 3600
MESSAGES_PER_FILE = 1000
READ, STARRED, MENTIONED, IS_PRIVATE = 1, 2, 8, 2048
POPULARITY_EXPONENT = 1.4  # the channel of rank r is drawn with weight 1 / r ** this
TRAFFIC_EXPONENT = 1.5  # a channel's share of the traffic goes as 1 / members ** this
BIG_CHANNEL_SHARE = 0.075  # of the people, in the big channel (150 of 2,000)

WORDS = ("the deploy plan review meeting notes customer issue build release branch test server "
         "design draft budget quarter team question answer update schedule database latency "
         "metrics dashboard alert rollout migration fix bug feature idea thanks").split()


class Organization:
    """The people, channels and memberships of the export, and who is the benchmark's reader."""

    def __init__(self, people, channels, messages, seed=1, idle_share=0.25, uniform_channels=False):
        self.rng = random.Random(seed)
        rng = self.rng
        self.people = people
        self.user_ids = list(range(FIRST_USER_ID, FIRST_USER_ID + people))
        admins, guests, bots = max(1, people // 100), people * 50 // 2000, people * 30 // 2000
        self.role = {}
        for index, uid in enumerate(self.user_ids):
            self.role[uid] = (100 if index == 0 else 200 if index < admins else
                              600 if index < admins + guests else 400)
        self.bots = set(self.user_ids[-bots:]) if bots else set()
        self.humans = [u for u in self.user_ids if u not in self.bots]
        self.channel_ids = list(range(1000, 1000 + channels))
        self.general, self.big = self.channel_ids[0], self.channel_ids[1]
        # Memberships: everyone in general; each person in 20-40 of the others.
        others = self.channel_ids[1:]
        rest = [c for c in others if c != self.big]
        # Weighted sampling without replacement: each channel's key is log(u) / weight, and the
        # largest keys win (the logarithm, since u ** (1 / weight) underflows for rare channels).
        popularity = {c: 1 / rank ** POPULARITY_EXPONENT for rank, c in enumerate(rest, 1)}
        self.members = {c: set() for c in self.channel_ids}
        self.channels_of = {}
        for uid in self.user_ids:
            if uniform_channels:
                count = min(len(others), rng.randint(20, 40))
                chosen = set(rng.sample(others, count))
                if rng.random() < 0.5:
                    chosen.add(self.big)
            else:
                count = min(len(rest), rng.randint(20, 40))
                keys = {c: math.log(rng.random() or 1e-300) / w for c, w in popularity.items()}
                chosen = set(sorted(rest, key=keys.__getitem__, reverse=True)[:count])
                if rng.random() < BIG_CHANNEL_SHARE:
                    chosen.add(self.big)
            chosen.add(self.general)
            self.channels_of[uid] = chosen
            for c in chosen:
                self.members[c].add(uid)
        # The reader: a member of exactly 30 channels (general and the big one among them).
        self.reader = self.humans[len(self.humans) // 2]
        self.set_channels(self.reader, {self.general, self.big, *rng.sample(rest, min(len(rest), 28))})
        self.unread_5k = self.humans[len(self.humans) // 2 + 1]
        # Traffic: general 2%, the big channel 10%, the rest favouring the smaller channels.
        exponent = 0.5 if uniform_channels else TRAFFIC_EXPONENT
        # A channel nobody drew (in a small organization) carries nothing.
        weights = {c: 1 / len(self.members[c]) ** exponent for c in rest if self.members[c]}
        scale = 0.88 / sum(weights.values())
        self.channel_weights = {self.general: 0.02, self.big: 0.10,
                                **{c: w * scale for c, w in weights.items()}}
        topics = max(len(self.channel_ids), messages * 85 // 100 // 21)  # ~40,000 at a million
        self.topics = {c: [f"{rng.choice(WORDS)} {rng.choice(WORDS)} {n}"
                           for n in range(max(1, int(topics * w)))] for c, w in self.channel_weights.items()}
        self.huddles = [sorted(rng.sample(self.humans, rng.randint(3, 6))) for _ in range(max(1, people // 10))]
        # Unread: each person 0-5,000 of their messages; the reader 3,000 and one person 5,000.
        self.unread_target = {u: rng.randint(0, 5000) for u in self.user_ids}
        self.unread_target[self.reader], self.unread_target[self.unread_5k] = 3000, 5000
        # The idle: humans other than the reader, the 5,000-unread person and the owner; each went
        # idle after a message in the first 95% of the history (the last 5% being the month
        # Zulip's default SOFT_DEACTIVATION_DAYS waits). Drawn from their own generator, so that
        # the rest of the organization is the same whatever the share.
        idle_rng = random.Random(seed + 1)
        candidates = [u for u in self.humans if u not in (self.reader, self.unread_5k, self.user_ids[0])]
        self.idle_since = {u: idle_rng.randint(0, messages * 95 // 100)
                           for u in idle_rng.sample(candidates, int(len(candidates) * idle_share))}

    def active_at(self, uid, message_id):
        """Whether the person still came when this message was sent."""
        since = self.idle_since.get(uid)
        return since is None or message_id <= since

    def set_channels(self, uid, channels):
        for c in self.channels_of[uid]:
            self.members[c].discard(uid)
        self.channels_of[uid] = channels
        for c in channels:
            self.members[c].add(uid)

    def expected_messages(self, messages):
        """Roughly how many messages each person receives (to spread their unread over them)."""
        share = Counter()
        for c, w in self.channel_weights.items():
            for uid in self.members[c]:
                share[uid] += w * 0.85
        for uid in self.user_ids:
            share[uid] += 0.15 * 2.5 / len(self.humans)
        return {u: max(1.0, share[u] * messages) for u in self.user_ids}


def content_for(rng, org, n):
    """A message body of realistic length and Markdown."""
    kind = n % 10
    words = " ".join(rng.choice(WORDS) for _ in range(rng.choice((3, 8, 15, 30, 60))))
    if kind == 0:
        return f"@**User {rng.choice(org.humans)}** {words}"
    if kind == 1:
        return f"**{words[:20]}**\n\n* {words[:30]}\n* {words[30:60] or 'more'}\n"
    if kind == 2:
        return f"```python\ndef f(x):\n    return x * {n}\n```\n{words}"
    if kind == 3:
        return f"> {words}\n\nAgreed, see https://example.com/issues/{n}"
    return words


def write_export(folder, *, people=2000, channels=300, messages=1_000_000, seed=1, progress=None, idle_share=0.25,
                 idle_rows="flagged", uniform_channels=False):
    """Write the export into `folder` (created); returns stats: messages, user_messages, per-person
    received and unread counts, the reader's and the 5,000-unread person's ids, and the idle
    people's {id: last_active_message_id}. `idle_rows`="all" writes the idle people's plain rows
    too (as a server without soft deactivation would have them)."""
    folder = Path(folder)
    folder.mkdir(parents=True)
    org = Organization(people, channels, messages, seed, idle_share, uniform_channels)
    rng = org.rng
    expected = org.expected_messages(messages)
    unread_chance = {u: min(1.0, org.unread_target[u] / expected[u]) for u in org.user_ids}
    personal_recipient = {u: 100_000 + u for u in org.user_ids}
    channel_recipient = {c: 200_000 + c for c in org.channel_ids}
    huddle_recipient = {i: 300_000 + i for i in range(len(org.huddles))}
    channel_list = list(org.channel_weights)
    channel_cumulative = list(org.channel_weights.values())
    received, unread = Counter(), Counter()
    member_lists = {c: sorted(m) for c, m in org.members.items()}
    reactions, attachments = [], []
    stats = {"user_messages": 0}
    usermessage_id = 0
    for file_number, start in enumerate(range(0, messages, MESSAGES_PER_FILE), 1):
        rows, user_rows = [], []
        for n in range(start, min(messages, start + MESSAGES_PER_FILE)):
            message_id = n + 1
            content = content_for(rng, org, n)
            if rng.random() < 0.85:
                channel = rng.choices(channel_list, channel_cumulative)[0]
                audience = org.members[channel]
                sender = rng.choice(member_lists[channel])
                for _ in range(5):  # the idle send nothing: another member, if one comes at once
                    if org.active_at(sender, message_id):
                        break
                    sender = rng.choice(member_lists[channel])
                recipient, topic = channel_recipient[channel], rng.choice(org.topics[channel])
                private = 0
            elif rng.random() < 0.7:
                sender, other = rng.sample(org.humans, 2)
                if not org.active_at(sender, message_id) and org.active_at(other, message_id):
                    sender, other = other, sender
                audience, recipient, topic, private = {sender, other}, personal_recipient[other], "", IS_PRIVATE
            else:
                index = rng.randrange(len(org.huddles))
                audience = set(org.huddles[index])
                sender, recipient, topic, private = rng.choice(org.huddles[index]), huddle_recipient[index], "", \
                    IS_PRIVATE
            has_attachment = n % 500 == 7
            if has_attachment:
                path = f"{REALM_ID}/{n % 97:02x}/f{n}/notes-{n}.txt"
                attachments.append({"id": len(attachments) + 1, "file_name": f"notes-{n}.txt", "path_id": path,
                                    "owner": sender, "realm": REALM_ID, "size": 6, "create_time": START + n,
                                    "messages": [message_id]})
                content += f"\n[notes-{n}.txt](/user_uploads/{path})"
            rows.append({"id": message_id, "sender": sender, "recipient": recipient, "realm": REALM_ID,
                         "subject": topic, "content": content,
                         "rendered_content": "<p>" + content.replace("&", "&amp;").replace("<", "&lt;") + "</p>",
                         "rendered_content_version": 1, "date_sent": START + n * THREE_YEARS / max(1, messages),
                         "sending_client": 1, "last_edit_time": None, "edit_history": None,
                         "has_attachment": has_attachment, "has_image": False, "has_link": "https://" in content})
            mentioned = content.startswith("@**User ")
            for uid in (member_lists[channel] if not private else sorted(audience)):
                flags = private
                if not org.active_at(uid, message_id) and uid != sender:
                    # Idle since: unread, and a row only where it says something (a direct
                    # message, a mention); their return adds the others, unread.
                    unread[uid] += 1
                    received[uid] += 1
                    if mentioned and rng.random() < 0.02:
                        flags |= MENTIONED
                    if not flags and idle_rows != "all":
                        continue
                    usermessage_id += 1
                    user_rows.append({"id": usermessage_id, "user_profile": uid, "message": message_id,
                                      "flags_mask": flags})
                    continue
                if uid == sender or rng.random() >= unread_chance[uid]:
                    flags |= READ
                else:
                    unread[uid] += 1
                if mentioned and uid != sender and rng.random() < 0.02:
                    flags |= MENTIONED
                usermessage_id += 1
                user_rows.append({"id": usermessage_id, "user_profile": uid, "message": message_id,
                                  "flags_mask": flags})
                received[uid] += 1
            if n % 20 == 3:
                for who in rng.sample(sorted(audience) if private else member_lists[channel],
                                      min(len(audience), rng.randint(1, 3))):
                    if not org.active_at(who, message_id):
                        continue
                    reactions.append({"id": len(reactions) + 1, "user_profile": who, "message": message_id,
                                      "emoji_name": "thumbs_up", "emoji_code": "1f44d",
                                      "reaction_type": "unicode_emoji"})
        stats["user_messages"] += len(user_rows)
        with open(folder / f"messages-{file_number:06d}.json", "w") as out:
            json.dump({"zerver_message": rows, "zerver_usermessage": user_rows}, out)
        if progress:
            progress("export", min(messages, start + MESSAGES_PER_FILE), messages)
        del rows, user_rows
    write_realm(folder, org, personal_recipient, channel_recipient, huddle_recipient, reactions)
    (folder / "attachment.json").write_text(json.dumps({"zerver_attachment": attachments}))
    records = []
    for a in attachments:
        target = folder / "uploads" / a["path_id"]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(b"notes\n")
        records.append({"path": a["path_id"], "s3_path": a["path_id"], "realm_id": REALM_ID,
                        "user_profile_id": a["owner"], "size": 6})
    (folder / "uploads").mkdir(exist_ok=True)
    (folder / "uploads" / "records.json").write_text(json.dumps(records))
    (folder / "migration_status.json").write_text(json.dumps({"zulip_version": "10.4", "migrations_by_app": {}}))
    stats.update(messages=messages, received=received, unread=unread, reader=org.reader, unread_5k=org.unread_5k,
                 reactions=len(reactions), uploads=len(attachments), general=org.general, big=org.big,
                 people=people, channels=len(org.channel_ids), idle=dict(org.idle_since))
    return stats


def write_realm(folder, org, personal_recipient, channel_recipient, huddle_recipient, reactions):
    users = [{"id": uid, "email": f"user{uid}@big.example", "delivery_email": f"user{uid}@big.example",
              "full_name": f"User {uid}", "realm": REALM_ID, "role": org.role[uid], "is_active": True,
              "is_bot": uid in org.bots, "bot_type": 1 if uid in org.bots else None,
              "bot_owner": FIRST_USER_ID if uid in org.bots else None, "date_joined": START + uid,
              "timezone": "", "email_address_visibility": 1, "is_mirror_dummy": False,
              "long_term_idle": uid in org.idle_since, "last_active_message_id": org.idle_since.get(uid),
              "recipient": personal_recipient[uid]} for uid in org.user_ids]
    streams = [{"id": c, "name": "general" if c == org.general else "big-channel" if c == org.big else f"channel-{c}",
                "realm": REALM_ID, "invite_only": False, "history_public_to_subscribers": True,
                "date_created": START, "description": "", "rendered_description": "", "deactivated": False,
                "recipient": channel_recipient[c]} for c in org.channel_ids]
    recipients = ([{"id": r, "type": 1, "type_id": u} for u, r in personal_recipient.items()]
                  + [{"id": r, "type": 2, "type_id": c} for c, r in channel_recipient.items()]
                  + [{"id": r, "type": 3, "type_id": 50_000 + i} for i, r in huddle_recipient.items()])
    subscriptions = []
    for c in org.channel_ids:
        for uid in sorted(org.members[c]):
            subscriptions.append({"id": len(subscriptions) + 1, "user_profile": uid, "recipient": channel_recipient[c],
                                  "active": True, "is_muted": False, "color": "#76ce90"})
    for uid, r in personal_recipient.items():
        subscriptions.append({"id": len(subscriptions) + 1, "user_profile": uid, "recipient": r, "active": True})
    for i, members in enumerate(org.huddles):
        for uid in members:
            subscriptions.append({"id": len(subscriptions) + 1, "user_profile": uid,
                                  "recipient": huddle_recipient[i], "active": True})
    realm = {
        "zerver_realm": [{"id": REALM_ID, "name": "Big Org", "string_id": "big", "description": "",
                          "date_created": START, "deactivated": False}],
        "zerver_userprofile": users, "zerver_userprofile_mirrordummy": [],
        "zerver_userprofile_crossrealm": [{"id": 2, "email": "welcome-bot@zulip.com", "recipient_id": 3}],
        "zerver_stream": streams, "zerver_recipient": recipients, "zerver_subscription": subscriptions,
        "zerver_huddle": [{"id": 50_000 + i, "huddle_hash": str(i), "recipient": huddle_recipient[i],
                           "group_size": len(m)} for i, m in enumerate(org.huddles)],
        "zerver_client": [{"id": 1, "name": "website"}],
        "zerver_defaultstream": [{"id": 1, "realm": REALM_ID, "stream": org.general}],
        "zerver_reaction": reactions,
    }
    (folder / "realm.json").write_text(json.dumps(realm))
