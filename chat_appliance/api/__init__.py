"""One blueprint per endpoint group, mounted under /api/v1 (and /json for the web client), and a
few at the site root.

The modules are named here, not imported. At start the app adds every route from `routes.py`,
a list generated from these blueprints (`python scripts/make_routes.py`; tests/structure/test_lazy_routes.py
fails when it is stale), and imports a module the first time a request is routed to one of its
views (web/fast_routing.LazyViews). Importing all 48 modules, with the actions they use, was a third of the
server's start-up and 2 MiB of its idle memory, for views most
processes never serve."""

# (module of this package, blueprint attribute), in the order they are registered.
BLUEPRINTS = (
    ("server", "bp"), ("users", "bp"), ("channels", "bp"), ("realm", "bp"), ("settings", "bp"),
    ("messages", "bp"), ("events", "bp"), ("typing", "bp"), ("profile_fields", "bp"),
    ("channel_folders", "bp"), ("navigation_views", "bp"), ("linkifiers", "bp"),
    ("push_notifications", "bp"), ("user_groups", "bp"), ("drafts", "bp"), ("saved_snippets", "bp"),
    ("message_edit", "bp"), ("message_delete", "bp"), ("message_reports", "bp"), ("reactions", "bp"),
    ("submessages", "bp"), ("devices", "bp"), ("topics", "bp"), ("uploads", "bp"), ("bot_storage", "bp"),
    ("presence", "bp"), ("webhooks", "bp"), ("dev", "bp"), ("message_flags", "bp"), ("user_topics", "bp"),
    ("user_status", "bp"), ("muted_users", "bp"), ("alert_words", "bp"), ("realm_emoji", "bp"),
    ("user_settings_defaults", "bp"), ("playgrounds", "bp"), ("calls", "bp"), ("realm_export", "bp"),
    ("invites", "bp"), ("channel_lifecycle", "bp"), ("scheduled_messages", "bp"), ("message_activity", "bp"),
    ("avatars", "bp"), ("realm_icon", "bp"),
)

# Mounted at the site root: the URLs that messages link to.
ROOT_BLUEPRINTS = (
    ("uploads", "downloads_bp"), ("realm_emoji", "images_bp"), ("realm_icon", "files_bp"),
    ("realm_export", "files_bp"), ("thumbnail", "bp"), ("health", "bp"),
)
