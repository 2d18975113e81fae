"""Outgoing mail.

    mail.send(to: str, subject: str, html: str)

Generic: any part of the gateway enqueues it by name, e.g.
`await request.config_dict[keys.JOBS].send("mail.send", "user@example.com", "Subject", "<p>html</p>")`
(account codes, low-balance reminders, channel-disabled notices). Delivery uses the SMTP options of
the moment. Transient SMTP or network failures are retried with backoff (up to 3 times); a missing
SMTP configuration or a refused recipient is not retried. Nothing of the message (which may hold a
code or a reset link) is logged: only the recipient's domain and the error type.
"""
from __future__ import annotations

import logging

import aiosmtplib
import dramatiq
from dramatiq import Retry

from api.services.accounts.mail import MailNotConfigured, deliver
from api.services.queues import Queue
from workers.context import ctx

log = logging.getLogger(__name__)
RETRY_DELAY_MS = 5_000


async def send_mail(to: str, subject: str, html: str) -> None:
    """The actor's body (tests call it directly)."""
    domain = to.rsplit("@", 1)[-1]
    try:
        await deliver(ctx().options, to, subject, html)
    except MailNotConfigured:
        log.error("mail to a recipient at %s dropped: SMTP is not configured", domain)
    except (aiosmtplib.SMTPRecipientsRefused, aiosmtplib.SMTPSenderRefused) as exc:
        log.error("mail to a recipient at %s refused by the SMTP server (%s)", domain, type(exc).__name__)
    except (aiosmtplib.SMTPException, OSError, TimeoutError) as exc:
        # Retry, not the exception itself: Dramatiq would log the message, arguments included.
        log.warning("mail to a recipient at %s failed (%s); retrying", domain, type(exc).__name__)
        raise Retry(delay=RETRY_DELAY_MS) from None


send = dramatiq.actor(actor_name="mail.send", queue_name=Queue.MAIL, max_retries=3)(send_mail)
