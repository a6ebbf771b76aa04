"""A real SMTP server on loopback for the tests (aiosmtpd), keeping what it receives."""

import asyncio
import email
import email.policy
import socket
import threading
import time

from contextlib import contextmanager

from aiosmtpd.controller import Controller


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class SmtpSink:
    """Messages received, parsed (email.message.EmailMessage), with their envelope recipients."""

    def __init__(self, port=None, delay=None):
        """`delay(envelope)`: seconds to wait before confirming that mail (a slow server)."""
        self.delay = delay
        self.messages = []
        self.envelopes = []
        self._changed = threading.Condition()
        self.controller = Controller(self, hostname="127.0.0.1", port=port or free_port())

    async def handle_DATA(self, server, session, envelope):
        message = email.message_from_bytes(envelope.original_content or envelope.content, policy=email.policy.default)
        with self._changed:
            self.messages.append(message)
            self.envelopes.append((envelope.mail_from, list(envelope.rcpt_tos)))
            self._changed.notify_all()
        if self.delay is not None:  # kept already, as a real server may, and confirmed late
            await asyncio.sleep(self.delay(envelope))
        return "250 Message accepted for delivery"

    @property
    def port(self):
        return self.controller.port

    def config(self):
        """The configuration keys that send mail here."""
        return {"EMAIL_HOST": "127.0.0.1", "EMAIL_PORT": self.port, "NOREPLY_EMAIL_ADDRESS": "noreply@chat.example.com"}

    def environment(self, **more):
        """config() (and `more` keys) as the CHAT_APPLIANCE_<KEY> variables a `serve` reads."""
        return {f"CHAT_APPLIANCE_{key}": str(value) for key, value in {**self.config(), **more}.items()}

    def wait(self, count=1, timeout=10.0):
        """The first `count` messages, waiting for them; AssertionError if they do not come."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while len(self.messages) < count:
                left = deadline - time.monotonic()
                assert left > 0, f"expected {count} mail(s), got {len(self.messages)}"
                self._changed.wait(left)
            return list(self.messages[:count])

    def settle(self, seconds=0.5):
        """What arrived after waiting `seconds` (to show that nothing more comes)."""
        time.sleep(seconds)
        return list(self.messages)


def body(message, subtype):
    """The text of a message's text/`subtype` part."""
    return message.get_body(preferencelist=(subtype,)).get_content()


@contextmanager
def running_sink(**options):
    """An SmtpSink listening for as long as the block runs (options as SmtpSink's)."""
    sink = SmtpSink(**options)
    sink.controller.start()
    try:
        yield sink
    finally:
        sink.controller.stop()
