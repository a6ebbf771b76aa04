"""The server's clients of other servers: the SMTP mailer (send_email, with its delivery thread),
Zulip's Mobile Push Notification Service (push_service) and the guarded HTTP fetch that every
outgoing request goes through (safe_fetch).

Apart from lib/ (pure helpers: no thread, no network) and below actions/: actions use them too
(a push device registered or a password-reset mail queued while the request waits, a webhook's
address checked when a bot is saved), and the background workers (workers/) call them for the
messages they handle. Nothing here knows Flask or the tables.
"""
