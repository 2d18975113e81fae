"""The packages' layering (README, "Architecture"): what may import what, at run time.

    models
    api kernel      api.errors, api.i18n, api.keys (the application's keys)
    api.services    billing, accounts, configuration and the shared ground (store, keys, events, jobs…)
    api.web         the HTTP-bound helpers: addresses, sessions, login guard, OAuth, Turnstile, bodies…
    api.upstream    adaptors, signing, decoders, credentials, media, the one upstream call
    api.channels    channel administration: the form, keys, tags, tests, the health monitor
    api.relay       the relay pipeline (inbound formats, tasks)
    api.console     the console's handlers and the playground
    api.app, api.resources, workers, scheduler   the programs (api.resources: what each of them opens)

A module imports only from its own layer or a layer below; packages never import each other in a
cycle. Imports under `if TYPE_CHECKING:` are names for the checker, not arrows, and are not counted.
models/importer is a command-line program kept beside the models it fills: it may use any layer.
"""
from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

KERNEL = ("api.errors", "api.i18n", "api.keys", "api.security")
WEB = ("api.web", "api.bodies", "api.response", "api.middlewares", "api.static", "api.health")
LAYERS: tuple[tuple[str, ...], ...] = (
    ("models",),
    KERNEL,
    ("api.services",),
    WEB,
    ("api.upstream",),
    ("api.channels",),
    ("api.relay",),
    ("api.console",),
    ("api.app", "api.resources", "api.__main__", "api.launch", "workers", "scheduler"),
)
PROGRAMS = ("models.importer",)
# Packages whose modules may not import each other both ways (their own cycles are their business).
PACKAGES = ("api.services.billing", "api.services.accounts", "api.services.configuration",
            *(p for layer in LAYERS for p in layer))
# The programs may use what they run, except the layers a program never needs.
PROGRAM_LIMITS = {"workers": ("api.app", "api.console"), "scheduler": ("api.app", "api.console")}


def _within(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def layer_of(module: str) -> int | None:
    for i, layer in enumerate(LAYERS):
        if _within(module, layer):
            return i
    return None


def package_of(module: str) -> str | None:
    best = None
    for p in PACKAGES:
        if _within(module, (p,)) and (best is None or len(p) > len(best)):
            best = p
    return best


def _runtime_nodes(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node except those under `if TYPE_CHECKING:`."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            stack.extend(node.orelse)
            continue
        yield node
        stack.extend(ast.iter_child_nodes(node))


def imports_of(path: Path) -> set[str]:
    names: set[str] = set()
    for node in _runtime_nodes(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def modules(root: Path) -> dict[str, Path]:
    found = {}
    for top in ("api", "models", "workers", "scheduler"):
        for path in sorted((root / top).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def upward_imports(root: Path) -> list[str]:
    found = []
    for module, path in modules(root).items():
        own = layer_of(module)
        if own is None or _within(module, PROGRAMS):
            continue
        limits = next((v for k, v in PROGRAM_LIMITS.items() if _within(module, (k,))), ())
        for name in sorted(imports_of(path)):
            target = layer_of(name)
            if (target is not None and target > own) or _within(name, limits):
                found.append(f"{module} imports {name}")
    return found


def package_cycles(root: Path) -> list[list[str]]:
    """Strongly connected groups of packages (Tarjan) bigger than one: each is a cycle."""
    mods = modules(root)
    graph: dict[str, set[str]] = {}
    for module, path in mods.items():
        source = package_of(module)
        if source is None or _within(module, PROGRAMS):
            continue
        for name in imports_of(path):
            target = package_of(name)
            if target is not None and target != source and not _within(name, PROGRAMS):
                graph.setdefault(source, set()).add(target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                group.append(top)
                if top == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return groups


def test_no_module_imports_a_layer_above_it() -> None:
    assert upward_imports(ROOT) == []


def test_no_two_packages_import_each_other() -> None:
    assert package_cycles(ROOT) == []


def test_every_module_has_a_layer() -> None:
    assert [m for m in modules(ROOT) if layer_of(m) is None and m != "api"] == []


def _tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_the_checks_see_what_they_forbid(tmp_path: Path) -> None:
    """A relay module importing the console, a service importing the workers and a cycle between two
    service packages are each reported; an import under TYPE_CHECKING is not."""
    root = _tree(tmp_path, {
        "api/relay/handler.py": "from api.console.auth import current_user\n",
        "api/services/jobs.py": "from workers.broker import send\n",
        "api/services/billing/quota.py": "from api.services.accounts import users\n",
        "api/services/accounts/users.py": "from api.services.billing.quota import Charge\n",
        "api/keys.py": "from typing import TYPE_CHECKING\n"
                       "if TYPE_CHECKING:\n    from api.services.store import Store\n",
        "api/console/auth.py": "from api.relay import handler\n",
        "workers/broker.py": "import dramatiq\n",
    })
    assert upward_imports(root) == ["api.relay.handler imports api.console.auth",
                                    "api.relay.handler imports api.console.auth.current_user",
                                    "api.services.jobs imports workers.broker",
                                    "api.services.jobs imports workers.broker.send"]
    assert package_cycles(root) == [["api.console", "api.relay"], ["api.services.accounts", "api.services.billing"]]
