"""End to end: images whose thumbnails a stopped server had not made yet get them from the next
`serve` on the instance, with no new upload to set the worker going."""

import io
import time

import requests
from PIL import Image

from ..support.serve_process import ServeProcess


def png(size, colour):
    out = io.BytesIO()
    Image.new("RGB", size, colour).save(out, "PNG")
    return out.getvalue()


def test_thumbnails_left_pending_by_a_stopped_server_are_made_after_its_restart(tmp_path):
    """When `serve` stops (SIGTERM) with an image still waiting for its thumbnails behind others,
    does the next `serve` make them by itself, so that the message sent before the stop shows
    the thumbnail instead of Zulip's placeholder?"""
    instance = tmp_path / "instance"
    first = ServeProcess(instance)
    auth = (first.email, first.api_key)

    def upload(server, name, data):
        answer = requests.post(server.url + "/api/v1/user_uploads", auth=auth, files={"file": (name, data)},
                               timeout=30).json()
        assert answer["result"] == "success", answer
        return answer["url"]

    # Large images ahead (each decoded whole) keep the worker busy for seconds.
    for number in range(5):
        upload(first, f"wall-{number}.png", png((5000, 5000), (number * 50, 80, 120)))
    url = upload(first, "photo.png", png((600, 400), (10, 200, 90)))
    sent = requests.post(first.url + "/api/v1/messages", auth=auth, timeout=30, data={
        "type": "stream", "to": "general", "topic": "photos", "content": f"[photo.png]({url})"}).json()
    assert sent["result"] == "success", sent

    def content(server):
        return requests.get(f"{server.url}/api/v1/messages/{sent['id']}", auth=auth, timeout=30).json()["message"]["content"]

    assert "image-loading-placeholder" in content(first)
    assert first.stop() == 0
    second = ServeProcess(instance, port=first.port)
    try:
        thumbnail = f'src="/user_uploads/thumbnail/{url[len("/user_uploads/"):]}/840x560.webp"'
        deadline = time.monotonic() + 90
        while thumbnail not in content(second) and time.monotonic() < deadline:
            time.sleep(0.2)
        html = content(second)
        assert thumbnail in html and "image-loading-placeholder" not in html, html
        served = requests.get(second.url + f"/user_uploads/thumbnail/{url[len('/user_uploads/'):]}/840x560.webp",
                              auth=auth, timeout=30)
        assert served.status_code == 200 and served.headers["Content-Type"] == "image/webp"
    finally:
        second.stop()
