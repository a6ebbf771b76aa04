"""Organization extras: POST /realm/playgrounds, DELETE /realm/playgrounds/{playground_id},
PATCH /realm/user_settings_defaults, and GET /calls/bigbluebutton/create."""

from flask import Blueprint

from chat_appliance.actions.playgrounds import access_playground, check_playground, do_add_playground, do_remove_playground
from chat_appliance.actions.user_settings_defaults import do_update_user_settings_defaults
from chat_appliance.lib.access import require_realm_admin
from chat_appliance.lib.errors import JsonableError
from chat_appliance.web.params import Param, endpoint
from chat_appliance.lib.validators import check_bool, int_range, one_of
from chat_appliance.lib.user_settings import USER_SETTING_DEFAULTS

bp = Blueprint("org_settings", __name__)


@bp.post("/realm/playgrounds")
@endpoint(name=Param(), pygments_language=Param(), url_template=Param())
def add_playground(user, name, pygments_language, url_template):
    """Administrators add a code playground."""
    require_realm_admin(user)
    checked = check_playground(name, pygments_language, url_template)
    return {"id": do_add_playground(user.realm_id, *checked)}


@bp.delete("/realm/playgrounds/<int:playground_id>")
@endpoint()
def remove_playground(user, playground_id):
    """Administrators remove a code playground."""
    require_realm_admin(user)
    do_remove_playground(access_playground(user.realm_id, playground_id))


# The non-boolean defaults this server keeps, with Zulip's allowed values.
CHOICE_DEFAULTS = {
    "color_scheme": Param(one_of(1, 2, 3, parser=int_range()), default=None),
    "demote_inactive_streams": Param(one_of(1, 2, 3, parser=int_range()), default=None),
    "web_mark_read_on_scroll_policy": Param(one_of(1, 2, 3, parser=int_range()), default=None),
    "user_list_style": Param(one_of(1, 2, 3, parser=int_range()), default=None),
    "web_channel_default_view": Param(one_of(1, 2, 3, 4, parser=int_range()), default=None),
    "automatically_follow_topics_policy": Param(one_of(1, 2, 3, 4, parser=int_range()), default=None),
    "automatically_unmute_topics_in_muted_streams_policy": Param(one_of(1, 2, 3, 4, parser=int_range()),
                                                                 default=None),
    "web_home_view": Param(one_of("recent_topics", "inbox", "all_messages"), default=None),
    "emojiset": Param(one_of("google", "twitter", "text"), default=None),
    "email_address_visibility": Param(one_of(1, 2, 3, 4, 5, parser=int_range()), default=None),
}
BOOLEAN_DEFAULTS = {name: Param(check_bool, default=None) for name, value in USER_SETTING_DEFAULTS.items()
                    if isinstance(value, bool)}


@bp.patch("/realm/user_settings_defaults")
@endpoint(**BOOLEAN_DEFAULTS, **CHOICE_DEFAULTS)
def update_user_settings_defaults(user, **values):
    """Administrators change the personal settings new users start with. Settings this server
    does not keep are reported in ignored_parameters_unsupported."""
    require_realm_admin(user)
    changes = {k: v for k, v in values.items() if v is not None}
    if changes:
        do_update_user_settings_defaults(user.realm, changes)


@bp.get("/calls/bigbluebutton/create")
@endpoint(meeting_name=Param(), voice_only=Param(check_bool, default=False))
def create_bigbluebutton_call(user, meeting_name, voice_only):
    """No BigBlueButton server is configured here: Zulip's answer for that case."""
    raise JsonableError("BigBlueButton is not configured.")
