"""A custom OpenID Connect provider in the browser: root adds it in the system settings, filling its
endpoints with "Discover"; on the login page its button (reached and pressed with the keyboard) goes
to the provider (a strict local one, tests/fakes/oidc_provider.py), which sends the browser back to the
console's callback page, and the visitor ends logged in with a new account bound to the provider."""
from __future__ import annotations

from playwright.async_api import expect

from models import User, UserOAuthBinding
from tests.e2e.conftest import shot
from tests.e2e.ui import console_api, database, login
from tests.fakes.oidc_provider import CLIENT_ID, CLIENT_SECRET, start_oidc


async def test_root_adds_a_provider_and_a_visitor_logs_in_with_it(page, browser, backend, settings,
                                                                    aiohttp_server) -> None:
    idp = await start_oidc(aiohttp_server, {f"{backend}/oauth/corp"})
    async with console_api(backend, "root", "123456") as root:
        for key, value in (("ServerAddress", backend), ("MediaFetchPrivateEnabled", "true")):
            assert (await root.put("/api/option/", {"key": key, "value": value}))["success"]

    await login(page, "root", "123456")
    await page.goto("/setting?tab=system")
    card = page.get_by_test_id("card-customOAuth")
    await card.get_by_test_id("custom-oauth-add").click()
    dialog = page.get_by_test_id("custom-oauth-modal")
    await dialog.get_by_test_id("custom-oauth-name").fill("Corp SSO")
    await dialog.get_by_test_id("custom-oauth-slug").fill("corp")
    await dialog.get_by_test_id("custom-oauth-issuer").fill(idp.url)
    await dialog.get_by_test_id("custom-oauth-discover").click()
    await expect(dialog.get_by_test_id("custom-oauth-token_endpoint")).to_have_value(f"{idp.url}/token")
    await expect(dialog.get_by_test_id("custom-oauth-jwks_url")).to_have_value(f"{idp.url}/jwks")
    await dialog.get_by_test_id("custom-oauth-client-id").fill(CLIENT_ID)
    await dialog.get_by_test_id("custom-oauth-client-secret").fill(CLIENT_SECRET)
    await shot(page, "custom-oauth-provider-form")
    await dialog.get_by_test_id("custom-oauth-save").click()
    await expect(card.get_by_test_id("custom-oauth-row-corp")).to_contain_text("OpenID Connect")
    assert len(idp.calls_to("discovery")) == 1

    visitor = await browser.new_context(base_url=backend, viewport={"width": 1280, "height": 800}, locale="en-US")
    try:
        tab = await visitor.new_page()
        await tab.goto("/login")
        button = tab.get_by_role("button", name="Log in with Corp SSO")
        await button.focus()
        await shot(tab, "login-custom-oauth")
        await button.press("Enter")
        await tab.wait_for_url("**/token")
        await tab.get_by_test_id("user-menu").wait_for(state="attached")
        assert len(idp.calls_to("authorize")) == 1 and len(idp.calls_to("token")) == 1
    finally:
        await visitor.close()
    async with database(settings):
        binding = await UserOAuthBinding.get(provider_user_id="user-1")
        user = await User.get(id=binding.user_id)
    assert user.username.startswith("corp_") and user.display_name == "Ada Lovelace"
