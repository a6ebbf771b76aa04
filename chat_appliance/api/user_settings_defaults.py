"""The settings new users start with: PATCH /realm/user_settings_defaults."""

from flask import Blueprint

from chat_appliance.actions.user_settings_defaults import do_update_user_settings_defaults
from chat_appliance.lib.access import require_realm_admin
from chat_appliance.web.params import Param, endpoint
from chat_appliance.lib.validators import check_bool, int_range, one_of
from chat_appliance.lib.user_settings import USER_SETTING_DEFAULTS

bp = Blueprint("user_settings_defaults", __name__)


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
