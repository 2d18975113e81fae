"""The packages' layering (README, "Architecture"): what may import what, at run time.

    models
    api kernel      api.errors, api.i18n, api.keys (the application's keys)
    api.services    billing, accounts, configuration and the shared ground (store, keys, events, jobs…)
    api.web         the HTTP-bound helpers: addresses, sessions, login guard, OAuth, Turnstile, bodies…
    api.upstream    adaptors, signing, decoders, credentials, media, the one upstream call
    api.channels    channel administration: the form, keys, tags, tests, the health monitor, the retry
                    and disable rules; api.mcp beside it: the registered MCP servers, who may use
                    them, the client that speaks to them
    api.relay       the relay pipeline (inbound formats, tasks)
    api.console     the console's handlers and the playground
    api.app, api.resources, workers, scheduler, importer   the programs (api.resources: what each of them opens)

A module imports only from its own layer or a layer below; packages never import each other in a
cycle, and no module imports itself round a cycle of modules, whether the import stands at the top
of a file or inside a function. Imports under `if TYPE_CHECKING:` are names for the checker, not
arrows, and are not counted.
"""
from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

TOPS = ("api", "models", "workers", "scheduler", "importer")
KERNEL = ("api.errors", "api.i18n", "api.keys", "api.security")
WEB = ("api.web", "api.bodies", "api.response", "api.middlewares", "api.static", "api.health")
LAYERS: tuple[tuple[str, ...], ...] = (
    ("models",),
    KERNEL,
    ("api.services",),
    WEB,
    ("api.upstream",),
    ("api.channels", "api.mcp"),
    ("api.relay",),
    ("api.console",),
    ("api.app", "api.resources", "api.__main__", "api.launch", "workers", "scheduler", "importer"),
)
# Packages that may not import each other both ways, even through modules that form no cycle.
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
    for top in TOPS:
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
        if own is None:
            continue
        limits = next((v for k, v in PROGRAM_LIMITS.items() if _within(module, (k,))), ())
        for name in sorted(imports_of(path)):
            target = layer_of(name)
            if (target is not None and target > own) or _within(name, limits):
                found.append(f"{module} imports {name}")
    return found


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of nodes (Tarjan) bigger than one: each holds a cycle."""
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
    return sorted(groups)


def package_cycles(root: Path) -> list[list[str]]:
    graph: dict[str, set[str]] = {}
    for module, path in modules(root).items():
        source = package_of(module)
        if source is None:
            continue
        for name in imports_of(path):
            target = package_of(name)
            if target is not None and target != source:
                graph.setdefault(source, set()).add(target)
    return strongly_connected(graph)


def _imported_modules(module: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The tree's modules `module` imports, wherever the import stands (a function's body included),
    except under `if TYPE_CHECKING:`.

    `import a.b` and `from a import b` name the module `a.b` when it is one; `from a.b import name`
    with `name` an attribute names `a.b` (a package's `__init__`). The packages Python runs on the way
    to a module (`a` for `a.b`) are not arrows: running them first is how every import works.
    """
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    targets: set[str] = set()

    def nearest(name: str) -> None:
        while name and name not in known:
            name = name.rpartition(".")[0]
        if name and name != module:
            targets.add(name)

    for node in _runtime_nodes(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                nearest(alias.name)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package[: len(package) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            for alias in node.names:
                nearest(f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base)
    return targets


def import_graph(root: Path) -> dict[str, set[str]]:
    known = modules(root)
    return {module: _imported_modules(module, path, known) for module, path in known.items()}


def shortest_cycle(graph: dict[str, set[str]], start: str) -> list[str]:
    """The shortest way from `start` back to itself (breadth first), as the modules in order."""
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for nxt in sorted(graph.get(node, ())):
                if nxt == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(came_from[path[-1]])
                    return [*reversed(path), start]
                if nxt not in came_from:
                    came_from[nxt] = node
                    following.append(nxt)
        frontier = following
    return []


def module_cycles(root: Path) -> list[str]:
    """One line per group of modules that import each other round (wherever the import stands): its
    modules, and the shortest cycle through the first of them."""
    graph = import_graph(root)
    return [f"{len(group)} modules: {', '.join(group)}; e.g. {' -> '.join(shortest_cycle(graph, group[0]))}"
            for group in strongly_connected(graph)]


def test_no_module_imports_a_layer_above_it() -> None:
    assert upward_imports(ROOT) == []


def test_no_two_packages_import_each_other() -> None:
    assert package_cycles(ROOT) == []


def test_no_module_imports_itself_round_a_cycle() -> None:
    cycles = module_cycles(ROOT)
    assert cycles == [], "\n".join(cycles)


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


def test_a_cycle_through_a_function_is_seen(tmp_path: Path) -> None:
    """Three modules in a cycle closed by an import inside a function, and a package whose `__init__`
    re-exports a submodule that imports a sibling: the cycle is reported, the package is not."""
    root = _tree(tmp_path, {
        "api/__init__.py": "",
        "api/upstream/__init__.py": "",
        "api/upstream/errors.py": "def row(t):\n"
                                  "    from api.upstream.catalogue import provider\n    return provider(t)\n",
        "api/upstream/catalogue.py": "from api.upstream.providers import openai\n",
        "api/upstream/providers/__init__.py": "",
        "api/upstream/providers/openai.py": "from api.upstream import errors\n",
        "models/__init__.py": "from .channel import Channel\n",
        "models/channel.py": "from .base import BaseModel\nfrom models.enums import ChannelType\n",
        "models/base.py": "",
        "models/enums.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from models import Channel\n",
    })
    assert import_graph(root)["models"] == {"models.channel"}
    assert import_graph(root)["models.channel"] == {"models.base", "models.enums"}
    assert module_cycles(root) == [
        "3 modules: api.upstream.catalogue, api.upstream.errors, api.upstream.providers.openai; e.g. "
        "api.upstream.catalogue -> api.upstream.providers.openai -> api.upstream.errors -> api.upstream.catalogue"]
    (root / "api/upstream/errors.py").write_text("def row(t):\n    return t\n")
    assert module_cycles(root) == []
