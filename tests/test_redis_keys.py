"""Every Redis key is built in api.services.redis_keys: no other module of the programs puts the
deployment's prefix in a string, nor spells the head of one of the layout's keys."""
from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("api", "workers", "scheduler", "models")
LAYOUT = ROOT / "api" / "services" / "redis_keys.py"
EXCLUDED = ("models/migrations",)
PREFIXES = {"prefix", "redis_prefix"}  # Store.prefix, Settings.redis_prefix


def _sources() -> list[Path]:
    return [path for package in PACKAGES for path in sorted((ROOT / package).rglob("*.py"))
            if path != LAYOUT and not str(path.relative_to(ROOT)).startswith(EXCLUDED)]


def _texts(node: ast.AST) -> list[str]:
    """The literal text of a string constant or of an f-string's constant parts."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.JoinedStr):
        return [part.value for part in node.values if isinstance(part, ast.Constant) and isinstance(part.value, str)]
    return []


def _heads() -> set[str]:
    """The first part of every key the layout builds outside the users' tags: `_key(store, "head", …)`
    and f"{…prefix}head…" (up to the first colon)."""
    heads: set[str] = set()
    for node in ast.walk(ast.parse(LAYOUT.read_text())):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "_key" and len(node.args) > 1:
            heads.update(_texts(node.args[1]))
        elif isinstance(node, ast.JoinedStr) and len(node.values) > 1 and _names_a_prefix(node.values[0], "prefix"):
            heads.update(text.split(":", 1)[0] for text in _texts(node.values[1]))
    return {head for head in heads if head and not head.startswith("{u") and not head.startswith("{g")}


def _names_a_prefix(node: ast.AST, *names: str) -> bool:
    """`store.prefix`, `settings.redis_prefix` (or a variable of one of `names`), formatted or not."""
    if isinstance(node, ast.FormattedValue):
        node = node.value
    return isinstance(node, ast.Attribute) and node.attr in PREFIXES or isinstance(node, ast.Name) and node.id in names


def _built_keys(path: Path, heads: set[str]) -> list[str]:
    found: dict[str, None] = {}  # each once (an f-string's parts are walked again on their own)
    spelled = re.compile("^(?:" + "|".join(re.escape(h) for h in sorted(heads)) + "):")
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        where = f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.JoinedStr) and any(_names_a_prefix(part) for part in node.values):
            found[f"{where} puts the prefix in an f-string"] = None
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and \
                any(_names_a_prefix(side) for side in (node.left, node.right)):
            found[f"{where} adds to the prefix"] = None
        elif isinstance(node, ast.Attribute) and node.attr == "key" and isinstance(node.ctx, ast.Load) and \
                isinstance(node.value, ast.Name | ast.Attribute) and "store" in ast.unparse(node.value):
            found[f"{where} calls {ast.unparse(node)}"] = None
        for text in _texts(node):
            if spelled.match(text):
                found[f"{where} spells a key: {text!r}"] = None
    return list(found)


def test_the_layout_knows_the_heads_of_its_keys() -> None:
    heads = _heads()
    assert {"session", "lock", "sched", "heartbeat", "chkey", "{inflight}", "{errlog}", "dramatiq", "relay"} <= heads


def test_no_module_but_the_layout_builds_a_redis_key() -> None:
    heads = _heads()
    assert [found for path in _sources() for found in _built_keys(path, heads)] == []


def test_the_check_sees_the_ways_a_key_was_built(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text('a = f"{store.prefix}chkey:{cid}"\nb = settings.redis_prefix + "x"\nc = store.key("lock", 1)\n'
                      'd = "relay:native_missing"\ne = f"{p}dramatiq"\n')
    assert sorted(_built_keys(module, _heads())) == [
        "m.py:1 puts the prefix in an f-string", "m.py:1 spells a key: 'chkey:'", "m.py:2 adds to the prefix",
        "m.py:3 calls store.key", "m.py:4 spells a key: 'relay:native_missing'"]


def test_kept_reasoning_state_lives_under_the_users_hash_tag() -> None:
    from types import SimpleNamespace

    from api.relay.kept_reasoning import KeptReasoning

    kept = KeptReasoning(SimpleNamespace(prefix="gw:", redis=None))  # type: ignore[arg-type]
    assert kept.index_key(42) == "gw:{u42}:rsn"
    assert kept.key(42, "claude", "0f1e") == "gw:{u42}:rsn:claude:0f1e"
