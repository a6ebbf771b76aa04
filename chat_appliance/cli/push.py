"""register-push-service: register this server with Zulip's Mobile Push Notification Service,
as Zulip's `manage.py register_server` does, and keep the credentials in the instance."""

import sys

from chat_appliance.cli.common import CommandError, open_instance, require_realm

TERMS_URL = "https://zulip.com/policies/terms"


def cmd_register_push_service(args):
    """POST /api/v1/remotes/server/register with this server's org id and key (made now on the
    first run), its host name and a contact address; store the credentials (mode 600)."""
    from chat_appliance.clients import push_service
    from chat_appliance.lib import push_credentials
    from chat_appliance.lib.errors import PushServiceRefusedError, PushServiceRetryLaterError
    from chat_appliance.models import ROLE_OWNER, UserProfile, database

    instance, config = open_instance(args)
    if not args.agree_to_terms_of_service:
        raise CommandError("The service's terms of service must be accepted first: read "
                           f"{TERMS_URL} and run again with --agree-to-terms-of-service.")
    configured_url = config.get("PUSH_NOTIFICATION_BOUNCER_URL") or config.get("ZULIP_SERVICES_URL")
    url = args.url or configured_url
    if not url:
        raise CommandError("No service URL: set ZULIP_SERVICES_URL or pass --url.")
    with database.connection_context():
        realm = require_realm()
        hostname = args.hostname or realm.host
        contact_email = args.contact_email
        if not contact_email:
            owner = UserProfile.select().where((UserProfile.realm == realm) & (UserProfile.role == ROLE_OWNER)
                                               & UserProfile.is_active).order_by(UserProfile.id).first()
            contact_email = owner.delivery_email if owner else None
    if not contact_email:
        raise CommandError("No contact address: pass --contact-email.")

    from_config = bool(config.get("ZULIP_ORG_ID") and config.get("ZULIP_ORG_KEY"))
    if from_config:
        org_id, org_key = str(config["ZULIP_ORG_ID"]), str(config["ZULIP_ORG_KEY"])
    else:
        stored = push_credentials.read_credentials(instance)
        org_id, org_key = (stored["zulip_org_id"], stored["zulip_org_key"]) if stored \
            else push_service.new_org_credentials()
    request = {"zulip_org_id": org_id, "zulip_org_key": org_key, "hostname": hostname,
               "contact_email": contact_email}
    new_key = None
    if args.rotate_key:
        if from_config:
            raise CommandError("ZULIP_ORG_KEY comes from the configuration: change it there, not with --rotate-key.")
        new_key = push_service.new_org_credentials()[1]
        request["new_org_key"] = new_key
    try:
        answer = push_service.send_unauthenticated(url, "server/register", request,
                                                   timeout=float(config["PUSH_NOTIFICATION_TIMEOUT_SECONDS"]),
                                                   user_agent="ZulipServer/11.0 (chat-appliance)")
    except PushServiceRefusedError as error:
        raise CommandError(f"The service refused the registration: {error.msg}") from None
    except PushServiceRetryLaterError as error:
        raise CommandError(f"Could not reach the service at {url}: {error.detail}") from None
    if new_key is not None:
        org_key = new_key
    if not from_config:
        path = push_credentials.write_credentials(instance, org_id, org_key)
        print(f"Credentials stored in {path} (readable by its owner only).")
    print(f"{'Registered' if answer.get('created') else 'Registration updated'} with {url} as {hostname} "
          f"(contact {contact_email}).")
    print(f"zulip_org_id: {org_id}")
    print(f"zulip_org_key: {push_service.masked(org_key)} (not shown in full)")
    if url != configured_url:
        print(f"Note: the server sends notifications to ZULIP_SERVICES_URL; set it to {url} "
              "(config.json or CHAT_APPLIANCE_ZULIP_SERVICES_URL) for them to go there.", file=sys.stderr)
    service = push_service.PushService(url=url, org_id=org_id, org_key=org_key,
                                       timeout=float(config["PUSH_NOTIFICATION_TIMEOUT_SECONDS"]))
    upload_server_data(service)
    print("Restart is not needed: a running server picks the credentials up at its next message.")
    return 0


def upload_server_data(service):
    """Tell the service about the organizations now (a running server repeats it hourly)."""
    from chat_appliance.workers.push_notifications import send_server_data
    from chat_appliance.api.server import ZULIP_FEATURE_LEVEL, ZULIP_VERSION
    from chat_appliance.lib.errors import PushServiceRefusedError, PushServiceRetryLaterError
    from chat_appliance.models import database

    try:
        with database.connection_context():
            answer = send_server_data(service, ZULIP_VERSION, ZULIP_FEATURE_LEVEL)
    except (PushServiceRefusedError, PushServiceRetryLaterError) as error:
        print(f"Warning: the organization data upload (server/analytics) failed: "
              f"{getattr(error, 'detail', error.msg)}; the server retries hourly.", file=sys.stderr)
        return
    for realm_uuid, status in (answer.get("realms") or {}).items():
        if isinstance(status, dict) and not status.get("can_push", True):
            print(f"Warning: the service says organization {realm_uuid} may not push yet "
                  "(see its plans for self-hosted servers).", file=sys.stderr)


def add_commands(add):
    """Register register-push-service on the parser (`add` is cli.main.build_parser's helper)."""
    cmd = add("register-push-service", cmd_register_push_service,
              "Register this server with Zulip's Mobile Push Notification Service (what a self-hosted Zulip "
              "server does with `manage.py register_server`), so that the Zulip mobile apps get push "
              "notifications. Makes this server's zulip_org_id and zulip_org_key on the first run, sends them "
              "with the host name and a contact address to {ZULIP_SERVICES_URL}/api/v1/remotes/server/register, "
              "and stores them in the instance (push_service_credentials.json, mode 600). Running it again "
              "updates the host name and contact address.")
    cmd.add_argument("--agree-to-terms-of-service", action="store_true",
                     help=f"accept the service's terms ({TERMS_URL}); required")
    cmd.add_argument("--contact-email", metavar="ADDRESS",
                     help="where the service's operators reach this server's administrator (default: the "
                          "organization owner's address); must be a real, deliverable address")
    cmd.add_argument("--hostname", help="this server's public host name (default: the organization's host)")
    cmd.add_argument("--url", help="the service (default: ZULIP_SERVICES_URL, https://push.zulipchat.com)")
    cmd.add_argument("--rotate-key", action="store_true",
                     help="replace the stored zulip_org_key with a new one (sent as new_org_key)")
