"""Trello: card and board actions, in the board's topic. An updated card is told by what changed
(list, name, description, due date, archived or reopened); moves within a list and cover changes
are not news. Trello checks the URL with a HEAD request before it posts (answered in
api/webhooks.py)."""

from __future__ import annotations

from chat_appliance.integrations.base import ANY_EVENT, Integration, UnsupportedEvent, WebhookRequest, global_time

SUPPORTED_CARD_ACTIONS = {"updateCard", "createCard", "addLabelToCard", "removeLabelFromCard", "addMemberToCard",
                          "removeMemberFromCard", "addAttachmentToCard", "addChecklistToCard", "commentCard",
                          "updateCheckItemStateOnCard"}
IGNORED_CARD_ACTIONS = frozenset({"copyCard", "createCheckItem", "updateCheckItem", "updateList"})
SUPPORTED_BOARD_ACTIONS = {"removeMemberFromBoard", "addMemberToBoard", "createList", "updateBoard"}
# Card updates that say nothing worth a message: moved within its list, a new cover.
IGNORED_CARD_FIELDS = ("cover", "dueComplete", "idAttachmentCover", "pos")


def card_update_kind(data) -> str | None:
    """What an updateCard changed, or None when it is not worth telling."""
    old, card = data["old"], data["card"]
    if data.get("listBefore"):
        return "changeList"
    if old.get("name"):
        return "changeName"
    if old.get("desc") == "":
        return "setDesc"
    if old.get("desc"):
        return "removeDesc" if card.get("desc") == "" else "changeDesc"
    if "due" in old and old["due"] is None:
        return "setDueDate"
    if old.get("due"):
        return "removeDueDate" if "due" in card and card["due"] is None else "changeDueDate"
    if old.get("closed") is False and card.get("closed", False):
        return "archiveCard"
    if old.get("closed") and card.get("closed") is False:
        return "reopenCard"
    if any(field in old for field in IGNORED_CARD_FIELDS):
        return None
    raise UnsupportedEvent("updateCard")


def card_sentence(kind: str, p) -> str:
    data = p["action"]["data"]
    card = f"[{data['card']['name']}](https://trello.com/c/{data['card']['shortLink']})"
    if kind == "createCard":
        return f"created {card}."
    if kind == "changeList":
        return f"moved {card} from {data['listBefore']['name']} to {data['listAfter']['name']}."
    if kind == "changeName":
        return f'renamed the card from "{data["old"]["name"]}" to {card}.'
    if kind == "setDesc":
        return f"set description for {card} to:\n~~~ quote\n{data['card']['desc']}\n~~~\n"
    if kind == "changeDesc":
        return (f"changed description for {card} from\n~~~ quote\n{data['old']['desc']}\n~~~\n"
                f"to\n~~~ quote\n{data['card']['desc']}\n~~~\n")
    if kind == "removeDesc":
        return f"removed description from {card}."
    if kind == "archiveCard":
        return f"archived {card}."
    if kind == "reopenCard":
        return f"reopened {card}."
    if kind == "setDueDate":
        return f"set due date for {card} to {global_time(data['card']['due'])}."
    if kind == "changeDueDate":
        return (f"changed due date for {card} from {global_time(data['old']['due'])} to "
                f"{global_time(data['card']['due'])}.")
    if kind == "removeDueDate":
        return f"removed the due date from {card}."
    if kind == "addLabelToCard":
        return f'added a {data["value"]} label with "{data["text"]}" to {card}.'
    if kind == "removeLabelFromCard":
        return f'removed a {data["value"]} label with "{data["text"]}" from {card}.'
    if kind == "addMemberToCard":
        return f"added {p['action']['member']['fullName']} to {card}."
    if kind == "removeMemberFromCard":
        return f"removed {p['action']['member']['fullName']} from {card}."
    if kind == "addAttachmentToCard":
        return f"added [{data['attachment']['name']}]({data['attachment']['url']}) to {card}."
    if kind == "addChecklistToCard":
        return f"added the {data['checklist']['name']} checklist to {card}."
    if kind == "commentCard":
        return f"commented on {card}:\n~~~ quote\n{data['text']}\n~~~\n"
    checked = "checked" if data["checkItem"]["state"] == "complete" else "unchecked"
    return f"{checked} **{data['checkItem']['name']}** in **{data['checklist']['name']}** ({card})."


def board_sentence(kind: str, p) -> str:
    data = p["action"]["data"]
    board = f"[{data['board']['name']}](https://trello.com/b/{data['board']['shortLink']})"
    if kind == "removeMemberFromBoard":
        return f"removed {p['action']['member']['fullName']} from {board}."
    if kind == "addMemberToBoard":
        return f"added {p['action']['member']['fullName']} to {board}."
    if kind == "createList":
        return f"added {data['list']['name']} list to {board}."
    return f"renamed the board from {data['old']['name']} to {board}."


def format_action(hook: WebhookRequest) -> tuple[str, str] | None:
    p = hook.payload
    action_type = p["action"]["type"]
    data = p["action"]["data"]
    if action_type in SUPPORTED_CARD_ACTIONS:
        kind = card_update_kind(data) if action_type == "updateCard" else action_type
        if kind is None:
            return None
        return data["board"]["name"], f"{p['action']['memberCreator'].get('fullName')} {card_sentence(kind, p)}"
    if action_type in SUPPORTED_BOARD_ACTIONS:
        kind = action_type
        if action_type == "updateBoard":
            if "background" in data["old"].get("prefs", {}):  # a new background is not news
                return None
            if not data["old"]["name"]:
                raise UnsupportedEvent(action_type)
            kind = "changeName"
        return data["board"]["name"], f"{p['action']['memberCreator']['fullName']} {board_sentence(kind, p)}"
    raise UnsupportedEvent(action_type)


INTEGRATION = Integration(
    name="trello",
    display_name="Trello",
    description="Trello cards (created, moved, renamed, described, due, labelled, commented, ...) and boards.",
    find_event=lambda hook: hook.payload["action"]["type"],
    formatters={ANY_EVENT: format_action},
    ignored_events=IGNORED_CARD_ACTIONS,
    answers_head_requests=True,
)
