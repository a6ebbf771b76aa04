"""Start-up loads only what a request needs first: a server opening an up-to-date
instance imports no migration module, no Markdown engine, no emoji table and no exporter; the
first render loads the engine, and Pygments, dateutil and the emoji table wait for the first
message that needs them."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

HEAVY = ("chat_appliance.migrations.0", "chat_appliance.markdown.engine", "chat_appliance.markdown.emoji",
         "chat_appliance.markdown.previews", "markdown.core",
         "chat_appliance.ops.transfer.exporter", "pygments", "nh3", "zulip_emoji_mapping", "nacl")

OPEN_APP = textwrap.dedent("""
    import sys
    from pathlib import Path
    from chat_appliance.app import create_app
    from chat_appliance.config import load_config
    create_app(load_config(Path(sys.argv[1]), {"LOG_REQUESTS": False}))
    heavy = tuple(sys.argv[2].split())
    print("loaded:", " ".join(sorted(m for m in sys.modules if m.startswith(heavy))))
    from chat_appliance.lib.rendering import render_plain
    assert render_plain("**bold**") == "<p><strong>bold</strong></p>"
    print("after a render:", "chat_appliance.markdown.engine" in sys.modules)
    on_demand = ("pygments", "dateutil", "zulip_emoji_mapping")

    def loaded():
        return " ".join(sorted(name for name in on_demand if name in sys.modules))

    assert render_plain("plain words, a link https://example.com/a, 10:30 and ~~struck~~") != ""
    print("plain message:", loaded())
    assert "codehilite" in render_plain("```python\\nx = 1\\n```")
    print("code block:", loaded())
    assert "<time" in render_plain("<time:2024-05-01T10:00:00+02:00>")
    print("timestamp:", loaded())
    assert "emoji-1f642" in render_plain("hi :smile:")
    print("emoji:", loaded())
""")


def open_instance(instance):
    """Open the app on `instance` in a new process (its own SQLite file, whatever database the
    suite runs on); returns its lines of output."""
    env = {k: v for k, v in os.environ.items() if k != "CHAT_APPLIANCE_DATABASE_URL"}
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run([sys.executable, "-c", OPEN_APP, str(instance), " ".join(HEAVY)], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_opening_an_up_to_date_instance_loads_none_of_the_heavy_modules(tmp_path):
    instance = tmp_path / "instance"
    instance.mkdir()
    first = open_instance(instance)
    assert "chat_appliance.migrations.0001_initial_schema" in first[0]  # a new database is migrated
    assert open_instance(instance) == ["loaded: ", "after a render: True", "plain message: ",
                                       "code block: pygments", "timestamp: dateutil pygments",
                                       "emoji: dateutil pygments zulip_emoji_mapping"]


def model_modules():
    """The model modules that load on first use, in order: those models/everything.py imports
    from (read from its source, so that asking imports none of them)."""
    import ast

    tree = ast.parse((ROOT / "chat_appliance" / "models" / "everything.py").read_text())
    return [node.module.removeprefix("chat_appliance.models.") for node in tree.body if isinstance(node, ast.ImportFrom)]


FIRST_REQUESTS = textwrap.dedent("""
    import sys
    from pathlib import Path
    from chat_appliance.app import create_app
    from chat_appliance.config import load_config
    MODEL_MODULES = sys.argv[2].split()

    def loaded():
        return " ".join(name for name in MODEL_MODULES if f"chat_appliance.models.{name}" in sys.modules)

    app = create_app(load_config(Path(sys.argv[1]), {"LOG_REQUESTS": False, "RATE_LIMITING": False}))
    client = app.test_client()
    print("opened:", loaded())
    print("server_settings:", client.get("/api/v1/server_settings").json["realm_name"], loaded())
    answer = client.post("/api/v1/fetch_api_key", data={"username": "owner@example.com", "password": "pw-1234567"})
    key = answer.json["api_key"]
    me = client.get("/api/v1/users/me", auth=("owner@example.com", key)).json
    print("users/me:", me["email"], loaded() == " ".join(MODEL_MODULES))
""")


def test_a_restarted_server_answers_server_settings_before_loading_the_models(tmp_path):
    """The first request of a client, GET /server_settings, needs only the organization: the
    other model modules load with the first request that uses one of them, all at once."""
    instance = tmp_path / "instance"
    env = {k: v for k, v in os.environ.items() if k != "CHAT_APPLIANCE_DATABASE_URL"}
    env["PYTHONPATH"] = str(ROOT)
    made = subprocess.run([sys.executable, "-m", "chat_appliance", "init", "--instance", str(instance),
                           "--org-name", "Lazy", "--owner-email", "owner@example.com", "--owner-name", "Owner",
                           "--owner-password", "pw-1234567"], env=env, cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert made.returncode == 0, made.stderr
    done = subprocess.run([sys.executable, "-c", FIRST_REQUESTS, str(instance), " ".join(model_modules())], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["opened: ", "server_settings: Lazy ", "users/me: owner@example.com True"]


@pytest.mark.parametrize("first", ["from chat_appliance.models import Draft",
                                   "from chat_appliance.models import TOPIC_MUTED",
                                   "from chat_appliance import models; models.Stream",
                                   "import chat_appliance.lib.access"])
def test_any_model_brings_every_backref(first):
    """However the first model is reached, every model module loads with it, so that the
    backrefs they add to the organization and the accounts exist."""
    code = textwrap.dedent(f"""
        {first}
        from chat_appliance.models.realm import Realm
        import sys
        missing = [name for name in {model_modules()!r} if f"chat_appliance.models.{{name}}" not in sys.modules]
        from chat_appliance import models
        print(missing, hasattr(Realm, "emoji"), hasattr(Realm, "streams"), hasattr(models.UserProfile, "services"),
              hasattr(models.Message, "reactions"))
    """)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["[]", "True", "True", "True", "True"]


def test_the_lazy_names_are_declared_once():
    """models/everything.py is the one declaration of the lazily loaded names (the package's
    __getattr__ loads them from it, mypy reads its imports through the package's TYPE_CHECKING
    star import): is it only imports of model modules, does the package give each name it
    imports (and __all__ list each once), and is a name it does not declare refused?"""
    import ast

    from chat_appliance import models
    from chat_appliance.models import everything

    tree = ast.parse((ROOT / "chat_appliance" / "models" / "everything.py").read_text())
    imported = []
    for node in tree.body:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # the docstring
        if isinstance(node, ast.Assign):
            assert [target.id for target in node.targets] == ["NAMES"], ast.unparse(node)
            continue
        assert isinstance(node, ast.ImportFrom) and node.module.startswith("chat_appliance.models."), ast.unparse(node)
        imported += [alias.name for alias in node.names]
    assert list(everything.NAMES) == imported
    assert len(models.__all__) == len(set(models.__all__))
    assert set(models.__all__) == set(imported) | set(models._CORE)
    for name in models.__all__:
        assert getattr(models, name) is not None, name
    with pytest.raises(AttributeError):
        models.NotAModel
    with pytest.raises(AttributeError):
        models.__wrapped__