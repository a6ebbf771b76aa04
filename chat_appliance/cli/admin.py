"""The administrator's commands on accounts: create-user, change-role, reset-api-key,
set-permission, list-users, set-password, sync-ldap-users; and on the organization's address:
set-realm-url."""

import sys
from urllib.parse import urlsplit

from chat_appliance.cli.common import (
    ADDRESS_KEYS,
    CommandError,
    find_user,
    open_instance,
    require_realm,
    set_realm_url,
)


def cmd_create_user(args):
    """Create an account."""
    from chat_appliance.actions.users import do_create_user
    from chat_appliance.lib.errors import JsonableError
    from chat_appliance.models import ROLES, database

    _instance, config = open_instance(args)
    if args.role not in ROLES:
        raise CommandError(f"--role must be one of {', '.join(map(str, ROLES))}")
    with database.connection_context():
        realm = require_realm()
        try:
            user = do_create_user(realm, args.email, args.password, args.full_name, role=args.role,
                                  password_method=config["PASSWORD_HASH_METHOD"])
        except JsonableError as error:
            raise CommandError(error.msg) from None
        print(f"Created {user.email} (user id {user.id}, role {user.role})")
        print(f"API key: {user.api_key}")
    return 0


def cmd_change_role(args):
    """Change an account's role."""
    from chat_appliance.actions.users import do_change_role
    from chat_appliance.lib.access import only_owner
    from chat_appliance.models import ROLE_OWNER, ROLES, database

    open_instance(args)
    if args.role not in ROLES:
        raise CommandError(f"--role must be one of {', '.join(map(str, ROLES))}")
    with database.connection_context():
        user = find_user(require_realm(), args.email)
        if user.role == ROLE_OWNER and args.role != ROLE_OWNER and only_owner(user):
            raise CommandError("That is the only owner; make another user owner first.")
        do_change_role(user, args.role)
        print(f"{user.email} now has role {args.role}")
    return 0


def cmd_reset_api_key(args):
    """Give an account a new API key and print it."""
    from chat_appliance.actions.users import do_regenerate_api_key
    from chat_appliance.models import database

    open_instance(args)
    with database.connection_context():
        user = find_user(require_realm(), args.email)
        print(do_regenerate_api_key(user))
    return 0


def cmd_set_permission(args):
    """Grant or revoke a special permission (Zulip's can_change_user_emails)."""
    from chat_appliance.actions.users import do_set_permission
    from chat_appliance.lib.errors import JsonableError
    from chat_appliance.models import database

    open_instance(args)
    with database.connection_context():
        user = find_user(require_realm(), args.email)
        try:
            do_set_permission(user, args.permission, not args.revoke)
        except JsonableError as error:
            raise CommandError(error.msg) from None
        print(f"{user.email}: {args.permission} {'revoked' if args.revoke else 'granted'}")
    return 0


def cmd_list_users(args):
    """Print the organization's accounts."""
    from chat_appliance.models import UserProfile, database

    open_instance(args)
    with database.connection_context():
        realm = require_realm()
        print(f"{'id':>5}  {'role':>4}  {'active':6}  {'bot':3}  email / name")
        for user in UserProfile.select().where(UserProfile.realm == realm).order_by(UserProfile.id):
            print(f"{user.id:>5}  {user.role:>4}  {'yes' if user.is_active else 'no':6}  "
                  f"{'yes' if user.is_bot else 'no':3}  {user.email} / {user.full_name}")
    return 0


def cmd_set_password(args):
    """Set an account's password (without email configured, the way to reset a lost one)."""
    import getpass

    from chat_appliance.actions.users import do_change_password
    from chat_appliance.models import database

    _instance, config = open_instance(args)
    with database.connection_context():
        user = find_user(require_realm(), args.email)
        if user.is_bot:
            raise CommandError(f"{user.email} is a bot; bots sign in with their API key.")
        if args.password_stdin:
            password = sys.stdin.readline().rstrip("\n")
        else:
            password = getpass.getpass(f"New password for {user.email}: ")
            if getpass.getpass("Again: ") != password:
                raise CommandError("The passwords differ; nothing was changed.")
        from chat_appliance.lib.passwords import PASSWORD_MIN_LENGTH, password_too_weak

        if password_too_weak(password):
            raise CommandError(f"A password needs at least {PASSWORD_MIN_LENGTH} characters; nothing was changed.")
        do_change_password(user, password, config["PASSWORD_HASH_METHOD"])
    print(f"Password of {user.email} changed.")
    return 0


def cmd_set_realm_url(args):
    """Change the organization's address on purpose (a server moving to a new name): the links
    in invitations, password resets and missed-message mails, and what /server_settings says."""
    from chat_appliance.models import database

    url = args.url.strip().rstrip("/")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 (raises on a port that is not a number)
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname or parts.path \
            or parts.query or parts.fragment or parts.username or parts.password:
        raise CommandError(f"{args.url!r} is not an organization URL: write scheme and host, with a port if "
                           "needed, e.g. https://chat.example.com")
    if parts.hostname in ("0.0.0.0", "::"):
        raise CommandError(f"{parts.hostname} listens on every interface but is no address to browse to: "
                           "give the server's name")
    _instance, config = open_instance(args)
    setting = next((key for key in ADDRESS_KEYS if config.get(key)), None)
    if setting is not None:
        raise CommandError(f"{setting} is set ({config[setting]!r}) and sets the address at every start of "
                           f"`serve`: change {setting} instead (config.json or CHAT_APPLIANCE_{setting}).")
    with database.connection_context():
        changed = set_realm_url(require_realm(), url)
    print(f"The organization's address is {url}" + ("" if changed else " (unchanged)") +
          ". A running `serve` uses it after a restart.")


def cmd_sync_ldap_users(args):
    """Zulip's sync_ldap_user_data: names from the directory's attribute map, and deactivation of
    active people it no longer has when LDAP_DEACTIVATE_NON_MATCHING_USERS says so. Safe while
    `serve` runs: a deactivated account's API key and sessions stop working within seconds."""
    from chat_appliance.actions.external_auth import do_sync_directory_users
    from chat_appliance.clients.ldap_directory import DirectoryUnavailable, all_people
    from chat_appliance.lib.auth_backends import auth_settings
    from chat_appliance.lib.errors import JsonableError
    from chat_appliance.models import database

    _instance, config = open_instance(args)
    auth = auth_settings(config)
    if auth.ldap is None:
        raise CommandError("LDAP is not on: add zproject.backends.ZulipLDAPAuthBackend to AUTHENTICATION_BACKENDS "
                           "(docs/auth-ldap.md).")
    try:
        people = {person.email.lower(): person.full_name for person in all_people(auth.ldap) if person.email}
    except DirectoryUnavailable as error:
        raise CommandError(f"Cannot search the directory at {auth.ldap.server_uri}: {error}") from None
    with database.connection_context():
        try:
            summary = do_sync_directory_users(require_realm(), people, force=args.force,
                                              deactivate_missing=auth.deactivate_non_matching)
        except JsonableError as error:
            raise CommandError(error.msg) from None
    missing = (f"{summary.deactivated} deactivated" if auth.deactivate_non_matching
               else f"{summary.missing} not in LDAP, left active (LDAP_DEACTIVATE_NON_MATCHING_USERS is off)")
    print(f"{len(people)} people in LDAP; {summary.checked} active accounts checked: {summary.renamed} renamed, "
          f"{missing}.")
    return 0


def cmd_soft_deactivate_users(args):
    """Soft deactivation (actions/soft_deactivation.py): mark long-idle people, catch them up, or
    bring named people back."""
    from chat_appliance.actions import soft_deactivation as soft
    from chat_appliance.models import database

    _instance, config = open_instance(args)
    days = config["SOFT_DEACTIVATION_DAYS"] if args.inactive_for is None else args.inactive_for
    if days < 0:
        raise CommandError("--inactive-for must not be negative")
    with database.connection_context():
        realm = require_realm()
        if args.activate:
            users = [find_user(realm, email) for email in args.activate]
            for user in users:
                added = soft.catch_up(user.id, reactivate=True)
                print(f"{user.email}: " + ("was not idle" if added is None else f"active again, {added} rows added"))
            return 0
        if args.deactivate:
            ids = [find_user(realm, email).id for email in args.deactivate]
        else:
            ids = soft.users_idle_for(days, realm.id)
        marked = soft.soft_deactivate_users(ids)
        print(f"Soft-deactivated {len(marked)} people" + ("" if args.deactivate else f" idle for {days} days or more"))
        if args.catch_up or (config["AUTO_CATCH_UP_SOFT_DEACTIVATED_USERS"] and not args.deactivate):
            idle = soft.idle_user_ids(realm.id)
            added = soft.catch_up_idle_users(idle)
            print(f"Caught up {len(idle)} idle people: {added} rows added")
    return 0


def add_commands(add):
    """Register the account commands on the parser (`add` is cli.main.build_parser's helper)."""
    create = add("create-user", cmd_create_user, "Create an account.")
    create.add_argument("--email", required=True)
    create.add_argument("--full-name", required=True)
    create.add_argument("--password", required=True)
    create.add_argument("--role", type=int, default=400, help="100 owner, 200 admin, 300 moderator, "
                        "400 member (default), 600 guest")

    role = add("change-role", cmd_change_role, "Change an account's role.")
    role.add_argument("--email", required=True)
    role.add_argument("--role", type=int, required=True, help="100, 200, 300, 400 or 600")

    reset = add("reset-api-key", cmd_reset_api_key, "Give an account a new API key and print it.")
    reset.add_argument("--email", required=True)

    perm = add("set-permission", cmd_set_permission,
               "Grant (or with --revoke, revoke) a special permission such as can_change_user_emails, "
               "which an owner needs to change other users' email addresses.")
    perm.add_argument("--email", required=True)
    perm.add_argument("--permission", required=True, help="can_change_user_emails")
    perm.add_argument("--revoke", action="store_true")

    add("list-users", cmd_list_users, "List the organization's accounts.")

    soft = add("soft-deactivate-users", cmd_soft_deactivate_users,
               "Mark people idle for SOFT_DEACTIVATION_DAYS as long-term idle (channel messages then skip their "
               "per-user rows until they return), and with AUTO_CATCH_UP_SOFT_DEACTIVATED_USERS add the rows "
               "idle people lack. Run it daily (cron). See docs/scaling.md.")
    soft.add_argument("--inactive-for", type=float, metavar="DAYS",
                      help="days without a client connected or a message sent (default SOFT_DEACTIVATION_DAYS)")
    soft.add_argument("--deactivate", nargs="+", metavar="EMAIL", help="mark these people idle now")
    soft.add_argument("--activate", nargs="+", metavar="EMAIL", help="bring these people back (add their rows)")
    soft.add_argument("--catch-up", action="store_true", help="add idle people's missing rows, whatever the setting")

    sync = add("sync-ldap-users", cmd_sync_ldap_users,
               "Update names from LDAP and deactivate active people no longer in it (when "
               "LDAP_DEACTIVATE_NON_MATCHING_USERS says so), as Zulip's sync_ldap_user_data.")
    sync.add_argument("--force", action="store_true",
                      help="deactivate even when that leaves no active person or administrator")

    password = add("set-password", cmd_set_password,
                   "Set an account's password (asked twice on the terminal, or read from stdin).")
    password.add_argument("email")
    password.add_argument("--password-stdin", action="store_true", help="read the new password from stdin")

    address = add("set-realm-url", cmd_set_realm_url,
                  "Change the organization's address (the links in invitations and mails), e.g. when the server "
                  "moves to a new name. EXTERNAL_HOST or TLS_DOMAIN, when set, decide it instead.")
    address.add_argument("url", help="the new address, e.g. https://chat.example.com")
