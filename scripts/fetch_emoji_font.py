"""Vendor the emoji font the web client serves: Noto Color Emoji (SIL OFL 1.1) in its COLRv1 form,
as the npm package @infolektuell/noto-color-emoji packs it (Google Fonts' files, woff2 parts split by
unicode-range). Copies the parts and the licence into
chat_appliance/webclient/static/fonts/noto-color-emoji-<font version>/ and rewrites the @font-face
rules between the markers in app.css. Run at dev time to update; the files are committed (the
server never reaches the network).

    python scripts/fetch_emoji_font.py [PACKAGE_VERSION FONT_VERSION]

Why this package: @fontsource/noto-color-emoji ships the font with SVG glyphs only, which Chromium
does not draw (its emoji came out blank); COLRv1 is drawn by Chromium and Firefox. Safari draws
neither reliably and skips a source marked tech(color-COLRv1): it keeps the system's Apple emoji,
and an Apple system always has them.

Each part is declared twice, under two families over the same files. "Noto Color Emoji
(chat-appliance)" has the font's whole ranges, for the places that draw only emoji (an emoji
span of a message, reactions, the picker). "Noto Color Emoji (chat-appliance, text)" leads the
page's font stack. It has to come first: Chromium on Linux draws any character after `system-ui`
with the system's fallback (a box where the system has no emoji font), so an emoji font after the
text fonts is never reached. It leaves out what text uses as text (digits, #, *, (c), (R), TM,
arrows, geometric shapes: everything below U+2300 but the joiners, and such symbols after it), so that a
browser without `font-variant-emoji` (app.css asks for Unicode's default presentation with it)
still draws those with the text fonts.

The folder's name carries the font's version because the server lets browsers keep font files
for a year (webclient/views.py): a new release must come under a new URL."""

import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STATIC = ROOT / "chat_appliance" / "webclient" / "static"
PACKAGE = "@infolektuell/noto-color-emoji"
FAMILY = "Noto Color Emoji (chat-appliance)"
TEXT_FAMILY = "Noto Color Emoji (chat-appliance, text)"
# What the text family keeps of the font: the technical symbols (watch, hourglass...), the
# miscellaneous symbols and dingbats, four more, and everything from U+1F000 on.
TEXT_EMOJI = "2300-23FF 2600-27BF 2B1B-2B1C 2B50 2B55 1F000-1FFFF"
SEQUENCE_PARTS = "200D 20E3 FE0F E0020-E007F"
BEGIN = "/* emoji font: begin (scripts/fetch_emoji_font.py writes this block) */"
END = "/* emoji font: end */"


def code_points(ranges):
    """The set of code points of a unicode-range value ("U+1f600-1f64f,U+2764") or of a list like
    TEXT_EMOJI."""
    points = set()
    for part in re.split(r"[,\s]+", ranges.strip()):
        if part:
            first, _, last = part.removeprefix("U+").removeprefix("u+").partition("-")
            points.update(range(int(first, 16), int(last or first, 16) + 1))
    return points


def unicode_range(points):
    """The unicode-range value for a set of code points, runs joined."""
    runs, ordered = [], sorted(points)
    for point in ordered:
        if runs and point == runs[-1][1] + 1:
            runs[-1][1] = point
        else:
            runs.append([point, point])
    return ",".join(f"U+{a:x}" if a == b else f"U+{a:x}-{b:x}" for a, b in runs)


def main(package_version="0.2.0", font_version="2.042"):
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["npm", "pack", "--silent", f"{PACKAGE}@{package_version}"], cwd=tmp, check=True,
                       stdout=subprocess.DEVNULL)
        [archive] = Path(tmp).glob("*.tgz")
        with tarfile.open(archive) as tar:
            tar.extractall(tmp, filter="data")
        package = Path(tmp) / "package"
        faces = re.findall(r"url\(\./files/([^)]+\.woff2)\)[^;]*;\s*unicode-range:\s*([^;]+);",
                           (package / "index.css").read_text())
        assert faces, "index.css changed shape"
        fonts = STATIC / "fonts"
        for old in fonts.glob("noto-color-emoji-*"):
            shutil.rmtree(old)
        folder = fonts / f"noto-color-emoji-{font_version}"
        folder.mkdir(parents=True)
        for name, _ranges in faces:
            shutil.copy(package / "files" / name, folder / f"noto-color-emoji-{name}")
        shutil.copy(package / "LICENSE", folder / "LICENSE")
        (folder / "README.md").write_text(
            f"Noto Color Emoji {font_version} (COLRv1), Copyright 2021 Google Inc., under the SIL Open Font "
            f"License 1.1 (LICENSE). Google Fonts' files, split by unicode-range, from the npm package "
            f"{PACKAGE} {package_version}. Vendored by scripts/fetch_emoji_font.py, which also writes the "
            "@font-face rules in ../../app.css.\n")
    in_text = code_points(TEXT_EMOJI) | code_points(SEQUENCE_PARTS)
    rules = [BEGIN]
    for family, keep in ((FAMILY, None), (TEXT_FAMILY, in_text)):
        for name, ranges in faces:
            points = code_points(ranges)
            if keep is not None:
                points &= keep
            if points:
                rules.append(f'@font-face {{ font-family: "{family}"; font-weight: 100 900; font-display: swap; '
                             f'src: url(fonts/{folder.name}/noto-color-emoji-{name}) format("woff2") tech(color-COLRv1); '
                             f"unicode-range: {unicode_range(points)}; }}")
    rules.append(END)
    css_path = STATIC / "app.css"
    css = css_path.read_text()
    start, end = css.index(BEGIN), css.index(END) + len(END)
    css_path.write_text(css[:start] + "\n".join(rules) + css[end:])
    total = sum(path.stat().st_size for path in folder.iterdir())
    print(f"{len(faces)} parts, {total} bytes in {folder.relative_to(ROOT)}")


if __name__ == "__main__":
    main(*sys.argv[1:])
