"""Accessibility: axe-core (pinned in the console's devDependencies) on every page of the console's page table,
in both languages and both themes, at 1440 and 390 px, as root, as a user and anonymous — no critical or
serious violation (moderate and minor ones listed in the output); and the keyboard: a skip link first on every
page, the login form focused on load, at most 5 Tab stops from the top to the first control of the page."""
from __future__ import annotations

import asyncio
import re
from collections import Counter
from collections.abc import Iterator
from typing import Any

from playwright.async_api import Error as PlaywrightError

from tests.conftest import ROOT
from tests.e2e.test_console_polish import _seed_every_state, _seed_usage
from tests.e2e.ui import login

FRONTEND = ROOT / "frontend"
AXE = (FRONTEND / "node_modules" / "axe-core" / "axe.min.js").read_text()
WIDTHS = ({"width": 1440, "height": 900}, {"width": 390, "height": 844})
PEOPLE = (("root", "123456"), ("alice", "password123"), (None, None))
MAX_TAB_STOPS = 5


def _page_table() -> list[tuple[str, str | None]]:
    """(path, role) of every page of the console's page table (frontend/src/pages/table.js), one visitable URL each:
    an optional parameter dropped, the catch-all as an unknown path, the settings page once per tab. Left out: paths
    with a required parameter (an entity's editor), the OAuth callbacks (they only finish an outside login) and
    /chat2link (it sends the browser to the chat front-end)."""
    table = (FRONTEND / "src" / "pages" / "table.js").read_text()
    settings = (FRONTEND / "src" / "pages" / "Setting" / "index.jsx").read_text()
    tabs = re.findall(r"(\w+): \w+", re.search(r"const TABS = \{([^}]*)\}", settings).group(1))  # type: ignore[union-attr]
    root_tabs = re.findall(r"'(\w+)'", re.search(r"const ROOT_TABS = \[([^\]]*)\]", settings).group(1))  # type: ignore[union-attr]
    pages: list[tuple[str, str | None]] = []
    for line in table.splitlines():
        found = re.search(r"\{ path: '([^']+)'", line)
        if not found:
            continue
        path = re.sub(r"/:\w+\?$", "", found.group(1))
        role = re.search(r"role: '(\w+)'", line)
        if ":" in path or path.startswith("/oauth/") or path == "/chat2link":
            continue
        if path == "*":
            path = "/no-such-page"
        if path == "/setting":
            pages += [(f"{path}?tab={tab}", "root" if tab in root_tabs else role and role.group(1)) for tab in tabs]
            continue
        pages.append((path, role and role.group(1)))
    assert len(pages) >= 20, pages
    return pages


def _sees(who: str | None, role: str | None) -> bool:
    """Whether the person can open a page of that role (the others are sent to the login, or told no)."""
    if role is None:
        return True
    if who is None:
        return False
    return who == "root" or role == "user"


class Network:
    """The page's requests in flight, to wait until a client-side navigation has loaded what it asked for."""

    def __init__(self, page) -> None:
        self.page = page
        self.pending: set[Any] = set()
        self.changed = asyncio.Event()
        page.on("request", self._start)
        page.on("requestfinished", self._end)
        page.on("requestfailed", self._end)

    def _start(self, request) -> None:
        self.pending.add(request)
        self.changed.set()

    def _end(self, request) -> None:
        self.pending.discard(request)
        self.changed.set()

    async def settle(self) -> None:
        """Until a rendered frame starts no request and none is in flight."""
        for _ in range(50):
            self.changed.clear()
            await self.page.evaluate("new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)))")
            if not self.pending and not self.changed.is_set():
                return
            while self.pending:
                self.changed.clear()
                await self.changed.wait()
        raise AssertionError(f"the page never settled: {self.pending}")


async def _go(page, network: Network, backend: str, path: str) -> bool:
    """A client-side navigation (the router follows history); False when the page sent the visitor elsewhere
    (a page that reloads the console, e.g. the chat page to the login, is then loaded afresh)."""
    if not page.url.startswith(backend):
        await page.goto("/")
    await page.evaluate("(p) => { history.pushState({}, '', p); dispatchEvent(new PopStateEvent('popstate')); }", path)
    try:
        await network.settle()
    except PlaywrightError:  # the page was replaced
        await page.wait_for_load_state()
        await network.settle()
        return False
    return await page.evaluate("() => location.pathname + location.search") == path


def _combos() -> Iterator[tuple[str, str]]:
    for theme in ("light", "dark"):
        for lang in ("en", "zh"):
            yield theme, lang


# Colours measured as they are, not halfway through Bulma's transitions from the page or theme before.
NO_TRANSITIONS = "*, *::before, *::after { transition: none !important; }"
# Not into frames: the chat page frames an outside chat front-end (its own accessibility, not the console's).
AXE_RUN = """async () => {
  const result = await axe.run(document, { resultTypes: ['violations'], iframes: false });
  return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.slice(0, 3).map((n) => n.target.join(' ') + ' :: '
      + n.failureSummary.split('\\n').slice(1, 2).join('')) }));
}"""


async def test_axe_finds_no_serious_violation_on_any_page(browser, backend: str, settings) -> None:
    await _seed_usage(settings)
    await _seed_every_state(settings, backend)
    pages = _page_table()
    serious: dict[str, list[str]] = {}
    counts: Counter[str] = Counter()
    lesser: Counter[str] = Counter()
    examples: dict[str, str] = {}
    visited = 0
    for who, password in PEOPLE:
        for viewport in WIDTHS:
            phone = viewport["width"] < 500
            context = await browser.new_context(base_url=backend, viewport=viewport, locale="en-US", is_mobile=phone,
                                                has_touch=phone)
            await context.add_init_script(script=AXE)  # an init script is not held to the page's CSP
            page = await context.new_page()
            network = Network(page)
            if who and password:
                await login(page, who, password)
            else:
                await page.goto("/")
            for theme, lang in _combos():
                await page.evaluate("([t, l]) => { localStorage.setItem('theme', t); "
                                    "localStorage.setItem('i18nextLng', l); }", [theme, lang])
                await page.goto("/")
                await page.add_style_tag(content=NO_TRANSITIONS)
                await network.settle()
                for path, role in pages:
                    if not _sees(who, role) or not await _go(page, network, backend, path):
                        continue
                    visited += 1
                    for violation in await page.evaluate(AXE_RUN):
                        counts[violation["impact"]] += 1
                        where = f"{who or 'anonymous'} {viewport['width']} {theme} {lang} {path}"
                        if violation["impact"] in ("critical", "serious"):
                            serious.setdefault(where, []).append(
                                f"{violation['impact']} {violation['id']}: {violation['help']} {violation['nodes']}")
                        else:
                            key = f"{violation['impact']} {violation['id']}: {violation['help']}"
                            lesser[key] += 1
                            examples.setdefault(key, f"{where}: {violation['nodes']}")
            await context.close()
    print(f"axe: {visited} page views; violations by impact: {dict(counts)}")
    for line, times in sorted(lesser.items()):
        print(f"  {times:4d} × {line}\n         e.g. {examples[line]}")
    assert visited >= 8 * 40, visited
    assert serious == {}, "\n".join(f"{where}: {found}" for where, found in serious.items())


# The focused element: inside <main>, and a control (what a keyboard user comes to the page for).
FOCUS = """() => {
  const el = document.activeElement;
  return { inMain: Boolean(el && el.closest('main')), skip: Boolean(el && el.matches('a.skip-link')),
           control: Boolean(el && el.matches('a[href], button, input, select, textarea, [tabindex="0"], [role="tab"]')),
           name: el ? (el.getAttribute('aria-label') || el.textContent || el.name || el.tagName).trim().slice(0, 40)
                    : '' };
}"""
HAS_CONTROL = """() => Boolean(document.querySelector('main').querySelector(
  'a[href], button:not([disabled]), input:not([disabled]), select:not([disabled]), textarea, [tabindex="0"]'))"""


async def _tab_stops(page, where: str) -> int:
    """Tab presses from the top of a freshly loaded page to the first control of its main content, using the skip
    link (the first stop: Enter on it moves focus to the start of the content). 0 when a control has the focus on
    load (a dialog the URL opens focuses its first field)."""
    focus = await page.evaluate(FOCUS)
    if focus["inMain"] and focus["control"]:
        return 0
    await page.keyboard.press("Tab")
    focus = await page.evaluate(FOCUS)
    assert focus["skip"], f"{where}: the first Tab stop is not the skip link: {focus}"
    await page.keyboard.press("Enter")
    for stops in range(2, 20):
        await page.keyboard.press("Tab")
        focus = await page.evaluate(FOCUS)
        if focus["inMain"] and focus["control"]:
            return stops
    return 99


async def test_the_keyboard_reaches_every_page_content_in_a_few_tab_stops(browser, backend: str, settings) -> None:
    await _seed_usage(settings)
    pages = _page_table()
    counts: dict[str, int] = {}
    for who, password in PEOPLE:
        context = await browser.new_context(base_url=backend, viewport=WIDTHS[0], locale="en-US")
        page = await context.new_page()
        network = Network(page)
        if who and password:
            await login(page, who, password)
        else:
            await page.goto("/login")
            await network.settle()
            focused = await page.evaluate("() => document.activeElement && document.activeElement.id")
            label = await page.evaluate("() => document.activeElement.labels[0].textContent")
            assert focused and label.strip() == "Username", (focused, label)
        for path, role in pages:
            if not _sees(who, role):
                continue
            await page.goto(path)
            await network.settle()
            if page.url.split(backend, 1)[1] != path or path == "/login" or not await page.evaluate(HAS_CONTROL):
                continue
            where = f"{who or 'anonymous'} {path}"
            counts[where] = await _tab_stops(page, where)
        await context.close()
    print("Tab stops to the first control:", counts)
    assert len(counts) >= 20, counts
    assert {where: n for where, n in counts.items() if n > MAX_TAB_STOPS} == {}
