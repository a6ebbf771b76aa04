"""The thumbnail worker (workers/thumbnails.py): uploads answer without waiting for a decode, a
message sent meanwhile shows Zulip's placeholder, and the worker then rewrites it and tells the
recipients with a rendering-only update_message; work left by a stopped process is taken up at
the next start; hostile images are refused, a bounded number at a time.

`gate` holds the worker's decodes until the test opens it: a slow image on demand."""

import io
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from PIL import Image

from ..support.helpers import download, get_events, ok, register, send, thumbnails_made, upload
from ..support.images import EPS, gif_canvas_with_tiny_frames, image_bytes, png_of_zeros, truncated_png

PLACEHOLDER_SRC = "/static/images/loading/loader-black.svg"


@pytest.fixture
def gate(app, monkeypatch):
    """The worker's decodes wait for gate.open(); gate.entered is set when one is waiting, and
    gate.threads names the threads that decoded."""
    from chat_appliance.actions import thumbnails

    opened, entered, threads = threading.Event(), threading.Event(), []
    original = thumbnails.thumbnail_upload

    def held(*args, **kwargs):
        threads.append(threading.current_thread().name)
        entered.set()
        assert opened.wait(30), "the test never opened the gate"
        return original(*args, **kwargs)

    monkeypatch.setattr(thumbnails, "thumbnail_upload", held)
    yield SimpleNamespace(open=opened.set, entered=entered, threads=threads)
    opened.set()  # before the app closes: close() lets a decode under way finish


def html_of(client, message_id):
    return ok(client.get(f"messages/{message_id}"))["message"]["content"]


def placeholder(url, name, dimensions, content_type="image/png"):
    """The preview while the thumbnail is made (`name` None: a link whose text is its URL has no title)."""
    title = "" if name is None else f' title="{name}"'
    return (f'<div class="message_inline_image"><a href="{url}"{title}><img class="image-loading-placeholder" '
            f'data-original-content-type="{content_type}" data-original-dimensions="{dimensions}" '
            f'src="{PLACEHOLDER_SRC}"></a></div>')


def thumbnail(url, name, dimensions, content_type="image/png"):
    path_id = url[len("/user_uploads/"):]
    return (f'<div class="message_inline_image"><a href="{url}" title="{name}"><img '
            f'data-original-content-type="{content_type}" data-original-dimensions="{dimensions}" '
            f'src="/user_uploads/thumbnail/{path_id}/840x560.webp"></a></div>')


def update_events(client, queue_id):
    """The update_message events of the queue (validated against Zulip's OpenAPI description)."""
    return [event for event in get_events(client, queue_id) if event["type"] == "update_message"]


def test_upload_answers_while_its_image_is_still_decoded(org, app, gate):
    """Does POST /user_uploads answer while the image's decode is held (a slow, large image), the
    decode running on the worker's thread and not the request's, with the file downloadable at
    once and its thumbnail there once the decode ends?"""
    data = image_bytes((8000, 5000))  # 40 megapixels
    started = time.monotonic()
    url = ok(upload(org, org.hamlet, data, name="big.jpg"))["url"]
    assert time.monotonic() - started < 10  # a request waiting for the held decode would wait 30 s
    assert gate.entered.wait(10)
    assert gate.threads == ["thumbnails-1"]
    assert download(org, org.hamlet, url).data == data
    thumb_url = f"/user_uploads/thumbnail/{url[len('/user_uploads/'):]}/840x560.webp"
    assert download(org, org.hamlet, thumb_url).status_code == 404  # not made yet
    gate.open()
    thumbnails_made(app)
    with Image.open(io.BytesIO(download(org, org.hamlet, thumb_url).data)) as image:
        assert image.size == (840, 525)


def test_placeholder_until_the_thumbnail_then_a_rendering_only_update(org, app, gate):
    """Does a message sent (or edited to link the image) before its thumbnail exists render
    Zulip's image-loading-placeholder with the original dimensions; and once the worker has made
    it, does GET /messages show the thumbnail markup (what a message sent now renders), with each
    recipient, and only they, told by a rendering-only update_message (no editor, no edit)?"""
    hamlet, othello, cordelia = (org.client(user) for user in (org.hamlet, org.othello, org.cordelia))
    queues = {name: register(client, event_types='["update_message"]')["queue_id"]
              for name, client in (("hamlet", hamlet), ("othello", othello), ("cordelia", cordelia))}
    url = ok(upload(org, org.hamlet, image_bytes((1600, 1200), "PNG"), name="photo.png"))["url"]
    content = f"[photo.png]({url})"
    sent = send(hamlet, content=content)
    edited = send(hamlet, content="the photo follows")
    ok(hamlet.patch(f"messages/{edited}", content=f"here: {content}"))
    assert html_of(hamlet, sent) == f'<p><a href="{url}">photo.png</a></p>\n' + placeholder(url, "photo.png", "1600x1200")
    assert placeholder(url, "photo.png", "1600x1200") in html_of(othello, edited)
    assert update_events(othello, queues["othello"]) and all(  # the edit's own event, not a rendering
        not event["rendering_only"] for event in update_events(othello, queues["othello"]))
    last_seen = {name: max(event["id"] for event in get_events(client, queues[name])) if get_events(client, queues[name])
                 else -1 for name, client in (("hamlet", hamlet), ("othello", othello), ("cordelia", cordelia))}

    gate.open()
    thumbnails_made(app)
    ready = f'<p><a href="{url}">photo.png</a></p>\n' + thumbnail(url, "photo.png", "1600x1200")
    assert html_of(othello, sent) == ready
    assert html_of(othello, send(hamlet, content=content)) == ready  # as a message sent now renders
    assert html_of(othello, edited) == f'<p>here: <a href="{url}">photo.png</a></p>\n' + thumbnail(
        url, "photo.png", "1600x1200")
    message = ok(othello.get(f"messages/{sent}"))["message"]
    assert "last_edit_timestamp" not in message and message["content"] == ready
    for name, client in (("hamlet", hamlet), ("othello", othello)):
        events = [event for event in get_events(client, queues[name], last_event_id=last_seen[name])
                  if event["type"] == "update_message"]
        by_message = {event["message_id"]: event for event in events}
        assert sorted(by_message) == sorted([sent, edited]) and len(events) == 2, events
        event = by_message[sent]
        assert event["rendering_only"] is True and event["user_id"] is None
        assert event["message_ids"] == [sent] and event["rendered_content"] == ready
        assert event["content"] == content and isinstance(event["flags"], list)
        assert "orig_content" not in event and "stream_id" not in event
    assert get_events(cordelia, queues["cordelia"], last_event_id=last_seen["cordelia"]) == []  # not a recipient
    history = ok(hamlet.get(f"messages/{sent}/history"))["message_history"]
    assert len(history) == 1  # no edit recorded


def test_a_thumbnail_finished_between_render_and_commit_is_not_missed(org, app, gate, monkeypatch):
    """When the worker finishes after a send has rendered the placeholder but before the send
    commits (so that the worker did not see the message), does the message still store the
    thumbnail markup?"""
    from chat_appliance.actions import messages

    url = ok(upload(org, org.hamlet, image_bytes((300, 200), "PNG"), name="p.png"))["url"]
    rendered = []
    original = messages.render_message

    def render_then_finish(*args, **kwargs):
        result = original(*args, **kwargs)
        rendered.append(result.html)
        gate.open()
        thumbnails_made(app)
        return result

    monkeypatch.setattr(messages, "render_message", render_then_finish)
    hamlet = org.client(org.hamlet)
    html = html_of(hamlet, send(hamlet, content=f"[p.png]({url})"))
    assert "image-loading-placeholder" in rendered[0]
    assert html == f'<p><a href="{url}">p.png</a></p>\n' + thumbnail(url, "p.png", "300x200")


def test_an_image_that_cannot_be_decoded_ends_as_a_plain_link(org, app, gate):
    """Does an image whose header reads but whose pixels do not show the placeholder, and then
    lose its preview (Zulip's worker drops the preview div), leaving the link, as a message sent
    now renders it, even where the preview had taken the link's place? Is the recipient told?"""
    hamlet, othello = org.client(org.hamlet), org.client(org.othello)
    queue_id = register(othello, event_types='["update_message"]')["queue_id"]
    url = ok(upload(org, org.hamlet, truncated_png(), name="broken.png"))["url"]
    named, bare = f"look at [broken.png]({url})", f"[{url}]({url})"
    ids = [send(hamlet, content=named), send(hamlet, content=bare)]
    assert placeholder(url, "broken.png", "300x300") in html_of(hamlet, ids[0])
    assert html_of(hamlet, ids[1]) == placeholder(url, None, "300x300")  # the preview took the link's place
    gate.open()
    thumbnails_made(app)
    for message_id, content in zip(ids, (named, bare)):
        html = html_of(othello, message_id)
        assert "message_inline_image" not in html and f'href="{url}"' in html
        assert html == html_of(othello, send(hamlet, content=content))
    events = update_events(othello, queue_id)
    assert sorted(event["message_id"] for event in events) == ids and all(event["rendering_only"] for event in events)
    thumb_url = f"/user_uploads/thumbnail/{url[len('/user_uploads/'):]}/840x560.webp"
    assert download(org, org.hamlet, thumb_url).status_code == 404
    assert download(org, org.hamlet, url).status_code == 200  # the file itself stays


def test_pending_work_is_taken_up_after_a_restart(org, app):
    """When the process stops before the worker made an uploaded image's thumbnails, does the
    next start (resume_workers, which serve calls) make them, update the message sent meanwhile
    and tell its recipients?"""
    from chat_appliance.app import close_app, open_app, resume_workers

    app.extensions["chat_appliance"].workers["thumbnails"].built().close()  # stopped: hears no job
    hamlet, othello = org.client(org.hamlet), org.client(org.othello)
    url = ok(upload(org, org.hamlet, image_bytes((900, 600), "PNG"), name="late.png"))["url"]
    sent = send(hamlet, content=f"[late.png]({url})")
    assert placeholder(url, "late.png", "900x600") in html_of(hamlet, sent)

    config = dict(app.config)
    close_app(app)
    open_app(app, config)
    queue_id = register(othello, event_types='["update_message"]')["queue_id"]
    assert placeholder(url, "late.png", "900x600") in html_of(hamlet, sent)  # nothing happens by itself
    resume_workers(app)
    thumbnails_made(app)
    assert html_of(othello, sent) == f'<p><a href="{url}">late.png</a></p>\n' + thumbnail(url, "late.png", "900x600")
    events = update_events(othello, queue_id)
    assert [(event["message_id"], event["rendering_only"]) for event in events] == [(sent, True)]


def test_the_queue_is_bounded_and_what_it_cannot_hold_is_made_later(org, app, gate):
    """With a queue of two, do five images uploaded while a decode is held keep at most two ids
    queued in memory, and does every one still get its thumbnail (the rest found in the
    database)?"""
    worker = app.extensions["chat_appliance"].workers["thumbnails"]
    worker.queue_size = 2

    def image(i):
        return ok(upload(org, org.hamlet, image_bytes((64 + i, 48), "PNG"), name=f"{i}.png"))["url"]

    # The first is being decoded (held) before the others arrive: on a busy machine the worker
    # could otherwise take it later, and the queue hold the first two instead.
    urls = [image(0)]
    assert gate.entered.wait(10)
    urls += [image(i) for i in range(1, 5)]
    assert len(worker._queue) == 2
    gate.open()
    thumbnails_made(app)
    for url in urls:
        path_id = url[len("/user_uploads/"):]
        assert download(org, org.hamlet, f"/user_uploads/thumbnail/{path_id}/840x560.webp").status_code == 200


def test_an_upload_deleted_while_decoded_leaves_no_thumbnail_behind(org, app, gate):
    """When the uploader deletes the file while its image is being decoded, does the worker
    leave no thumbnail files behind?"""
    hamlet = org.client(org.hamlet)
    url = ok(upload(org, org.hamlet, image_bytes((300, 200), "PNG"), name="gone.png"))["url"]
    assert gate.entered.wait(10)
    attachment = ok(hamlet.get("attachments"))["attachments"][0]
    ok(hamlet.delete(f"attachments/{attachment['id']}"))
    gate.open()
    thumbnails_made(app)
    thumbnails = Path(app.config["INSTANCE_PATH"]) / "uploads" / "thumbnail"
    assert not (thumbnails / url[len("/user_uploads/"):]).exists()
    assert not thumbnails.exists() or not [path for path in thumbnails.rglob("*") if path.is_file()]


def test_the_worst_images_are_refused_without_a_500_or_a_thumbnail(org, app):
    """Are the 3 KB GIF of 120 frames on a 3100x3100 canvas, the 9400x9400 PNG and an EPS file
    named .png each uploaded (200), shown as a plain link at once (refused from their header, no
    placeholder), and, should one be found pending anyway (the worker re-reads the header before
    decoding), refused by the worker too, in bounded time?"""
    from chat_appliance.models import Attachment, database
    from chat_appliance.app import resume_workers

    hamlet = org.client(org.hamlet)
    files = (("frames.gif", gif_canvas_with_tiny_frames()), ("big.png", png_of_zeros()), ("drawing.png", EPS))
    urls = []
    for name, data in files:
        response = upload(org, org.hamlet, data, name=name)
        urls.append(ok(response)["url"])
        html = html_of(hamlet, send(hamlet, content=f"[{name}]({urls[-1]})"))
        assert "message_inline_image" not in html and f'href="{urls[-1]}"' in html
    thumbnails_made(app)
    path_ids = [url[len("/user_uploads/"):] for url in urls]
    with database.connection_context():
        assert Attachment.select().where(Attachment.path_id.in_(path_ids) & Attachment.image_width.is_null(False)).count() == 0
        Attachment.update(image_width=3100, image_height=3100, image_frames=1).where(
            Attachment.path_id.in_(path_ids)).execute()
    started = time.monotonic()
    resume_workers(app)
    thumbnails_made(app)
    assert time.monotonic() - started < 10
    with database.connection_context():
        rows = list(Attachment.select().where(Attachment.path_id.in_(path_ids)))
    assert [(row.image_width, row.thumbnail_formats) for row in rows] == [(None, "")] * 3
    for path_id in path_ids:
        assert download(org, org.hamlet, f"/user_uploads/thumbnail/{path_id}/840x560.webp").status_code == 404


def test_the_placeholder_spinner_is_served(org):
    """Is Zulip's spinner URL, the placeholder's src, served (an SVG image) to clients that load it?"""
    response = org.flask_client.get(PLACEHOLDER_SRC)
    assert response.status_code == 200 and response.mimetype == "image/svg+xml"
    assert b"<svg" in response.data
