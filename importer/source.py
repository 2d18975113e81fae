"""Read-only access to the old deployment's database: SQLite file, PostgreSQL or MySQL URL."""
from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit


class Source:
    """`tables()`, `columns(table)` and `rows(table, after_id)`: batches of dict rows in id order."""

    def __init__(self, url: str) -> None:
        self.url = url
        parts = urlsplit(url if "://" in url else f"sqlite://{url}")
        self.kind = {"postgres": "pg", "postgresql": "pg", "mysql": "mysql", "sqlite": "sqlite"}.get(parts.scheme)
        if self.kind is None:
            raise ValueError(f"unsupported source URL scheme {parts.scheme!r}: use a SQLite file, postgres:// or mysql://")
        self.parts = parts
        self._conn: Any = None

    # -- connection ---------------------------------------------------------------------------------
    async def open(self) -> Source:
        p = self.parts
        if self.kind == "sqlite":
            import aiosqlite

            path = unquote((p.netloc + p.path) if p.netloc not in ("", "localhost") else p.path)
            if not Path(path).is_file():
                raise ValueError(f"no SQLite database at {path}")
            self._conn = await aiosqlite.connect(f"file:{path}?mode=ro", uri=True)
            self._conn.row_factory = aiosqlite.Row
        elif self.kind == "pg":
            import asyncpg

            self._conn = await asyncpg.connect(self.url.replace("postgresql://", "postgres://", 1))
        else:
            import asyncmy

            self._conn = await asyncmy.connect(host=p.hostname or "127.0.0.1", port=p.port or 3306,
                                               user=unquote(p.username or "root"), password=unquote(p.password or ""),
                                               database=p.path.lstrip("/"), charset="utf8mb4")
        return self

    async def close(self) -> None:
        if self._conn is not None:
            await self._conn.close() if self.kind != "mysql" else self._conn.close()
            self._conn = None

    def quote(self, name: str) -> str:
        return f"`{name}`" if self.kind == "mysql" else f'"{name}"'

    async def _fetch(self, sql: str, *args: Any) -> list[dict[str, Any]]:
        if self.kind == "sqlite":
            async with self._conn.execute(sql.replace("$1", "?").replace("$2", "?"), args) as cursor:
                return [dict(row) for row in await cursor.fetchall()]
        if self.kind == "pg":
            return [dict(row) for row in await self._conn.fetch(sql, *args)]
        from asyncmy.cursors import DictCursor

        async with self._conn.cursor(DictCursor) as cursor:
            await cursor.execute(sql.replace("$1", "%s").replace("$2", "%s"), args)
            return list(await cursor.fetchall())

    # -- schema -------------------------------------------------------------------------------------
    async def tables(self) -> set[str]:
        if self.kind == "sqlite":
            rows = await self._fetch("SELECT name FROM sqlite_master WHERE type = 'table'")
            return {r["name"] for r in rows}
        if self.kind == "pg":
            rows = await self._fetch("SELECT table_name AS name FROM information_schema.tables "
                                     "WHERE table_schema = current_schema()")
            return {r["name"] for r in rows}
        rows = await self._fetch("SELECT table_name AS name FROM information_schema.tables "
                                 "WHERE table_schema = DATABASE()")
        return {str(r.get("name") or r.get("NAME") or r.get("TABLE_NAME")) for r in rows}

    async def columns(self, table: str) -> set[str]:
        if self.kind == "sqlite":
            return {r["name"] for r in await self._fetch(f"PRAGMA table_info({self.quote(table)})")}
        schema = "current_schema()" if self.kind == "pg" else "DATABASE()"
        rows = await self._fetch("SELECT column_name AS name FROM information_schema.columns "
                                 f"WHERE table_schema = {schema} AND table_name = $1", table)
        return {str(r.get("name") or r.get("NAME") or r.get("COLUMN_NAME")) for r in rows}

    async def count(self, table: str) -> int:
        rows = await self._fetch(f"SELECT COUNT(*) AS n FROM {self.quote(table)}")
        return int(next(iter(rows[0].values())))

    async def rows(self, table: str, after_id: int = 0, batch: int = 1000,
                   key: str = "id") -> AsyncIterator[list[dict[str, Any]]]:
        """Every row with `key` > after_id, `batch` at a time, in key order."""
        last = after_id
        while True:
            chunk = await self._fetch(f"SELECT * FROM {self.quote(table)} WHERE {self.quote(key)} > $1 "
                                      f"ORDER BY {self.quote(key)} LIMIT {int(batch)}", last)
            if not chunk:
                return
            yield chunk
            last = chunk[-1][key]

    async def all_rows(self, table: str) -> list[dict[str, Any]]:
        return await self._fetch(f"SELECT * FROM {self.quote(table)}")
