"""Thumbnails of uploaded images (lib/thumbnails.py): made by the thumbnail worker after the
upload in Zulip's format, served at /user_uploads/thumbnail/... under the file's own access rule,
and used by the renderer's message_inline_image markup. These wait for the worker before sending
(thumbnails_made); what a message shows meanwhile is test_thumbnail_worker.py's business."""

import io

from PIL import Image

from ..support.helpers import download, err, ok, thumbnails_made, upload
from ..support.images import image_bytes


def send(org, user, content, to="Denmark"):
    client = org.client(user)
    msg_id = ok(client.post("messages", type="stream", to=to, topic="pics", content=content))["id"]
    return ok(client.get(f"messages/{msg_id}"))["message"]["content"]


def uploaded(org, app, content, name):
    """Upload as Hamlet and wait for the thumbnail worker; the file's URL."""
    url = ok(upload(org, org.hamlet, content, name=name))["url"]
    thumbnails_made(app)
    return url


def test_uploaded_photo_renders_zulips_inline_image_markup(org, app):
    """Does a message linking an uploaded photo render Zulip's message_inline_image with the
    840x560 webp thumbnail, the original dimensions (after EXIF orientation) and content type?"""
    url = uploaded(org, app, image_bytes((1600, 1200), exif_orientation=6), "photo.jpg")
    path_id = url[len("/user_uploads/"):]
    html = send(org, org.hamlet, f"[photo.jpg]({url})")
    assert html == (
        f'<p><a href="{url}">photo.jpg</a></p>\n'
        f'<div class="message_inline_image"><a href="{url}" title="photo.jpg">'
        f'<img data-original-content-type="image/jpeg" data-original-dimensions="1200x1600" '
        f'src="/user_uploads/thumbnail/{path_id}/840x560.webp"></a></div>')
    thumb = download(org, org.hamlet, f"/user_uploads/thumbnail/{path_id}/840x560.webp")
    assert thumb.status_code == 200 and thumb.mimetype == "image/webp"
    with Image.open(io.BytesIO(thumb.data)) as image:
        assert image.format == "WEBP"
        assert image.size == (420, 560)  # rotated as the EXIF says, then fitted in 840x560
        assert not image.getexif()  # EXIF stripped
    # A bare link to the image at the organization's URL (made relative, as Zulip does) previews too.
    bare = send(org, org.hamlet, org.realm.url + url)
    assert f'<a href="{url[1:]}">' in bare and f'src="/user_uploads/thumbnail/{path_id}/840x560.webp"' in bare


def test_thumbnail_has_the_files_access_rule(org, app):
    """Is the thumbnail refused (404, like a missing file) to whoever may not download the file,
    allowed once a message they can read shares it, and 401 without credentials?"""
    url = uploaded(org, app, image_bytes((300, 200), "PNG"), "p.png")
    thumb_url = "/user_uploads/thumbnail/" + url[len("/user_uploads/"):] + "/840x560.webp"
    err(download(org, org.othello, thumb_url), 404, "NOT_FOUND", "File not found")
    err(download(org, None, thumb_url), 401, "UNAUTHORIZED")
    err(download(org, org.hamlet, thumb_url.replace("840x560.webp", "840x560-anim.webp")), 404, "NOT_FOUND")
    err(download(org, org.hamlet, thumb_url.replace("840x560.webp", "../../x")), 404, "NOT_FOUND")
    send(org, org.hamlet, f"look [p.png]({url})")
    assert download(org, org.othello, thumb_url).status_code == 200
    # A small image is not enlarged.
    with Image.open(io.BytesIO(download(org, org.hamlet, thumb_url).data)) as image:
        assert image.size == (300, 200)


def test_animated_gif_gets_an_animated_thumbnail(org, app):
    """Does an animated GIF get both a still and an animated webp, the markup pointing at the
    animated one with data-animated?"""
    url = uploaded(org, app, image_bytes((100, 80), "GIF", frames=4), "anim.gif")
    path_id = url[len("/user_uploads/"):]
    html = send(org, org.hamlet, f"[anim.gif]({url})")
    assert f'src="/user_uploads/thumbnail/{path_id}/840x560-anim.webp"' in html and 'data-animated="true"' in html
    moving = download(org, org.hamlet, f"/user_uploads/thumbnail/{path_id}/840x560-anim.webp")
    with Image.open(io.BytesIO(moving.data)) as image:
        assert image.n_frames == 4
    assert download(org, org.hamlet, f"/user_uploads/thumbnail/{path_id}/840x560.webp").status_code == 200


def test_decompression_bomb_and_non_images_get_no_preview(org, app):
    """Is an image over the pixel limit refused a thumbnail (still uploaded, shown as a link), and
    does a file that only claims to be an image stay a link?"""
    from chat_appliance.lib import thumbnails

    # A 10000x10000 PNG (100 MP, over Zulip's 90 MP) compresses to a few hundred KiB.
    big = io.BytesIO()
    Image.new("1", (10000, 10000)).save(big, "PNG")
    url = ok(upload(org, org.hamlet, big.getvalue(), name="bomb.png"))["url"]
    assert "message_inline_image" not in send(org, org.hamlet, f"[bomb.png]({url})")
    assert download(org, org.hamlet, url).status_code == 200
    fake = ok(upload(org, org.hamlet, b"not an image", name="fake.png"))["url"]
    html = send(org, org.hamlet, f"[fake.png]({fake})")
    assert "message_inline_image" not in html and f'href="{fake}"' in html
    assert thumbnails.IMAGE_BOMB_TOTAL_PIXELS == 90_000_000


def test_existing_uploads_get_thumbnails_by_command(org, app, capsys):
    """Do uploads stored before thumbnails existed get them from the one-time command's action,
    with progress, and then render as previews?"""
    from pathlib import Path

    from chat_appliance.actions.uploads import do_thumbnail_existing_uploads
    from chat_appliance.cli.ops import progress_bar
    from chat_appliance.lib.thumbnails import remove_thumbnails
    from chat_appliance.models import Attachment, database

    url = uploaded(org, app, image_bytes((900, 600), "PNG"), "old.png")
    path_id = url[len("/user_uploads/"):]
    root = Path(app.config["INSTANCE_PATH"]) / "uploads"
    with database.connection_context():
        Attachment.update(image_width=None, image_height=None, image_frames=None, thumbnail_formats="").where(
            Attachment.path_id == path_id).execute()
    remove_thumbnails(root, path_id)
    assert "message_inline_image" not in send(org, org.hamlet, f"[old.png]({url})")
    with database.connection_context():
        made, seen = do_thumbnail_existing_uploads(root, progress=progress_bar("thumbnail-uploads"))
    assert made == 1 and seen >= 1
    assert f"{seen}/{seen}" in capsys.readouterr().err
    assert f'src="/user_uploads/thumbnail/{path_id}/840x560.webp"' in send(org, org.hamlet, f"[old.png]({url})")
    with database.connection_context():
        assert do_thumbnail_existing_uploads(root)[0] == 0  # nothing left to do


def test_tiff_gets_a_transcoded_image(org, app):
    """Does a TIFF (which browsers do not show) also get Zulip's large transcoded still, named in
    data-transcoded-image and served under the same rule?"""
    url = uploaded(org, app, image_bytes((900, 1200), "TIFF"), "scan.tiff")
    path_id = url[len("/user_uploads/"):]
    err(download(org, org.othello, f"/user_uploads/thumbnail/{path_id}/3024x4032.webp"), 404, "NOT_FOUND")
    html = send(org, org.hamlet, f"[scan.tiff]({url})")
    assert 'data-transcoded-image="3024x4032.webp"' in html and 'data-original-content-type="image/tiff"' in html
    big = download(org, org.hamlet, f"/user_uploads/thumbnail/{path_id}/3024x4032.webp")
    with Image.open(io.BytesIO(big.data)) as image:
        assert image.size == (900, 1200)  # never enlarged
