"""What `pip install .` ships of the files the server serves or reads: setup.cfg's package_data,
expanded as setuptools expands it, against the files on disk."""

import os
from glob import glob
from pathlib import Path

from setuptools.config.setupcfg import read_configuration

ROOT = Path(__file__).resolve().parents[2]
# Folders of data files (no Python): each file in them must be shipped by its package.
DATA_FOLDERS = {
    "chat_appliance.webclient": ("static", "templates"),
    "chat_appliance.markdown": ("vendor",),
}


def shipped(package_data, package):
    """The files package_data ships for `package`, relative to its folder: as setuptools'
    build_py finds them (each pattern globbed recursively, then only files)."""
    folder = ROOT / package.replace(".", "/")
    found = set()
    for pattern in package_data.get(package, ()):
        found.update(path for path in glob(str(folder / pattern), recursive=True) if os.path.isfile(path))
    return {str(Path(path).relative_to(folder)) for path in found}


def test_every_served_file_is_packaged():
    """Does setup.cfg's package_data ship every file of the web client's static and templates
    folders (script modules at any depth included) and of the vendored KaTeX, so that an install
    that is not editable serves the page and typesets TeX?"""
    package_data = read_configuration(str(ROOT / "setup.cfg"))["options"]["package_data"]
    for package, folders in DATA_FOLDERS.items():
        base = ROOT / package.replace(".", "/")
        on_disk = {str(path.relative_to(base)) for folder in folders for path in (base / folder).rglob("*")
                   if path.is_file() and "__pycache__" not in path.parts}
        assert on_disk, package
        assert sorted(on_disk - shipped(package_data, package)) == [], package


def test_a_file_in_a_new_subfolder_would_be_packaged(tmp_path):
    """Would a script module in a subfolder of static/js/ that does not exist yet be shipped by
    today's patterns (so that the test above cannot pass only because no subfolder exists)?"""
    package_data = read_configuration(str(ROOT / "setup.cfg"))["options"]["package_data"]
    folder = tmp_path / "pkg"
    (folder / "static" / "js" / "widgets" / "deeper").mkdir(parents=True)
    (folder / "static" / "js" / "widgets" / "deeper" / "poll.js").write_text("export {};\n")
    (folder / "static" / "app.css").write_text("body {}\n")
    found = set()
    for pattern in package_data["chat_appliance.webclient"]:
        found.update(path for path in glob(str(folder / pattern), recursive=True) if os.path.isfile(path))
    assert {str(Path(path).relative_to(folder)) for path in found} == {"static/js/widgets/deeper/poll.js",
                                                                     "static/app.css"}


def test_the_emoji_font_is_packaged_with_its_licence():
    """Does package_data ship each emoji font part that app.css's @font-face rules name, and the
    font's licence beside them, so that an installed (not editable) server draws emoji with it?"""
    import re

    package_data = read_configuration(str(ROOT / "setup.cfg"))["options"]["package_data"]
    files = shipped(package_data, "chat_appliance.webclient")
    css = (ROOT / "chat_appliance" / "webclient" / "static" / "app.css").read_text()
    parts = set(re.findall(r"@font-face \{[^}]*url\((fonts/[^)]+)\) format\(\"woff2\"\)", css))
    assert parts and all(part.endswith(".woff2") for part in parts)
    assert sorted(f"static/{part}" for part in parts if f"static/{part}" not in files) == []
    folders = {part.rsplit("/", 1)[0] for part in parts}
    assert {f"static/{folder}/LICENSE" for folder in folders} <= files
