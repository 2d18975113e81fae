"""The packages' layering: what may import what (README, "Architecture").

models ← api.services ← api.relay, api.console ← api.app; workers and scheduler use all but the app.
A service is what a console handler, the relay and a worker share: it never imports the relay, the
console or aiohttp's application machinery from them.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

FORBIDDEN = {
    "models": ("api", "workers", "scheduler"),
    "api/services": ("api.relay", "api.console", "api.app", "workers.actors", "scheduler"),
    "workers": ("api.app", "api.console"),
    "scheduler": ("api.app", "api.console"),
}
PROGRAMS = ("models/importer",)  # a command-line tool kept beside the models it fills: it may use any layer


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def test_no_package_imports_a_layer_above_it() -> None:
    found = []
    for package, above in FORBIDDEN.items():
        for path in sorted((ROOT / package).rglob("*.py")):
            if str(path.relative_to(ROOT)).startswith(PROGRAMS):
                continue
            for name in sorted(_imports(path)):
                if any(name == prefix or name.startswith(prefix + ".") for prefix in above):
                    found.append(f"{path.relative_to(ROOT)} imports {name}")
    assert found == []


def test_the_check_sees_an_import_it_forbids(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("from api.relay import registry\nimport api.console.auth\n")
    assert {"api.relay", "api.relay.registry", "api.console.auth"} <= _imports(module)
