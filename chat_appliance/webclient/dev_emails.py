"""/emails: every mail a `chat-appliance dev` server would have sent, newest first (as Zulip's
development server shows them), so a developer or a bot author sees invitations, reset links
and missed-message mails without an SMTP server. Elsewhere the page does not exist.

The mails' HTML parts are served on their own, sandboxed (no script, nothing loaded but images),
since their content comes from users."""

import html

from flask import Blueprint, Response, current_app

from chat_appliance.lib.errors import JsonableError
from chat_appliance.web.context import mailer

bp = Blueprint("dev_emails", __name__)


def outbox():
    """The kept mails, oldest first; 404 unless the server runs in dev mode."""
    if not current_app.config.get("DEV_MODE"):
        raise JsonableError("Not Found", code="NOT_FOUND", http_status=404)
    return list(mailer().outbox)


def page(body, csp):
    response = Response(body, mimetype="text/html")
    response.headers["Content-Security-Policy"] = csp
    response.headers["Cache-Control"] = "no-store"
    response.headers["X-Content-Type-Options"] = "nosniff"
    return response


@bp.get("/emails")
def emails():
    """The list: headers and plain-text part of each mail, with a link to its HTML part."""
    kept = outbox()
    items = []
    for number in range(len(kept) - 1, -1, -1):
        message = kept[number]
        text = message.get_body(preferencelist=("plain",))
        headers = "".join(f"<dt>{name}</dt><dd>{html.escape(str(message[name] or ''))}</dd>"
                          for name in ("Subject", "From", "To", "Date"))
        items.append(f'<article><dl>{headers}</dl><pre>{html.escape(text.get_content() if text else "")}</pre>'
                     f'<p><a href="/emails/{number}.html">HTML version</a></p></article>')
    listing = "\n".join(items) or "<p>No email sent yet.</p>"
    body = (f"<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Emails sent</title>"
            f"<style>body{{font-family:sans-serif;max-width:50em;margin:1em auto}}article{{border-bottom:1px solid #ccc}}"
            f"dt{{font-weight:bold;float:left;width:5em}}pre{{white-space:pre-wrap}}</style></head><body>"
            f"<h1>Emails sent ({len(kept)})</h1><p>This development server keeps the mail it would send.</p>"
            f"{listing}</body></html>")
    return page(body, "default-src 'none'; style-src 'unsafe-inline'")


@bp.get("/emails/<int:number>.html")
def email_html(number):
    """One mail's HTML part, sandboxed."""
    kept = outbox()
    if not 0 <= number < len(kept):
        raise JsonableError("Not Found", code="NOT_FOUND", http_status=404)
    part = kept[number].get_body(preferencelist=("html",))
    return page(part.get_content() if part else "", "sandbox; default-src 'none'; img-src * data:; style-src 'unsafe-inline'")
