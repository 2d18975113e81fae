"""The layout of every Redis key, in one place: each key is built by a function of this module.

The keys of a user's live billing state share the hash tag `{u<id>}` so that each Lua script touches
one Redis Cluster slot; group-wide limits count a whole group under `{g:<group>}`. Under the
deployment's prefix (REDIS_PREFIX):

  {u}:quota   {u}:tq:<token>          live balances of the user and of a limited key
  {u}:gen     {u}:tgen:<token>        a random id written when a balance is (re)loaded
  {u}:pend    {u}:pver                settlement records not yet in the database; their version
  {u}:resv                            open reservations (api.services.billing.reservations)
  {u}:expo                            what they may still take beyond their pre-charges (api.services.billing.exposure)
  {u}:rpm:<minute> {u}:tpm:<minute> {u}:conc, {u}:trpm:<token>:<minute> {u}:ttpm:… {u}:tconc:<token>
  {u}:refunded:<platform>:<row>       a task's refund, once
  {u}:bw:<owner>:<identity>[:<start>] a budget window's usage (api.services.budgets.plan): owner k<token>, u or
                                      g:<group>; identity <window>[@<model>]; the start of a calendar window
  {u}:aff:<model>:<session>           a conversation's channel and key (api.relay.affinity)
  {u}:rsn  {u}:rsn:<family>:<digest>  reasoning state kept for clients that drop it, and its index by
                                      time (api.relay.kept_reasoning)
  {u}:rts:<token>  {u}:rts            a key's and the user's open realtime sessions (api.relay.realtime.limits)
  {u}:rtsec:<token>  {u}:rtsec        a key's and the user's live realtime client secrets
  {g:<group>}:rpm:<minute> …:tpm:<minute> …:conc

Outside the users' layout, under the same prefix:

  session:<digest>  user_sessions:<user>       console sessions (api.web.sessions)
  login:failures:{<account>}[:<source>]        failed logins of an account, per source (api.web.login_guard)
  login:devices:{<account>}                    an account's known devices
  mailcode:<purpose>:<email id>                a mailed code (api.services.accounts.mail)
  mailcool:<purpose>:{<email id>}              its resend cooldown
  mailsent:{<email id>}                        mails sent to the address
  passkey:challenge:<purpose>:<binding>        a passkey ceremony's challenge (api.services.accounts.passkeys)
  rl:<bucket>:<ident>                          fixed-window rate limits (api.services.ratelimit)
  options                                      the runtime options (a hash; api.services.configuration.options)
  events:db<n>                                 the pub/sub channel of change events (api.services.events)
  relay:tok:{<key hash>}[:ver]                 cached API keys and users, with their versions (api.relay.auth);
  relay:usr:{<user>}[:ver]                       `relay:*` is dropped by the importer
  relay:native_missing                         a hash: `<channel id>:<path>` → the base URL and time a channel
                                                 was found without a native endpoint (api.relay.responses_support)
  relay:disable-mail:<channel>                 a disabled channel's mail, once; mails sent per window
  relay:disable-mails:<window>                   (workers.actors.relay)
  chkey:<channel>                              counters of a multi-key channel's keys (api.channels.keys)
  {inflight}:procs  {inflight}:p:<proc>        requests in flight per API process (api.relay.load)
  {errlog}:rows  {errlog}:due                  error-log rows waiting for the worker; their send mark;
  {errlog}:n:<t<token>|u<user>>:<minute>         rows per key and minute (api.services.error_logs)
  {audit}:rows  {audit}:due  {audit}:lock     audit entries waiting for the worker; their send mark; the
                                                 writer's lease (api.services.audit_queue)
  set-aside:<writer>                           rows a batch writer could not write (errlog, settlement,
                                                 record_log, audit), newest first, capped (api.services.set_aside)
  mj-image:<row>:<url digest>                  a Midjourney image (api.relay.tasks.mj_media)
  mj-notify-early:<task>                       a Midjourney callback ahead of its task's row (api.relay.tasks.notify)
  rtsecret:<digest>                            a realtime client secret's grant (api.relay.realtime.secrets)
  mcp:session:<id>                             an MCP client's session on /mcp (api.relay.mcp.sessions)
  channel:probe  channel:notify[:throttle]     the monitor's probes and mails (api.channels.probes, .status_mail)
  billing:lock:<user>  billing:retry:<user>  billing:remind:<user>   settlement (api.services.billing.settlement)
  lock:<name>[:<part>…]                        locks: lock:identity:<provider>:<digest>, lock:channel_test[:<id>],
                                                 lock:channel_test_all, lock:channel_balance_all …
  sched:<job>                                  a periodic job's last run (run claims: channel.*, logs.purge,
                                                 audit.purge)
  heartbeat:worker  heartbeat:scheduler        liveness, read by /readyz
  scheduler:leader                             the scheduler's leader lock
  dramatiq  dramatiq:<queue> …                 Dramatiq's namespace and its queues' lists (workers.broker)
"""
from __future__ import annotations

from typing import Protocol


class Prefixed(Protocol):
    prefix: str


def user_tag(user_id: int) -> str:
    return f"{{u{user_id}}}"


def user_key(store: Prefixed, user_id: int, *parts: object) -> str:
    return f"{store.prefix}{user_tag(user_id)}:" + ":".join(str(p) for p in parts)


def group_key(store: Prefixed, group: str, *parts: object) -> str:
    return f"{store.prefix}{{g:{group}}}:" + ":".join(str(p) for p in parts)


def every_user(store: Prefixed, *parts: str) -> str:
    """A SCAN pattern for that key of every user."""
    return f"{store.prefix}{{u*}}:" + ":".join(parts)


def user_of(store: Prefixed, key: str) -> int | None:
    """The user id of one of these keys (None for anything else)."""
    head = f"{store.prefix}{{u"
    if not key.startswith(head):
        return None
    inner = key[len(head):].split("}", 1)[0]
    return int(inner) if inner.isascii() and inner.isdigit() else None


def quota(store: Prefixed, user_id: int) -> str:
    return user_key(store, user_id, "quota")


def token_quota(store: Prefixed, user_id: int, token_id: int) -> str:
    return user_key(store, user_id, "tq", token_id)


def pending(store: Prefixed, user_id: int) -> str:
    return user_key(store, user_id, "pend")


def pending_version(store: Prefixed, user_id: int) -> str:
    return user_key(store, user_id, "pver")


def reservations(store: Prefixed, user_id: int) -> str:
    return user_key(store, user_id, "resv")


def exposures(store: Prefixed, user_id: int) -> str:
    return user_key(store, user_id, "expo")


# -- outside the users' layout ----------------------------------------------------------------------

def _key(store: Prefixed, *parts: object) -> str:
    return store.prefix + ":".join(str(p) for p in parts)


def session(store: Prefixed, digest: str) -> str:
    return _key(store, "session", digest)


def user_sessions(store: Prefixed, user_id: int) -> str:
    return _key(store, "user_sessions", user_id)


def login_failures(store: Prefixed, account: str) -> str:
    return _key(store, "login", "failures", "{" + account + "}")


def login_failures_from(store: Prefixed, account: str, source: str) -> str:
    return login_failures(store, account) + ":" + source


def login_devices(store: Prefixed, account: str) -> str:
    return _key(store, "login", "devices", "{" + account + "}")


def mail_code(store: Prefixed, purpose: str, email_id: str) -> str:
    return _key(store, "mailcode", purpose, email_id)


def mail_cooldown(store: Prefixed, purpose: str, email_id: str) -> str:
    return _key(store, "mailcool", purpose, "{" + email_id + "}")


def mail_sent(store: Prefixed, email_id: str) -> str:
    return _key(store, "mailsent", "{" + email_id + "}")


def passkey_challenge(store: Prefixed, purpose: str, binding: str) -> str:
    return _key(store, "passkey", "challenge", purpose, binding)


def rate_limit(store: Prefixed, bucket: str, ident: str) -> str:
    return _key(store, "rl", bucket, ident)


def options(store: Prefixed) -> str:
    return _key(store, "options")


def events_channel(store: Prefixed, database: object) -> str:
    return _key(store, "events", f"db{database}")


def relay_token(store: Prefixed, key_hash: str) -> str:
    return f"{store.prefix}relay:tok:{{{key_hash}}}"  # tagged: its `:ver` key shares its slot


def relay_user(store: Prefixed, user_id: int) -> str:
    return f"{store.prefix}relay:usr:{{{user_id}}}"


def version_of(key: str) -> str:
    """The version key of a cached entry (relay_token, relay_user)."""
    return key + ":ver"


def every_relay_key(store: Prefixed) -> str:
    """A SCAN pattern for every `relay:` key."""
    return _key(store, "relay", "*")


def native_missing(store: Prefixed) -> str:
    return _key(store, "relay", "native_missing")


def disable_mail(store: Prefixed, channel_id: int) -> str:
    return _key(store, "relay", "disable-mail", channel_id)


def disable_mails(store: Prefixed, window: int) -> str:
    return _key(store, "relay", "disable-mails", window)


def channel_key_stats(store: Prefixed, channel_id: int) -> str:
    return _key(store, "chkey", channel_id)


def inflight_processes(store: Prefixed) -> str:
    return f"{store.prefix}{{inflight}}:procs"


def inflight_of(store: Prefixed, proc: str) -> str:
    return f"{store.prefix}{{inflight}}:p:{proc}"


def error_log_rows(store: Prefixed) -> str:
    return f"{store.prefix}{{errlog}}:rows"


def error_log_due(store: Prefixed) -> str:
    return f"{store.prefix}{{errlog}}:due"


def error_log_count(store: Prefixed, who: str, minute: int) -> str:
    return f"{store.prefix}{{errlog}}:n:{who}:{minute}"


def audit_rows(store: Prefixed) -> str:
    return f"{store.prefix}{{audit}}:rows"


def audit_due(store: Prefixed) -> str:
    return f"{store.prefix}{{audit}}:due"


def audit_lock(store: Prefixed) -> str:
    return f"{store.prefix}{{audit}}:lock"


def set_aside(store: Prefixed, writer: str) -> str:
    return _key(store, "set-aside", writer)


def mj_image(store: Prefixed, row_id: int, url_digest: str) -> str:
    return _key(store, "mj-image", row_id, url_digest)


def mj_notify_early(store: Prefixed, task: str) -> str:
    return _key(store, "mj-notify-early", task)


def mcp_session(store: Prefixed, session_id: str) -> str:
    return _key(store, "mcp", "session", session_id)


def realtime_secret(store: Prefixed, secret_digest: str) -> str:
    return _key(store, "rtsecret", secret_digest)


def channel_probes(store: Prefixed) -> str:
    return _key(store, "channel", "probe")


def channel_notices(store: Prefixed) -> str:
    return _key(store, "channel", "notify")


def channel_notice_throttle(store: Prefixed) -> str:
    return _key(store, "channel", "notify", "throttle")


def billing_lock(store: Prefixed, user_id: int | str) -> str:
    """A user's settlement lock (`"*"`: a SCAN pattern for every user's)."""
    return _key(store, "billing", "lock", user_id)


def billing_retry(store: Prefixed, user_id: int) -> str:
    return _key(store, "billing", "retry", user_id)


def billing_remind(store: Prefixed, user_id: int) -> str:
    return _key(store, "billing", "remind", user_id)


def lock(store: Prefixed, name: str, *parts: object) -> str:
    return _key(store, "lock", name, *parts)


def run_claim(store: Prefixed, job: str) -> str:
    return _key(store, "sched", job)


def heartbeat(store: Prefixed, process: str) -> str:
    """`worker` or `scheduler`."""
    return _key(store, "heartbeat", process)


def scheduler_leader(store: Prefixed) -> str:
    return _key(store, "scheduler", "leader")


def dramatiq_namespace(prefix: str) -> str:
    """Dramatiq's namespace, from the settings' prefix (the broker is built before any store)."""
    return f"{prefix}dramatiq"


def dramatiq_queue(prefix: str, queue: str) -> str:
    """The list of a queue's waiting messages (Dramatiq's RedisBroker layout)."""
    return f"{dramatiq_namespace(prefix)}:{queue}"
