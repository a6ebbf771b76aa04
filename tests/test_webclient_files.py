"""The web client's files, served without a browser (the browser tests need Chromium; this does not)."""

import re


def test_page_and_every_file_it_loads_are_served(flask_client):
    """Does / name its scripts and styles, and is each of them served (200, not the API's 404)?"""
    page = flask_client.get("/")
    assert page.status_code == 200
    paths = re.findall(r'(?:src|href)="(/static/[^"]+)"', page.get_data(as_text=True))
    assert any(path.endswith(".js") for path in paths) and any(path.endswith(".css") for path in paths)
    for path in sorted(set(paths)):
        response = flask_client.get(path)
        assert response.status_code == 200, path
        response.close()
