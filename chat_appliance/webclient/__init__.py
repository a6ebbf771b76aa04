"""The browser client: its page and sign-in pages (views.py), the JavaScript modules, styles and
icon it loads (static/), the page's template (templates/), and the development outbox at /emails
(dev_emails.py).

It stands on the HTTP kit (web/: parameters, sessions, rate limits, responses) beside api/, whose
views the page calls under /json; nothing below imports it. The app mounts its blueprints lazily
like api/'s (api/routes.py lists their routes), so its modules load with the first page view."""
