"""Hostile images: only the thumbnailed formats' decoders read an upload, its pixels are budgeted
over every frame before anything is decoded, and the decoding is done a few images at a time by
the thumbnail worker."""

import io
import time

from PIL import Image

from chat_appliance.lib.thumbnails import probe_image, thumbnail_upload

from ..support.helpers import download, ok, thumbnails_made, upload
from ..support.images import EPS, gif_canvas_with_tiny_frames, png_of_zeros


def timed_thumbnail(tmp_path, data, content_type):
    (tmp_path / "f").write_bytes(data)
    start = time.process_time()
    info = thumbnail_upload(tmp_path, "f", content_type)
    return info, time.process_time() - start


def test_an_animation_is_budgeted_over_every_frame(tmp_path):
    """Is a GIF of 120 frames on a 3100x3100 canvas (1.15 billion pixels to decode, in 3 KB)
    refused from its header, in well under a second of CPU?"""
    data = gif_canvas_with_tiny_frames()
    assert len(data) < 20_000
    info, cpu = timed_thumbnail(tmp_path, data, "image/gif")
    assert info is None and cpu < 0.5
    assert not (tmp_path / "thumbnail").exists()


def test_a_large_png_is_refused_before_its_full_decode(tmp_path):
    """Is a PNG of 9400x9400 (88 million pixels, decoded whole as PNG must be) refused without
    decoding it?"""
    info, cpu = timed_thumbnail(tmp_path, png_of_zeros(), "image/png")
    assert info is None and cpu < 0.5


def test_a_small_animation_and_a_large_jpeg_still_get_thumbnails(tmp_path):
    """Do an ordinary animated GIF and a 40-megapixel JPEG (decoded at a reduced scale) still get thumbnails?"""
    out = io.BytesIO()
    frames = [Image.new("RGB", (200, 200), (i * 40, 0, 0)) for i in range(5)]
    frames[0].save(out, "GIF", save_all=True, append_images=frames[1:], duration=50, loop=0)
    info, _ = timed_thumbnail(tmp_path, out.getvalue(), "image/gif")
    assert info is not None and info.frames == 5
    out = io.BytesIO()
    Image.new("L", (8000, 5000), 128).save(out, "JPEG", quality=50)
    info, _ = timed_thumbnail(tmp_path, out.getvalue(), "image/jpeg")
    assert info is not None and (info.width, info.height) == (8000, 5000)


def test_the_upload_request_reads_the_header_alone(tmp_path):
    """Does the upload's own look at an image (probe_image) cost well under a second of CPU, for
    a 40-megapixel JPEG (its size read: 8000x5000, one frame, nothing decoded) as for the GIF of
    120 frames and the 9400x9400 PNG (refused), and never open EPS?"""
    out = io.BytesIO()
    Image.new("L", (8000, 5000), 128).save(out, "JPEG", quality=50)
    for name, data, content_type, expected in (
            ("photo.jpg", out.getvalue(), "image/jpeg", (8000, 5000, 1)),
            ("frames.gif", gif_canvas_with_tiny_frames(), "image/gif", None),
            ("big.png", png_of_zeros(), "image/png", None),
            ("drawing.png", EPS, "image/png", None)):
        (tmp_path / name).write_bytes(data)
        start = time.process_time()
        info = probe_image(tmp_path / name, content_type)
        assert time.process_time() - start < 0.3, name
        assert (None if info is None else (info.width, info.height, info.frames)) == expected, name


def test_eps_named_png_never_reaches_the_eps_decoder(org, app, tmp_path):
    """Is an EPS file uploaded as `.png` left without a thumbnail, never opened as EPS (whose
    decoder runs Ghostscript)?"""
    from PIL import EpsImagePlugin

    opened = []
    original = EpsImagePlugin.EpsImageFile._open

    def spy(self):
        opened.append(True)
        return original(self)

    EpsImagePlugin.EpsImageFile._open = spy
    try:
        info, _ = timed_thumbnail(tmp_path, EPS, "image/png")
        answer = ok(upload(org, org.hamlet, EPS, name="drawing.png"))
        thumbnails_made(app)
    finally:
        EpsImagePlugin.EpsImageFile._open = original
    assert info is None and opened == []
    assert answer["url"].endswith("drawing.png")


def test_thumbnails_are_made_a_few_at_a_time(org, app, monkeypatch):
    """When six images are uploaded at once, does every upload answer, are at most the worker's
    DECODERS images decoded side by side, by the worker's threads (never a request's), and does
    every one still get its thumbnail?"""
    import threading

    from chat_appliance.lib import thumbnails
    from chat_appliance.workers.thumbnails import DECODERS

    running, most, threads = [0], [0], set()
    lock = threading.Lock()
    original = thumbnails.make_thumbnails

    def counted(*args, **kwargs):
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
            threads.add(threading.current_thread().name)
        try:
            time.sleep(0.1)
            return original(*args, **kwargs)
        finally:
            with lock:
                running[0] -= 1

    monkeypatch.setattr(thumbnails, "make_thumbnails", counted)
    out = io.BytesIO()
    Image.new("RGB", (64, 48), (1, 2, 3)).save(out, "PNG")
    answers = []
    uploads = [threading.Thread(target=lambda i=i: answers.append(upload(org, org.hamlet, out.getvalue(), name=f"{i}.png")))
               for i in range(6)]
    for thread in uploads:
        thread.start()
    for thread in uploads:
        thread.join()
    urls = [ok(answer)["url"] for answer in answers]
    thumbnails_made(app)
    assert 1 <= most[0] <= DECODERS <= 2
    assert threads and all(name.startswith("thumbnails-") for name in threads), threads
    for url in urls:
        assert download(org, org.hamlet, f"/user_uploads/thumbnail/{url[len('/user_uploads/'):]}/840x560.webp").status_code == 200
