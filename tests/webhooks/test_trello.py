"""Trello's integration: card and board actions (tests/data/webhooks/trello/, written from
Trello's documented webhook payloads) must give Zulip's topic and message exactly."""

import pytest

from ..support.webhook_helpers import Case, check_case, check_ignored

BOARD = "Harbor works"
CARD = "[Replace pier lights](https://trello.com/c/Cq4Lm9Pz)"
LINK = "[Harbor works](https://trello.com/b/Hb7wKs2Q)"

CASES = [
    Case("create_card", BOARD, f"Ines Moreau created {CARD}."),
    Case("move_card", BOARD, f"Ines Moreau moved {CARD} from Backlog to In progress."),
    Case("rename_card", BOARD, f'Ines Moreau renamed the card from "Replace lights" to {CARD}.'),
    Case("set_description", BOARD,
         f"Ines Moreau set description for {CARD} to:\n~~~ quote\nUse the LED units from stock.\n~~~"),
    Case("change_description", BOARD,
         f"Ines Moreau changed description for {CARD} from\n~~~ quote\nUse the LED units from stock.\n~~~\n"
         "to\n~~~ quote\nOrder new LED units.\n~~~"),
    Case("remove_description", BOARD, f"Ines Moreau removed description from {CARD}."),
    Case("set_due_date", BOARD, f"Ines Moreau set due date for {CARD} to <time:2026-12-20T16:00:00+00:00>."),
    Case("change_due_date", BOARD,
         f"Ines Moreau changed due date for {CARD} from <time:2026-12-20T16:00:00+00:00> to "
         "<time:2026-12-22T16:00:00+00:00>."),
    Case("remove_due_date", BOARD, f"Ines Moreau removed the due date from {CARD}."),
    Case("archive_card", BOARD, f"Ines Moreau archived {CARD}."),
    Case("reopen_card", BOARD, f"Ines Moreau reopened {CARD}."),
    Case("add_label", BOARD, f'Ines Moreau added a red label with "urgent" to {CARD}.'),
    Case("remove_label", BOARD, f'Ines Moreau removed a red label with "urgent" from {CARD}.'),
    Case("add_member_to_card", BOARD, f"Ines Moreau added Kai Nordin to {CARD}."),
    Case("remove_member_from_card", BOARD, f"Ines Moreau removed Kai Nordin from {CARD}."),
    Case("add_attachment", BOARD,
         f"Ines Moreau added [wiring.pdf](https://trello.com/1/cards/x/attachments/y/download/wiring.pdf) to {CARD}."),
    Case("add_checklist", BOARD, f"Ines Moreau added the Parts checklist to {CARD}."),
    Case("comment_card", BOARD, f"Ines Moreau commented on {CARD}:\n~~~ quote\nThe ladder is in shed 2.\n~~~"),
    Case("check_item", BOARD, f"Ines Moreau checked **12 LED units** in **Parts** ({CARD})."),
    Case("uncheck_item", BOARD, f"Ines Moreau unchecked **12 LED units** in **Parts** ({CARD})."),
    Case("add_member_to_board", BOARD, f"Ines Moreau added Kai Nordin to {LINK}."),
    Case("remove_member_from_board", BOARD, f"Ines Moreau removed Kai Nordin from {LINK}."),
    Case("create_list", BOARD, f"Ines Moreau added Waiting for parts list to {LINK}."),
    Case("rename_board", BOARD, f"Ines Moreau renamed the board from Harbour works to {LINK}."),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_trello_action(org, flask_client, case):
    """Does this Trello action post Zulip's topic and message?"""
    check_case(org, flask_client, "trello", case)


@pytest.mark.parametrize("fixture", ["move_card_within_list", "copy_card", "change_board_background"])
def test_trello_ignored_action(org, flask_client, fixture):
    """Is this action, which Zulip knowingly ignores, answered with plain success?"""
    assert check_ignored(org, flask_client, "trello", fixture) == {"result": "success", "msg": ""}


@pytest.mark.parametrize("fixture,event", [("delete_card", "deleteCard"), ("update_card_unknown_field", "updateCard")])
def test_trello_unsupported_action(org, flask_client, fixture, event):
    """Is an action Zulip does not handle answered with its success note?"""
    body = check_ignored(org, flask_client, "trello", fixture)
    assert body["msg"] == f"The '{event}' event isn't currently supported by the Trello webhook; ignoring"


def test_trello_head_request(flask_client):
    """Does Trello's HEAD check of the URL succeed without credentials, while other integrations
    do not answer HEAD?"""
    assert flask_client.head("/api/v1/external/trello").status_code == 200
    assert flask_client.head("/api/v1/external/github").status_code == 405
    assert flask_client.head("/api/v1/external/nosuch").status_code == 404
