"""Account mail: one-time codes and reset tokens in Redis, the messages, and SMTP delivery.

The API never talks to SMTP: it stores the code, composes the message and enqueues the actor
"mail.send"(to, subject, html) (workers/actors/mail.py), which calls `deliver` with the SMTP options
(SMTPServer, SMTPPort, SMTPAccount, SMTPFrom, SMTPToken, SMTPSSLEnabled).

Codes live in Redis under the deployment prefix, hashed (a Redis dump reveals no usable code), for
CODE_TTL seconds; a code is consumed by its first correct use, and dropped after MAX_ATTEMPTS wrong
guesses. A second mail of the same purpose to the same address within RESEND_COOLDOWN is refused,
and one address receives at most DAILY_CAP of these mails (every purpose: codes, address-in-use
notices, reset links) in any DAILY_WINDOW: a few callers cannot flood a mailbox by cycling purposes.
A request is counted whether or not a mail goes out (a reset for an address without an account), so
the answers tell nothing about accounts.
"""
from __future__ import annotations

import html as html_lib
import math
import time
from email.message import EmailMessage
from email.utils import formataddr, formatdate, make_msgid

import aiosmtplib

from api.errors import ApiError
from api.services import redis_keys
from api.services.configuration.options import OptionsService
from api.services.jobs import Jobs
from api.services.passwords import random_string, sha256_hex
from api.services.store import Store

CODE_TTL = 600
RESEND_COOLDOWN = 30
MAX_ATTEMPTS = 5
VERIFY = "verify"  # registration and e-mail binding
RESET = "reset"  # password reset link
VERIFY_CODE_LENGTH = 6
RESET_TOKEN_LENGTH = 32
SEND_TIMEOUT = 30
DAILY_CAP = 10  # mails per address
DAILY_WINDOW = 86400  # seconds, sliding

clock = time.time  # the cap's "now"; tests move it

# KEYS: 1 the cooldown of (purpose, address), 2 the address's mails (member → ms sent).
# ARGV: 1 now (ms), 2 cooldown (s), 3 cap, 4 window (ms), 5 this mail's member.
# Returns {0, 0} when counted, {1, ms left} in the cooldown, {2, ms left} when the cap is reached.
_ISSUE = """
local cool = redis.call('PTTL', KEYS[1])
if cool > 0 then return {1, cool} end
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[4])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - window)
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[3]) then
  local oldest = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
  return {2, tonumber(oldest[2]) + window - now}
end
redis.call('SET', KEYS[1], '1', 'EX', tonumber(ARGV[2]))
redis.call('ZADD', KEYS[2], now, ARGV[5])
redis.call('PEXPIRE', KEYS[2], window)
return {0, 0}
"""

_CONSUME = """
local stored = redis.call('HGET', KEYS[1], 'code')
if not stored then return 0 end
if stored == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
if redis.call('HINCRBY', KEYS[1], 'tries', 1) >= tonumber(ARGV[2]) then
  redis.call('DEL', KEYS[1])
end
return 0
"""


class MailNotConfigured(Exception):
    """SMTPServer is empty: nothing to retry."""


def _email_id(email: str) -> str:
    return sha256_hex(email.strip().lower())[:32]


def code_key(store: Store, purpose: str, email: str) -> str:
    return redis_keys.mail_code(store, purpose, _email_id(email))


# The address's hash tag: the cooldown and the count of one address live in one cluster slot.
def cooldown_key(store: Store, purpose: str, email: str) -> str:
    return redis_keys.mail_cooldown(store, purpose, _email_id(email))


def sent_key(store: Store, email: str) -> str:
    return redis_keys.mail_sent(store, _email_id(email))


def smtp_configured(options: OptionsService) -> bool:
    return bool(options.get("SMTPServer"))


async def issue_code(store: Store, purpose: str, email: str, length: int) -> str:
    """A new code for (purpose, e-mail), replacing any earlier one; refused within the cooldown and
    past the address's DAILY_CAP."""
    code = random_string(length)
    state, left_ms = await store.redis.eval(
        _ISSUE, 2, cooldown_key(store, purpose, email), sent_key(store, email),
        int(clock() * 1000), RESEND_COOLDOWN, DAILY_CAP, DAILY_WINDOW * 1000, _member(code))
    if int(state) == 1:
        raise ApiError("mail_cooldown", seconds=max(math.ceil(int(left_ms) / 1000), 1))
    if int(state) == 2:
        raise ApiError("mail_daily_cap", max=DAILY_CAP, minutes=max(math.ceil(int(left_ms) / 60000), 1))
    key = code_key(store, purpose, email)
    async with store.redis.pipeline(transaction=True) as pipe:
        pipe.delete(key)
        pipe.hset(key, mapping={"code": sha256_hex(code), "tries": 0})
        pipe.expire(key, CODE_TTL)
        await pipe.execute()
    return code


async def release_cooldown(store: Store, purpose: str, email: str, code: str = "") -> None:
    """The mail was not sent after all (enqueue failed): let the user ask again at once, and do not
    count it against the address."""
    async with store.redis.pipeline(transaction=False) as pipe:
        pipe.delete(cooldown_key(store, purpose, email))
        pipe.delete(code_key(store, purpose, email))
        if code:
            pipe.zrem(sent_key(store, email), _member(code))
        await pipe.execute()


def _member(code: str) -> str:
    return sha256_hex(code)[:24]


async def consume_code(store: Store, purpose: str, email: str, code: object) -> bool:
    """True once for the right code; a wrong one counts towards MAX_ATTEMPTS."""
    if not isinstance(code, str) or not code.strip() or not email:
        return False
    result = await store.redis.eval(_CONSUME, 1, code_key(store, purpose, email),
                                    sha256_hex(code.strip()), MAX_ATTEMPTS)
    return int(result) == 1


# -- messages --------------------------------------------------------------------------------------
def verification_mail(system_name: str, code: str) -> tuple[str, str]:
    name = html_lib.escape(system_name)
    subject = f"{system_name} e-mail verification / 邮箱验证"
    body = (f"<p>Hello, you are verifying your e-mail address for {name}.</p>"
            f"<p>Your verification code is: <strong>{html_lib.escape(code)}</strong></p>"
            f"<p>It is valid for {CODE_TTL // 60} minutes. If you did not ask for it, ignore this mail.</p>"
            f"<hr><p>您好，您正在进行 {name} 邮箱验证。验证码为：<strong>{html_lib.escape(code)}</strong>，"
            f"{CODE_TTL // 60} 分钟内有效。如果不是您本人操作，请忽略本邮件。</p>")
    return subject, body


def address_in_use_mail(system_name: str) -> tuple[str, str]:
    name = html_lib.escape(system_name)
    subject = f"{system_name} e-mail verification / 邮箱验证"
    body = (f"<p>Hello, someone asked to verify this address for a {name} account, but it already "
            f"belongs to one. If that was you, sign in (or reset your password); if not, ignore this mail.</p>"
            f"<hr><p>您好，有人请求为 {name} 账户验证此邮箱，但它已属于一个账户。如果是您本人，请直接登录"
            f"（或重置密码）；否则请忽略本邮件。</p>")
    return subject, body


def reset_mail(system_name: str, link: str) -> tuple[str, str]:
    name = html_lib.escape(system_name)
    href = html_lib.escape(link, quote=True)
    subject = f"{system_name} password reset / 密码重置"
    body = (f"<p>Hello, you asked to reset your {name} password.</p>"
            f'<p>Click <a href="{href}">here</a> to reset it, or open this link: {href}</p>'
            f"<p>The link is valid for {CODE_TTL // 60} minutes. If you did not ask for it, ignore this mail.</p>"
            f'<hr><p>您好，您正在进行 {name} 密码重置。点击 <a href="{href}">此处</a> 进行密码重置，'
            f"{CODE_TTL // 60} 分钟内有效。如果不是您本人操作，请忽略本邮件。</p>")
    return subject, body


async def send_mail(jobs: Jobs, to: str, subject: str, html: str) -> None:
    """Hand the message to a worker; the request does not wait on SMTP."""
    await jobs.send("mail.send", to, subject, html)


# -- delivery (in the worker) ----------------------------------------------------------------------
def build_message(options: OptionsService, to: str, subject: str, html: str) -> EmailMessage:
    sender = options.get("SMTPFrom") or options.get("SMTPAccount")
    message = EmailMessage()
    message["Subject"] = subject
    message["From"] = formataddr((options.get("SystemName"), sender))
    message["To"] = to
    message["Date"] = formatdate(localtime=False)
    domain = sender.rsplit("@", 1)[-1] if "@" in sender else None
    message["Message-ID"] = make_msgid(domain=domain)
    message.set_content("This message is in HTML; open it in a mail client that shows HTML.")
    message.add_alternative(html, subtype="html")
    return message


async def deliver(options: OptionsService, to: str, subject: str, html: str) -> None:
    """Send one message through the SMTP server of the options (implicit TLS when SMTPSSLEnabled,
    STARTTLS when the server offers it otherwise)."""
    server = options.get("SMTPServer")
    if not server:
        raise MailNotConfigured()
    ssl = options.get_bool("SMTPSSLEnabled")
    account, secret = options.get("SMTPAccount"), options.get("SMTPToken")
    await aiosmtplib.send(
        build_message(options, to, subject, html),
        hostname=server, port=options.get_int("SMTPPort"), use_tls=ssl,
        start_tls=False if ssl else None, timeout=SEND_TIMEOUT,
        username=account if account and secret else None, password=secret if account and secret else None)
