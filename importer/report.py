"""What an import did, or would do: per table the rows created, updated, unchanged, left as they are
and skipped (with why), the notes, and the users and keys whose live balances must reload."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class TableReport:
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    left: int = 0  # rows here that differ from the source, left as they are (new_only)
    balances: int = 0  # of the rows that differ: those whose balance columns differ
    skipped: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)  # the balances left as they are here, with the source's


@dataclass
class Report:
    flavour: str = ""
    era: list[str] = field(default_factory=list)
    tables: dict[str, TableReport] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    # users and keys whose balances the import created or changed (their live balances reload)
    new_users: list[int] = field(default_factory=list)
    new_tokens: list[tuple[int, int]] = field(default_factory=list)  # (user id, key id)
    changed_users: list[int] = field(default_factory=list)
    changed_tokens: list[tuple[int, int]] = field(default_factory=list)

    def table(self, name: str) -> TableReport:
        return self.tables.setdefault(name, TableReport())

    def totals(self) -> tuple[int, int]:
        """(rows new in the source, rows here that differ from the source)."""
        tables = self.tables.values()
        return sum(t.created for t in tables), sum(t.updated + t.left for t in tables)

    def balances(self, table: str) -> int:
        part = self.tables.get(table)
        return part.balances if part else 0

    def render(self, dry: bool) -> str:
        verb = "would be" if dry else "were"
        lines = [f"source: {self.flavour} ({', '.join(self.era) or 'base schema'})"]
        for name, t in self.tables.items():
            left = f"{t.left} left as they are here, " if t.left else ""
            lines.append(f"  {name}: {t.created} {verb} created, {t.updated} updated, {t.unchanged} unchanged, "
                         f"{left}{len(t.skipped)} skipped")
            for label, items in (("skipped", t.skipped), ("left as here", t.kept)):
                lines += [f"    {label}: {item}" for item in items[:50]]
                if len(items) > 50:
                    lines.append(f"    … and {len(items) - 50} more")
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)
