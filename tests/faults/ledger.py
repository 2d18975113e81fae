"""The billing invariant after a fault, and the suite's report (README, "Faults").

`check_books` applies every pending settlement record (what the workers do), closes the
reservations whose process is gone (what the sweep does, with the clock moved past their expiry),
then asserts for every user and key: the database's balance is the starting one minus the sum of
its consumption logs (nothing lost, nothing counted twice: a log's request id is unique), and the
live Redis balance, where one is loaded, equals the database's. `check_windows` is the same for the
limits over time: each budget window in the database holds the sum of its charges in the
consumption logs, and Redis's live window the same.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from api.services.billing.reservations import close_orphans
from api.services.billing.settlement import apply_pending, users_with_pending
from api.services.budgets.durable import part_of
from api.services.budgets.plan import window_key
from api.services.configuration.options import OptionsService
from api.services.store import Store
from models import BudgetUsage, Log, Token, User
from models.enums import LogType
from tests.relay.fakes import make_key, rich_user


@dataclass
class Books:
    """What a scenario started with: users and limited keys, and their starting balances."""

    users: list[User]
    tokens: list[Token]
    start_user: dict[int, int] = field(default_factory=dict)
    start_token: dict[int, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.start_user = {u.id: u.quota for u in self.users}
        self.start_token = {t.id: t.remain_quota for t in self.tokens}


# Every scenario's users start with this quota, and their limited keys with this: enough for the
# requests a scenario holds in flight at once on one key (up to 15) to each cost its worst — gpt-4's
# longest answer, 8192 tokens, is about 246,000 quota (docs/billing.md, Pre-charge: while others run).
START = 10_000_000
KEY_START = 4_000_000


async def accounts(n: int) -> Books:
    """`n` users, each with one limited key."""
    users = [await rich_user(f"user{i}", quota=START) for i in range(n)]
    tokens = [await make_key(u, remain_quota=KEY_START, unlimited=False) for u in users]
    return Books(users, tokens)


def chat(stream: bool, text: str = "hi") -> dict:
    """A chat request (streamed ones ask for the usage chunk)."""
    body = {"model": "gpt-4", "messages": [{"role": "user", "content": text}], "stream": stream}
    if stream:
        body["stream_options"] = {"include_usage": True}
    return body


@dataclass
class Summary:
    charged: int  # quota, over every user
    logs: int  # consumption logs written
    incomplete: int  # of which marked incomplete
    orphans: int  # reservations the sweep closed


async def check_books(store: Store, books: Books, *, sweep_after: float = 0.0) -> Summary:
    """The invariant; `sweep_after` seconds added to the clock for the orphan sweep (0: no sweep)."""
    options = OptionsService(store)
    await options.load()
    orphans = 0
    if sweep_after:
        closed = await close_orphans(store, options.get_int("QuotaPerUnit"),
                                     now_ms=int((time.time() + sweep_after) * 1000))
        orphans = len(closed)
    for user_id in await users_with_pending(store):
        await apply_pending(store, options, user_id)
    assert await users_with_pending(store) == []
    charged = logs = incomplete = 0
    for user in books.users:
        rows = await Log.filter(user_id=user.id, type=LogType.CONSUME).all()
        spent = sum(r.quota for r in rows)
        charged += spent
        logs += len(rows)
        incomplete += sum(1 for r in rows if '"incomplete"' in (r.other or ""))
        db = (await User.get(id=user.id)).quota
        assert db == books.start_user[user.id] - spent, (user.username, db, books.start_user[user.id], spent)
        live = await store.redis.get(f"{store.prefix}{{u{user.id}}}:quota")
        assert live is None or int(live) == db, (user.username, live, db)
        if sweep_after:
            assert not await store.redis.exists(f"{store.prefix}{{u{user.id}}}:resv"), "a reservation stayed open"
            assert not await store.redis.exists(f"{store.prefix}{{u{user.id}}}:expo"), "an exposure stayed held"
    for token in books.tokens:
        spent = sum(r.quota for r in await Log.filter(token_id=token.id, type=LogType.CONSUME).all())
        db = (await Token.get(id=token.id)).remain_quota
        assert db == books.start_token[token.id] - spent, (token.id, db, books.start_token[token.id], spent)
        live = await store.redis.get(f"{store.prefix}{{u{token.user_id}}}:tq:{token.id}")
        assert live is None or int(live) == db, (token.id, live, db)
    return Summary(charged, logs, incomplete, orphans)


async def check_windows(store: Store, user: User) -> dict[str, tuple[int, int, int]]:
    """The windows' invariant, once every record is applied and no request of the user runs: each
    of the user's budget windows in the database (BudgetUsage) holds the sum of its charges in the
    consumption logs (quota, 1 request each, prompt + completion tokens), and Redis's live window,
    loaded, the same (its start too). Every log of an owner counts in the owner's one open window
    (the scenarios' clock is fixed: no window turns). → {"<owner>:<identity>": (quota, requests,
    tokens)}."""
    found: dict[str, tuple[int, int, int]] = {}
    for row in await BudgetUsage.filter(user_id=user.id).order_by("owner_kind", "identity"):
        assert not row.model, "a window narrowed to a model is not checked here"
        part = part_of(row.owner_kind, row.owner_id)
        owner = {"token_id": int(row.owner_id)} if row.owner_kind == "key" else {}
        logs = await Log.filter(user_id=user.id, type=LogType.CONSUME, **owner).all()
        charges = (sum(r.quota for r in logs), len(logs), sum(r.prompt_tokens + r.completion_tokens for r in logs))
        db = (row.quota, row.requests, row.tokens)
        assert db == charges, (part, row.identity, "database", db, "logs", charges)
        live = await store.redis.hgetall(window_key(store, user.id, part, row.identity, row.window_start))
        assert live, (part, row.identity, "no live window")
        assert (int(live["s"]), int(live["q"]), int(live["r"]), int(live["t"])) == (row.window_start, *db), (
            part, row.identity, "redis", live, "database", db)
        found[f"{part}:{row.identity}"] = db
    return found


# -- the report -----------------------------------------------------------------------------------

REPORT_ENV = "FAULTS_REPORT"  # a file path: each scenario appends its row there


def report(scenario: str, client_saw: str, billed: str, summary: Summary) -> None:
    path = os.environ.get(REPORT_ENV)
    if not path:
        return
    ledger = (f"{summary.logs} logs ({summary.incomplete} incomplete), {summary.charged:,} quota; "
              f"{summary.orphans} orphans closed; DB = Redis = start − Σ logs")
    target = Path(path)
    if not target.exists():
        target.write_text("| Scenario | What the client saw | What was billed | The ledger |\n|---|---|---|---|\n")
    with target.open("a") as out:
        out.write(f"| {scenario} | {client_saw} | {billed} | {ledger} |\n")
