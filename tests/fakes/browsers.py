"""Several independent browsers (cookie jars) on one test server, and quick console set-up."""
from __future__ import annotations

from aiohttp.test_utils import TestClient

from api import keys
from models import User
from models.enums import Role
from tests.helpers import ApiClient, make_user


class Browsers:
    """`new()` is a browser of its own on the app under test; close() ends their HTTP sessions."""

    def __init__(self, client: TestClient) -> None:
        self.client = client
        self._opened: list[TestClient] = []

    def new(self) -> ApiClient:
        browser = TestClient(self.client.server)
        self._opened.append(browser)
        return ApiClient(browser)

    async def login(self, username: str, password: str = "password123") -> ApiClient:
        api = self.new()
        await api.login(username, password)
        return api

    async def user(self, username: str, role: Role = Role.USER, **fields: object) -> tuple[User, ApiClient]:
        """A new account of that role, logged in in a browser of its own."""
        user = await make_user(username, role=role, **fields)
        return user, await self.login(username)

    async def close(self) -> None:
        for browser in self._opened:
            await browser.session.close()


async def set_options(client: TestClient, **values: object) -> None:
    """Change options through the options service (validated, cached and broadcast), in order."""
    options = client.server.app[keys.OPTIONS]
    for key, value in values.items():
        await options.update(key, value)
