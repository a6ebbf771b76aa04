"""Thumbnails of uploaded images, made with Pillow in the sizes and formats Zulip serves.

Zulip's facts, kept here: one still thumbnail ``840x560.webp`` (fits in 840x560, never
enlarged) and, for an animated image, also ``840x560-anim.webp``; the message's
``message_inline_image`` markup points at the animated one when the image has several frames, at
the still one otherwise. A thumbnail is served at ``/user_uploads/thumbnail/{path_id}/{format}``
to whoever may download the file itself. EXIF orientation is applied, and no metadata (EXIF,
XMP, ICC aside) is written.

An upload is a member's file: the decoder is the attack surface. Only the decoders of the types
thumbnailed are ever asked to read it (a file named `.png` that holds EPS would otherwise reach
Pillow's EPS plugin, which runs Ghostscript). Its size is budgeted from its header before any
pixel is decoded: width x height x every frame at most 90 million pixels (Zulip's limit for one
image; an animation's frames are all decoded), and an image that cannot be decoded at a reduced
scale (JPEG can, with draft mode) at most MAX_FULL_DECODE_PIXELS, since its decode holds every
pixel at once. Over a budget it is refused as a decompression bomb: no thumbnail, a plain link.

The upload request only reads the header (probe_image: the size, the frames, the budgets); the
pixels are decoded off the request path by the thumbnail worker (workers/thumbnails.py), which
calls thumbnail_upload. Until then a message linking the image renders Zulip's placeholder.

Thumbnails are files under the uploads folder: ``thumbnail/{path_id}/{format}``, each written
under a temporary name and renamed into place, so that a thumbnail being rewritten (two
processes working on the same upload after a restart) is never served half written.
"""

from __future__ import annotations

import logging
import os
import pathlib
from dataclasses import dataclass
from typing import Any, Optional

log = logging.getLogger("chat_appliance.thumbnails")

MAX_WIDTH, MAX_HEIGHT = 840, 560
STILL_FORMAT = f"{MAX_WIDTH}x{MAX_HEIGHT}.webp"
ANIMATED_FORMAT = f"{MAX_WIDTH}x{MAX_HEIGHT}-anim.webp"
# Types browsers do not show (TIFF here) also get a large still, Zulip's transcoded image, which
# the lightbox shows instead of the original: 4032x3024, or 3024x4032 for a portrait.
TRANSCODED_LANDSCAPE, TRANSCODED_PORTRAIT = "4032x3024.webp", "3024x4032.webp"
FORMATS = (STILL_FORMAT, ANIMATED_FORMAT, TRANSCODED_LANDSCAPE, TRANSCODED_PORTRAIT)
BROWSER_TYPES = frozenset({"image/gif", "image/jpeg", "image/png", "image/webp", "image/bmp"})
IMAGE_BOMB_TOTAL_PIXELS = 90_000_000
# Frames kept in an animated thumbnail (the original is always there in full).
MAX_ANIMATED_FRAMES = 100
# The content types Zulip thumbnails that Pillow reads without extra plugins.
THUMBNAIL_TYPES = frozenset({"image/gif", "image/jpeg", "image/png", "image/tiff", "image/webp", "image/bmp"})
# Pillow's names of the decoders of those types: the only ones Image.open may try.
PILLOW_FORMATS = ("JPEG", "PNG", "GIF", "WEBP", "TIFF", "BMP")
# Formats Pillow decodes at a reduced scale (draft mode): their decode costs the thumbnail's size.
DRAFT_FORMATS = frozenset({"JPEG", "MPO"})
# Pixels of an image decoded whole (PNG, GIF, WebP, TIFF, BMP): about 100 MB as RGBA.
MAX_FULL_DECODE_PIXELS = 25_000_000
WEBP_QUALITY = 80


class BadImageError(Exception):
    """Not an image Pillow can read, or one over the pixel limit."""


@dataclass
class ImageInfo:
    width: int  # as displayed, after EXIF orientation
    height: int
    frames: int
    formats: list[str]


def thumbnail_dir(uploads_root: pathlib.Path, path_id: str) -> pathlib.Path:
    return uploads_root / "thumbnail" / path_id


def _save(image: Any, target: pathlib.Path, **options: Any) -> None:
    """Save as WebP under a temporary name, then rename into place."""
    partial = target.with_name(target.name + ".part")
    try:
        image.save(partial, "WEBP", quality=WEBP_QUALITY, method=4, **options)
        os.replace(partial, target)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise


def _open(source: pathlib.Path) -> Any:
    from PIL import Image

    # Pillow's own bomb check is a warning below twice its limit: ours is explicit, below.
    Image.MAX_IMAGE_PIXELS = None
    try:
        image = Image.open(source, formats=PILLOW_FORMATS)
        frames = getattr(image, "n_frames", 1)
    except (OSError, ValueError, SyntaxError, EOFError) as error:
        raise BadImageError(str(error)) from error
    pixels = image.width * image.height
    decoded = pixels * min(frames, MAX_ANIMATED_FRAMES + 1)  # the frames _animated decodes, and one more
    if (pixels * frames > IMAGE_BOMB_TOTAL_PIXELS or decoded > IMAGE_BOMB_TOTAL_PIXELS
            or (image.format not in DRAFT_FORMATS and pixels > MAX_FULL_DECODE_PIXELS)):
        image.close()
        raise BadImageError("Image size exceeds limit.")
    return image


def _oriented_size(image: Any) -> tuple[int, int]:
    try:
        orientation = image.getexif().get(0x0112, 1)
    except Exception:
        orientation = 1
    if orientation in (5, 6, 7, 8):
        return image.height, image.width
    return image.width, image.height


def _still(image: Any, box: tuple[int, int] = (MAX_WIDTH, MAX_HEIGHT)) -> Any:
    from PIL import Image, ImageOps

    if image.format == "JPEG":
        # Decode at a reduced scale straight away: a 12-megapixel photo then costs a fraction of
        # its full decode, in time and memory.
        image.draft("RGB", (box[0] * 2, box[1] * 2))
    image.seek(0)
    frame = ImageOps.exif_transpose(image)
    if frame.mode not in ("RGB", "RGBA"):
        frame = frame.convert("RGBA" if "transparency" in frame.info or frame.mode in ("LA", "PA", "P") else "RGB")
    frame.thumbnail(box, Image.Resampling.LANCZOS, reducing_gap=3.0)
    return frame


def _animated(image: Any) -> tuple[list[Any], list[int]]:
    from PIL import Image, ImageSequence

    frames, durations = [], []
    for index, frame in enumerate(ImageSequence.Iterator(image)):
        if index >= MAX_ANIMATED_FRAMES:
            break
        converted = frame.convert("RGBA")
        converted.thumbnail((MAX_WIDTH, MAX_HEIGHT), Image.Resampling.LANCZOS)
        frames.append(converted)
        durations.append(int(frame.info.get("duration", 100) or 100))
    return frames, durations


def make_thumbnails(source: pathlib.Path, target_dir: pathlib.Path, content_type: str = "") -> ImageInfo:
    """Write the thumbnails of the image at ``source`` into ``target_dir``; raise BadImageError
    for what is not a readable image or is over the pixel limit."""
    image = _open(source)
    try:
        frames = getattr(image, "n_frames", 1)
        width, height = _oriented_size(image)
        target_dir.mkdir(parents=True, exist_ok=True)
        formats = []
        try:
            still = _still(image)
            # No exif= or xmp=: nothing of the original's metadata goes into the thumbnail.
            _save(still, target_dir / STILL_FORMAT)
            formats.append(STILL_FORMAT)
            if frames > 1:
                moving, durations = _animated(image)
                _save(moving[0], target_dir / ANIMATED_FORMAT, save_all=True, append_images=moving[1:],
                      duration=durations, loop=0)
                formats.append(ANIMATED_FORMAT)
            if content_type and content_type not in BROWSER_TYPES:
                name = TRANSCODED_LANDSCAPE if width >= height else TRANSCODED_PORTRAIT
                box = (4032, 3024) if width >= height else (3024, 4032)
                _save(_still(image, box), target_dir / name)
                formats.append(name)
        except (OSError, ValueError, SyntaxError, EOFError) as error:
            raise BadImageError(str(error)) from error
        return ImageInfo(width=width, height=height, frames=frames, formats=formats)
    finally:
        image.close()


def thumbnail_type(content_type: str) -> Optional[str]:
    """The content type without parameters, lowercased, if it is one we thumbnail; else None."""
    bare = content_type.split(";")[0].strip().lower()
    return bare if bare in THUMBNAIL_TYPES else None


def probe_image(source: pathlib.Path, content_type: str) -> Optional[ImageInfo]:
    """What the header of an uploaded image says (size as displayed, frames; no formats), read by
    the upload request without decoding a pixel; None for a file that is not an image we
    thumbnail, cannot be read by our decoders, or is over a pixel budget (it stays a plain link,
    as on Zulip)."""
    if thumbnail_type(content_type) is None:
        return None
    try:
        image = _open(source)
    except BadImageError as error:
        log.info("No thumbnail for upload %s: %s", source.name, error)
        return None
    try:
        width, height = _oriented_size(image)
        return ImageInfo(width=width, height=height, frames=getattr(image, "n_frames", 1), formats=[])
    finally:
        image.close()


def thumbnail_upload(uploads_root: pathlib.Path, path_id: str, content_type: str) -> Optional[ImageInfo]:
    """Thumbnails for one stored upload, or None when it is not an image we thumbnail (or a bad
    or oversized one, which is logged)."""
    bare = thumbnail_type(content_type)
    if bare is None:
        return None
    try:
        return make_thumbnails(uploads_root / path_id, thumbnail_dir(uploads_root, path_id), bare)
    except BadImageError as error:
        log.info("No thumbnail for upload %s: %s", path_id, error)
        remove_thumbnails(uploads_root, path_id)
        return None


def remove_thumbnails(uploads_root: pathlib.Path, path_id: str) -> None:
    folder = thumbnail_dir(uploads_root, path_id)
    for name in FORMATS:
        (folder / name).unlink(missing_ok=True)
        (folder / (name + ".part")).unlink(missing_ok=True)  # a write cut short by a kill
    for parent in (folder, folder.parent, folder.parent.parent):
        try:
            parent.rmdir()
        except OSError:
            break


def transcoded_image(formats: str) -> Optional[str]:
    """The large still made for a type browsers do not show, if any (Zulip's data-transcoded-image)."""
    return next((f for f in formats.split() if f in (TRANSCODED_LANDSCAPE, TRANSCODED_PORTRAIT)), None)


def default_thumbnail(frames: int, formats: str) -> Optional[str]:
    """The format a message's markup points at: animated for an animated image (as Zulip picks
    the first of its formats matching the image), None while none is made."""
    made = formats.split()
    wanted = ANIMATED_FORMAT if frames > 1 else STILL_FORMAT
    if wanted in made:
        return wanted
    return made[0] if made else None
