"""A certificate for TLS_DOMAIN from an ACME server (Let's Encrypt by default), obtained,
stored, reused and renewed while `serve` runs, as Caddy does.

The protocol is certbot's maintained `acme` library (JWS, nonces, orders, polling); this module
decides when to ask and what to keep:

- Storage, under INSTANCE/tls/: the account key (acme-account.key) and its registration
  (acme-account.json), the certificate's key (DOMAIN.key) and chain (DOMAIN.crt). Every file is
  0600. Backups include the folder (ops/backup.py).
- A restart serves a stored certificate that is not yet due at once: no new order, and the
  stored account is used without registering again.
- Renewal starts when a third of the certificate's lifetime remains (never before half of it
  has passed), with the same account, while serving; new handshakes get the new certificate as
  soon as it is stored (server/tls.py), and a failed renewal keeps the old one serving.
- HTTP-01 only: the plain HTTP port answers the challenges from `challenges`, a dict this module
  fills and the port reads.
- Failures never stop the server: each attempt that fails prints one line with the configured
  directory URL, verbatim, and the reason. An unreachable directory is asked again at most
  UNREACHABLE_RETRY_SECONDS later (DNS is often fixed after the first start, and exiting would
  restart-loop under systemd); a refused order or failed validation waits at least
  FAILED_ORDER_BACKOFF_SECONDS, doubling each time, as Let's Encrypt's rate limits ask.
"""

from __future__ import annotations

from typing import Any, Callable

import datetime
import json
import re
import threading
from pathlib import Path

from chat_appliance.ops.instance_files import TLS_FOLDER
from chat_appliance.server.tls import CertificateError, ServedCertificate, load_pair, write_private

ACCOUNT_KEY_FILE = "acme-account.key"
ACCOUNT_FILE = "acme-account.json"
# Retries when the directory cannot be reached: quick at first, then every 30 s.
UNREACHABLE_RETRY_SECONDS = (2, 5, 10, 20, 30)
# After a refused order or a failed validation: a minute, then twice as long each time, up to six hours.
FAILED_ORDER_BACKOFF_SECONDS = 60
FAILED_ORDER_BACKOFF_MAX_SECONDS = 6 * 3600
# How long an order may take from the challenges' answers to the certificate.
ORDER_DEADLINE_SECONDS = 90
# Seconds to wait for one answer of the ACME server.
NETWORK_TIMEOUT_SECONDS = 30


class Unreachable(Exception):
    """The directory did not answer (network, DNS, TLS or a server error)."""


def renewal_due(not_before: datetime.datetime, not_after: datetime.datetime) -> datetime.datetime:
    """When a third of the lifetime remains (which is after half of it has passed)."""
    return not_before + (not_after - not_before) * 2 / 3


def backoff_after_failures(count: int) -> int:
    """Seconds to wait after the `count`-th refused order or failed validation in a row."""
    return min(FAILED_ORDER_BACKOFF_SECONDS * 2 ** (count - 1), FAILED_ORDER_BACKOFF_MAX_SECONDS)


def one_line(error: BaseException) -> str:
    """The reason of a failure, on one line and short: requests' errors nest the cause in
    a long repr, of which the errno text is what an operator needs."""
    from acme import errors, messages

    if isinstance(error, messages.Error):
        text = f"{error.typ.rsplit(':', 1)[-1]}: {error.detail or error.description or ''}"
    elif isinstance(error, errors.ValidationError):
        details = [challenge.error.detail or str(challenge.error) for authz in error.failed_authzrs
                   for challenge in authz.body.challenges if challenge.error is not None]
        text = "validation failed: " + "; ".join(details or ["no detail"])
    elif isinstance(error, errors.TimeoutError):
        text = f"the order was not ready within {ORDER_DEADLINE_SECONDS} s"
    else:
        text = str(error) or type(error).__name__
        found = re.search(r"\[Errno -?\d+\] [^'\")]+|certificate verify failed[^'\")]*|Read timed out", text)
        text = found.group(0) if found else text
    return " ".join(text.split())[:300]


class CertificateManager:
    """Keeps a certificate for `domain` served: the stored one while it is good, a new one when
    it is due or missing, on a thread of its own."""

    def __init__(self, instance: Path, domain: str, directory: str, *, served: ServedCertificate,
                 challenges: dict[str, str], ca_bundle: str | None = None, email: str | None = None,
                 say: Callable[[str], None] = print) -> None:
        self.folder = Path(instance) / TLS_FOLDER
        self.domain = domain
        self.directory = directory
        self.ca_bundle = ca_bundle
        self.email = email
        self.served = served
        self.challenges = challenges
        self.say = say
        self.key_file = self.folder / f"{domain}.key"
        self.chain_file = self.folder / f"{domain}.crt"
        self.not_before: datetime.datetime | None = None
        self.not_after: datetime.datetime | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # --- the stored certificate --------------------------------------------------------------

    def serve_stored(self) -> bool:
        """Serve the stored certificate if it covers the domain and has not expired. True if it does."""
        if not (self.chain_file.exists() and self.key_file.exists()):
            return False
        try:
            context = load_pair(self.chain_file, self.key_file)
        except CertificateError as error:
            self.say(f"The stored certificate cannot be used ({error}); ordering a new one.")
            return False
        not_before, not_after, names = self._read_chain()
        if self.domain not in names or not_after <= _now():
            return False
        self.served.use(context)
        self.not_before, self.not_after = not_before, not_after
        return True

    def _read_chain(self) -> tuple[datetime.datetime, datetime.datetime, list[str]]:
        from cryptography import x509

        certificate = x509.load_pem_x509_certificates(self.chain_file.read_bytes())[0]
        try:
            names = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName).value \
                .get_values_for_type(x509.DNSName)
        except x509.ExtensionNotFound:
            names = []
        return certificate.not_valid_before_utc, certificate.not_valid_after_utc, names

    def seconds_until_due(self) -> float:
        if self.not_before is None or self.not_after is None:
            return 0.0
        return (renewal_due(self.not_before, self.not_after) - _now()).total_seconds()

    # --- the thread ----------------------------------------------------------------------------

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="acme", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Ask the thread to end; an order in progress is abandoned with the process."""
        self._stop.set()

    def _run(self) -> None:
        unreachable = failed = 0
        while not self._stop.is_set():
            wait = self.seconds_until_due()
            if wait > 0:
                self._stop.wait(min(wait, 3600))
                continue
            try:
                self.obtain()
            except Unreachable as error:
                delay = UNREACHABLE_RETRY_SECONDS[min(unreachable, len(UNREACHABLE_RETRY_SECONDS) - 1)]
                unreachable += 1
                self.say(f"ACME: the directory {self.directory} did not answer ({error}); "
                         f"trying again in {delay} s.")
            except Exception as error:  # a failed attempt must never stop the server
                failed += 1
                delay = backoff_after_failures(failed)
                kept = " The current certificate keeps serving." if self.not_after is not None else ""
                self.say(f"ACME: no certificate for {self.domain} from {self.directory}: {one_line(error)}; "
                         f"trying again in {delay} s.{kept}")
            else:
                unreachable = failed = 0
                continue
            self._stop.wait(delay)

    # --- one order ---------------------------------------------------------------------------

    def obtain(self) -> None:
        """Order a certificate, answer its HTTP-01 challenge, store and serve the result."""
        import requests
        from acme import client, crypto_util

        self.folder.mkdir(mode=0o700, exist_ok=True)
        account_key = self._account_key()
        # ACME_CA_BUNDLE is given to this connection alone (a path given as `verify` also wins
        # over REQUESTS_CA_BUNDLE and CURL_CA_BUNDLE, which requests reads only when `verify`
        # is left at True). ClientNetwork hands verify_ssl to requests as `verify`, which takes a
        # path, though the library's annotation says bool.
        verify: Any = self.ca_bundle or True
        network = client.ClientNetwork(account_key, user_agent="chat-appliance", verify_ssl=verify,
                                       timeout=NETWORK_TIMEOUT_SECONDS)
        try:
            directory = client.ClientV2.get_directory(self.directory, network)
        except Exception as error:
            raise Unreachable(one_line(error)) from None
        acme = client.ClientV2(directory, network)
        try:
            self._account(acme)
            key_pem = _new_key_pem()
            order = acme.new_order(crypto_util.make_csr(key_pem, [self.domain]))
            tokens = self._answer_challenges(acme, order, account_key)
            try:
                deadline = datetime.datetime.now() + datetime.timedelta(seconds=ORDER_DEADLINE_SECONDS)
                order = acme.poll_and_finalize(order, deadline)
            finally:
                for token in tokens:
                    self.challenges.pop(token, None)
        except requests.RequestException as error:
            raise Unreachable(one_line(error)) from None
        write_private(self.key_file, key_pem)
        write_private(self.chain_file, order.fullchain_pem.encode())
        self.served.use(load_pair(self.chain_file, self.key_file))
        self.not_before, self.not_after, _names = self._read_chain()
        self.say(f"ACME: obtained a certificate for {self.domain} from {self.directory}, valid until "
                 f"{self.not_after:%Y-%m-%d %H:%M:%S} UTC; new connections get it.")

    def _answer_challenges(self, acme: Any, order: Any, account_key: Any) -> list[str]:
        from acme import challenges

        tokens = []
        for authorization in order.authorizations:
            if authorization.body.status.name == "valid":
                continue  # validated recently for this account: nothing to answer
            http01 = next((c for c in authorization.body.challenges if isinstance(c.chall, challenges.HTTP01)), None)
            if http01 is None:
                raise RuntimeError("the ACME server offers no HTTP-01 challenge, the only one this server answers")
            response, validation = http01.response_and_validation(account_key)
            token = http01.chall.encode("token")
            self.challenges[token] = validation
            tokens.append(token)
            acme.answer_challenge(http01, response)
        return tokens

    def _account_key(self) -> Any:
        import josepy
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import rsa

        path = self.folder / ACCOUNT_KEY_FILE
        if path.exists():
            key = serialization.load_pem_private_key(path.read_bytes(), password=None)
        else:
            key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
            write_private(path, key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                  serialization.NoEncryption()))
        return josepy.JWKRSA(key=key)

    def _account(self, acme: Any) -> None:
        """Use the stored registration with this directory, or register (once) and store it."""
        from acme import errors, messages

        path = self.folder / ACCOUNT_FILE
        stored = json.loads(path.read_text()) if path.exists() else {}
        if stored.get("directory") == self.directory and stored.get("uri"):
            acme.net.account = messages.RegistrationResource(uri=stored["uri"], body=messages.Registration())
            return
        registration = messages.NewRegistration.from_data(email=self.email, terms_of_service_agreed=True)
        try:
            account = acme.new_account(registration)
        except errors.ConflictError as existing:  # this key is registered already
            account = messages.RegistrationResource(uri=existing.location, body=messages.Registration())
        acme.net.account = account
        write_private(path, json.dumps({"directory": self.directory, "uri": account.uri}).encode())


def _new_key_pem() -> bytes:
    """A P-256 key for the certificate: small, fast handshakes, accepted everywhere."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    key = ec.generate_private_key(ec.SECP256R1())
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc)
