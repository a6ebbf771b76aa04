"""Routing without Flask's start-up costs: the Flask subclass, URL rule and view table the app is
built with, and the machinery that mounts blueprints lazily.

The server puts ~300 routes in its URL map at every start and serves few of them in a process's
first minutes, so three things differ from Flask's own way: URL-building functions are compiled
on first use (LazyBuilderRule, which overrides werkzeug's private `Rule._compile_builder`:
docs/dependencies.md says what to check on an upgrade); every route is added from a list
generated ahead of time (api/routes.py, written by scripts/make_routes.py through
describe_routes) instead of by importing each view module; and a view module is imported when a
request is first routed to it (LazyViews). The rest (/json routed as /api/v1, one shared
null session, `ensure_sync` remembered per function) trims per-request work.

It knows no blueprint of the package: app.py says which blueprints are mounted where."""

from importlib import import_module

from flask import Blueprint, Flask, Request
from flask.sessions import NullSession, SessionInterface
from werkzeug.exceptions import RequestEntityTooLarge
from werkzeug.routing import Rule

from chat_appliance.web.params import BoundedIntConverter

API_PREFIX = "/api/v1"
JSON_PREFIX = "/json"


class NoFlaskSessions(SessionInterface):
    """Flask's cookie session is not used (the web client's sessions are web/sessions.py's, and
    Flask has no SECRET_KEY here): every request shares one empty NullSession, which refuses
    writes as Flask's own fallback does, instead of Flask building one per request."""

    null = NullSession()

    def open_session(self, app, request):
        return self.null

    def save_session(self, app, session, response):
        return None


class BoundedFormRequest(Request):
    """Flask's request, with MAX_FORM_MEMORY_SIZE bounding a url-encoded body too. Werkzeug
    3.1.9 stopped applying that limit to application/x-www-form-urlencoded (it reads such a
    body whole), which left MAX_CONTENT_LENGTH, the upload limit, as the only bound on a form
    the server parses into memory. A body past it is a 413, as multipart fields are."""

    def _load_form_data(self) -> None:
        limit = self.max_form_memory_size
        if (limit is not None and self.mimetype == "application/x-www-form-urlencoded"
                and self.content_length is not None and self.content_length > limit):
            raise RequestEntityTooLarge()
        super()._load_form_data()


class ChatApplianceFlask(Flask):
    """Flask, with /json/... routed as /api/v1/... (create_url_adapter), and `ensure_sync`
    remembering its answer per function: Flask asks it for every hook and view of every request
    (seven times for a trivial GET), and each answer is an inspect.iscoroutinefunction call, a
    few percent of a trivial request."""

    request_class = BoundedFormRequest
    SYNC_CACHE_SIZE = 4096  # distinct functions; a caller making a new one per call is not cached

    def create_url_adapter(self, request):
        """Flask's adapter, except that a /json/... path is matched as /api/v1/...: the web client
        calls the API's views there (authenticated by session cookie and CSRF token: web/auth.py
        tells them apart by request.path, which stays as sent). Mounting every API blueprint a
        second time under /json doubled the URL map: 1.9 MiB and 35 ms of start-up for 342 rules."""
        adapter = super().create_url_adapter(request)
        if request is not None and adapter is not None and adapter.path_info.startswith(JSON_PREFIX + "/"):
            adapter.path_info = API_PREFIX + adapter.path_info[len(JSON_PREFIX):]
        return adapter

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._sync_functions = {}

    def ensure_sync(self, func):
        try:
            return self._sync_functions[func]
        except KeyError:
            pass
        except TypeError:  # unhashable: ask Flask
            return super().ensure_sync(func)
        result = super().ensure_sync(func)
        if len(self._sync_functions) < self.SYNC_CACHE_SIZE:
            self._sync_functions[func] = result
        return result


class LazyBuilderRule(Rule):
    """A URL rule whose URL-building functions are generated on first use. werkzeug generates
    two per rule (Python source, compiled) as the rule is added: with 300 rules that was most of
    create_app's time, and so of the server's start-up, while this server builds URLs for few."""

    def _compile_builder(self, append_unknown=True):
        generate = super()._compile_builder
        built = []

        def build(rule, *args, **kwargs):
            if not built:
                built.append(generate(append_unknown).__get__(rule, None))
            return built[0](*args, **kwargs)

        return build


class LazyViews(dict):
    """`app.view_functions`, filled as requests arrive. Every route is in the URL map from the
    start (api/routes.py); the first request routed to one of a blueprint's endpoints imports
    its module and takes all of that blueprint's views, under each name it is mounted with.
    Flask dispatches with `view_functions[endpoint]`, so answering a missing key is all it takes;
    `get`, `in` and iteration see only what is loaded (`load_all` loads the rest)."""

    def __init__(self, loaded, owners):
        super().__init__(loaded)
        self.owners = owners  # mount name (an endpoint's prefix) -> (module, blueprint attribute)

    def __missing__(self, endpoint):
        owner = self.owners.get(endpoint.partition(".")[0])
        if owner is None:
            raise KeyError(endpoint)
        self._take(owner)
        return dict.__getitem__(self, endpoint)

    def load_all(self):
        for owner in set(self.owners.values()):
            self._take(owner)

    def _take(self, owner):
        views = blueprint_views(load_blueprint(*owner))
        for name, its_owner in self.owners.items():
            if its_owner == owner:
                for local, view in views:
                    self.setdefault(f"{name}.{local}", view)


class _ViewRecorder:
    """Stands in for Flask's BlueprintSetupState while a blueprint's recorded route calls are
    replayed, keeping each view with the endpoint registration would give it."""

    def __init__(self):
        self.views = []

    def add_url_rule(self, rule, endpoint=None, view_func=None, **options):
        self.views.append((endpoint or view_func.__name__, view_func))


# What a blueprint mounted lazily may not have beyond what a new one has: Flask merges these into
# the app when a blueprint is registered, and a lazily mounted one never is.
_BLUEPRINT_EXTRAS = ("before_request_funcs", "after_request_funcs", "teardown_request_funcs", "error_handler_spec",
                     "url_value_preprocessors", "url_default_functions", "template_context_processors",
                     "_blueprints")


def _shape(blueprint, name):
    value = getattr(blueprint, name)
    return {key: len(entries) for key, entries in value.items()} if isinstance(value, dict) else len(value)


def blueprint_views(blueprint):
    """[(endpoint within the blueprint, view function)] of every route the blueprint declares.
    Raises for a blueprint with more than routes (hooks, error handlers, files, commands, nested
    blueprints), which only Flask's own registration would mount."""
    plain = Blueprint("plain", __name__)
    extras = [name for name in _BLUEPRINT_EXTRAS if _shape(blueprint, name) != _shape(plain, name)]
    if blueprint.has_static_folder or blueprint.template_folder or blueprint.cli.commands:
        extras.append("files or commands")
    if extras:
        raise ValueError(f"blueprint {blueprint.name!r} has {', '.join(extras)}: it cannot be mounted lazily")
    recorder = _ViewRecorder()
    for deferred in blueprint.deferred_functions:
        deferred(recorder)
    return recorder.views


def routing_app(import_name, **options):
    """A ChatApplianceFlask (Flask's `import_name` and options) whose URL map takes the app's
    rules: URL builders made on first use (LazyBuilderRule), and every <int:...> in a path
    bounded in length (web/params.py), set before any of our routes is added."""
    app = ChatApplianceFlask(import_name, **options)
    app.session_interface = NoFlaskSessions()
    app.url_rule_class = LazyBuilderRule
    app.url_map.converters["int"] = BoundedIntConverter
    return app


def load_blueprint(module, attribute):
    """A blueprint object, by its module's full name (imports the module)."""
    return getattr(import_module(module), attribute)


# What Blueprint.register passes Flask.add_url_rule for a route of ours, besides its methods.
ROUTE_OPTIONS: dict[str, object] = {"defaults": {}, "provide_automatic_options": None, "subdomain": None}


def describe_routes(mounts):
    """Every route the blueprints of `mounts` ((module, attribute, register_blueprint options),
    as app.blueprint_mounts gives them) add, as [(module, attribute, ((rule, endpoint, methods),
    ...))] per mount, by mounting them all on a scratch app: what api/routes.py lists. Raises for
    a route that needs options the list does not carry."""
    app = routing_app(__name__)
    calls = []
    add_url_rule = app.add_url_rule

    def record(rule, endpoint=None, view_func=None, **options):
        methods = options.pop("methods", None)
        if options != ROUTE_OPTIONS or not methods or endpoint is None:
            raise ValueError(f"{rule}: api/routes.py cannot carry {endpoint!r}, {options!r}")
        calls.append((rule, endpoint, tuple(methods)))
        add_url_rule(rule, endpoint, view_func, methods=methods, **options)

    app.add_url_rule = record
    described = []
    for module, attribute, options in mounts:
        calls.clear()
        blueprint = load_blueprint(module, attribute)
        blueprint_views(blueprint)  # raises for one that cannot be mounted lazily
        app.register_blueprint(blueprint, **options)
        described.append((module, attribute, tuple(calls)))
    return described


def add_routes(app, routes):
    """Every blueprint route into the URL map, from `routes` (api/routes.py's ROUTES, as
    describe_routes gives them), with their views loaded on first use (LazyViews): at start, no
    view module is imported."""
    owners = {}
    for module, attribute, rules in routes:
        for rule, endpoint, methods in rules:
            app.add_url_rule(rule, endpoint, **dict(ROUTE_OPTIONS, defaults={}, methods=list(methods)))
            owners[endpoint.partition(".")[0]] = (module, attribute)
    app.view_functions = LazyViews(app.view_functions, owners)
