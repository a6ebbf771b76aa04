"""Code playgrounds: code blocks in a language get a link that opens the code elsewhere.
Administrators manage them; every change sends the whole list to the organization."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import re

from peewee import IntegrityError

from chat_appliance.db.connection import write_transaction
from chat_appliance.events.bus import publish
from chat_appliance.lib.audiences import active_user_ids
from chat_appliance.lib.errors import JsonableError
from chat_appliance.lib.uri_template import InvalidTemplate, template_variables
from chat_appliance.models import RealmPlayground
from chat_appliance.lib.playgrounds import realm_playgrounds
from chat_appliance.lib import event_catalogue

if TYPE_CHECKING:
    pass

PYGMENTS_LANGUAGE_MAX_LENGTH = 40
NAME_MAX_LENGTH = 100
# Zulip keeps the language open (custom "languages" unknown to Pygments) but limits its characters.
PYGMENTS_LANGUAGE_RE = re.compile(r"^[ a-zA-Z0-9_+\-./#]*$")


def check_playground(name: str, pygments_language: Any, url_template: str) -> Any:
    """Stripped, validated (name, language, template); Zulip's texts."""
    name, pygments_language, url_template = name.strip(), pygments_language.strip(), url_template.strip()
    if not name:
        raise JsonableError("Name cannot be blank.")
    if len(name) > NAME_MAX_LENGTH:
        raise JsonableError(f"name is too long (limit: {NAME_MAX_LENGTH} characters)")
    if len(pygments_language) > PYGMENTS_LANGUAGE_MAX_LENGTH:
        raise JsonableError(f"pygments_language is too long (limit: {PYGMENTS_LANGUAGE_MAX_LENGTH} characters)")
    if not pygments_language or not PYGMENTS_LANGUAGE_RE.match(pygments_language):
        raise JsonableError("Invalid characters in pygments language")
    try:
        variables = template_variables(url_template)
    except InvalidTemplate:
        raise JsonableError("Invalid URL template.") from None
    if variables != ["code"]:
        raise JsonableError('"code" should be the only variable present in the URL template')
    return name, pygments_language, url_template


def access_playground(realm_id: int, playground_id: int) -> Any:
    """A playground of the organization, or Zulip's 'Invalid playground'."""
    playground = RealmPlayground.get_or_none((RealmPlayground.id == playground_id)
                                             & (RealmPlayground.realm == realm_id))
    if playground is None:
        raise JsonableError("Invalid playground")
    return playground


def _announce(realm_id):

    publish(event_catalogue.realm_playgrounds(realm_playgrounds(realm_id)), active_user_ids(realm_id))


def do_add_playground(realm_id: int, name: str, pygments_language: Any, url_template: str) -> Any:
    """Store a checked playground; return its id."""
    try:
        with write_transaction():
            playground = RealmPlayground.create(realm=realm_id, name=name, pygments_language=pygments_language,
                                                url_template=url_template)
    except IntegrityError:
        raise JsonableError("Realm playground with this Realm, Pygments language and Name already exists.") \
            from None
    _announce(realm_id)
    return playground.id


def do_remove_playground(playground: Any) -> None:
    """Delete a playground."""
    with write_transaction():
        playground.delete_instance()
    _announce(playground.realm_id)
