"""A local SMTP server (aiosmtpd) that keeps every message it accepts, with optional AUTH LOGIN/PLAIN."""
from __future__ import annotations

import asyncio
import email
import email.policy
import socket
import threading
from dataclasses import dataclass, field
from email.message import EmailMessage

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword


@dataclass
class Received:
    mail_from: str
    rcpt_tos: list[str]
    message: EmailMessage
    login: str | None

    def html(self) -> str:
        part = self.message.get_body(preferencelist=("html",))
        return part.get_content() if part is not None else ""


@dataclass
class FakeSmtp:
    """Start with `with FakeSmtp(...) as smtp:`; `smtp.port` to configure, `smtp.messages` to read."""

    username: str = ""
    password: str = ""
    messages: list[Received] = field(default_factory=list)
    refuse_first: int = 0  # answer 451 (a transient failure) to the first N messages
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = sock.getsockname()[1]
        kwargs: dict = {}
        if self.username:
            # AUTH offered without TLS (local tests); not required, so tests check `login` instead.
            kwargs = {"authenticator": self._authenticate, "auth_require_tls": False}
        self.controller = Controller(self, hostname="127.0.0.1", port=self.port, **kwargs)

    def _authenticate(self, server, session, envelope, mechanism, auth_data) -> AuthResult:
        ok = (isinstance(auth_data, LoginPassword) and auth_data.login.decode() == self.username
              and auth_data.password.decode() == self.password)
        return AuthResult(success=ok, handled=False, auth_data=auth_data if ok else None)

    async def handle_DATA(self, server, session, envelope) -> str:
        with self._lock:
            if self.refuse_first > 0:
                self.refuse_first -= 1
                return "451 Try again later"
            message = email.message_from_bytes(envelope.original_content or envelope.content,
                                               policy=email.policy.default)
            auth = session.auth_data  # what the authenticator accepted
            login = auth.login.decode() if isinstance(auth, LoginPassword) else None
            self.messages.append(Received(envelope.mail_from, list(envelope.rcpt_tos), message, login))
        return "250 Message accepted for delivery"

    def __enter__(self) -> FakeSmtp:
        self.controller.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.controller.stop()

    async def wait_for(self, count: int = 1, timeout: float = 30.0) -> list[Received]:
        from tests.helpers import eventually

        async def arrived() -> bool:
            return len(self.messages) >= count

        await eventually(arrived, timeout=timeout)
        await asyncio.sleep(0)
        return self.messages
