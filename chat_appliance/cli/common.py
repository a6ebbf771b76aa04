"""What the commands share: the instance they work on, its organization, and the one error
they print without a traceback."""

import sys
from urllib.parse import urlparse

from chat_appliance.config import instance_path_from_env, load_config
from chat_appliance.ops.instance_files import tighten


class CommandError(Exception):
    """A user-facing failure: printed without a traceback, exit status 1."""


def open_instance(args, *, must_exist=True, overrides=None):
    """Load the instance's configuration (with the command line's `overrides`), open its
    database and apply pending migrations."""
    from chat_appliance.db.connection import init_database, migrate
    from chat_appliance.web.auth import CREDENTIALS_MARKER, set_credentials_marker

    instance = instance_path_from_env(args.instance)
    if must_exist and not instance.exists():
        raise CommandError(f"No instance at {instance}. Create one with: chat-appliance init --instance {instance} ...")
    config = load_config(instance, overrides)
    if instance.exists():
        tighten(instance)
    opened = init_database(config["DATABASE_URL"], pool_size=config["DATABASE_POOL_SIZE"],
                           pool_timeout=config["DATABASE_POOL_TIMEOUT_SECONDS"],
                           inline_image_preview=config["INLINE_IMAGE_PREVIEW"])
    # Credential changes made here reach a running server's long-poll cache (web/auth.py).
    set_credentials_marker(opened, instance / CREDENTIALS_MARKER)
    applied = migrate(progress=True)
    if applied:
        print(f"Applied {len(applied)} migration(s).", file=sys.stderr)
    return instance, config


def current_realm():
    """The instance's organization, or None before init."""
    from chat_appliance.models.realm import instance_realm

    return instance_realm()


def require_realm():
    """The organization; a clear error when the instance has none."""
    realm = current_realm()
    if realm is None:
        raise CommandError("This instance has no organization yet. Run: chat-appliance init ...")
    return realm


def find_user(realm, email):
    """An account by email, or a CommandError naming the address."""
    from chat_appliance.models import UserProfile

    user = UserProfile.get_by_login_email(email)
    if user is None or user.realm_id != realm.id:
        raise CommandError(f"No user with email {email!r}. List them with: chat-appliance list-users")
    return user


# Keys that set the organization's address at every `serve` start (cli/serve.py), so that
# set-realm-url would be undone by the next start.
ADDRESS_KEYS = ("TLS_DOMAIN", "EXTERNAL_HOST")


def set_realm_url(realm, url):
    """Store the organization's address (invitations, mails and /server_settings use it); True
    when it changed. Its host, which names bot and system accounts, stays as it was made."""
    if realm.url == url:
        return False
    realm.url = url
    realm.save(only=[type(realm).url])
    return True


def create_organization(config, org_name, email, full_name, password, realm_url):
    """Create the organization and its owner; returns the owner."""
    from chat_appliance.actions.realm import do_create_realm

    host = urlparse(realm_url).hostname or "localhost"
    _realm, owner = do_create_realm(org_name, host, realm_url, email, full_name, password,
                                    password_method=config["PASSWORD_HASH_METHOD"])
    return owner
