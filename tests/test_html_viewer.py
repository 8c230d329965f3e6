"""The HTML viewer (``ptree.formats.html``), opened in a real browser.

Debian's Chromium, driven by the Python ``playwright`` package (``.ci/run`` installs
both; nothing is downloaded).  One browser serves every test of this module.  Every
page is opened from disk (``file://``) with all other requests routed to an abort, and
each test asserts that the page asked for nothing but its own file.

The expected paths below are worked out by hand from the sessions built here: the
branch a switch leads to is the newest leaf (the one written last) under the chosen
sibling.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import struct
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import ptree
from ptree.formats.html import script_json, to_html
from tests.helpers import missing

CHROMIUM = os.environ.get("PTREE_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
ARTIFACTS = Path(
    os.environ.get("PTREE_ARTIFACTS", Path(__file__).resolve().parents[1] / ".artifacts")
)
T0 = "2026-01-05T09:00:00.000Z"


# ---------------------------------------------------------------- sessions


def kyoto() -> ptree.SessionTree:
    """Three branches under a1 (u2, u3, u4); two under u2 (a2, a2b); leaf a4.

    u1 > a1 > u2 > a2 > r2 > a3
                 > a2b
            > u3 > a4                 (the current leaf, labelled "favourite")
            > u4 > a6 > n1 (session name)
    """
    t = ptree.SessionTree()

    def add(tree: ptree.SessionTree, eid: str, msg: dict[str, Any]) -> ptree.SessionTree:
        return tree.append(msg, id=eid, timestamp=T0)

    t = add(t, "u1", {"role": "user", "content": "Plan a trip to Kyoto"})
    t = add(t, "a1", {"role": "assistant", "content": [{"type": "text", "text": "Plan A"}]})
    t = add(t, "u2", {"role": "user", "content": "Make it cheaper"})
    call = {"type": "toolCall", "id": "c1", "name": "lodging", "arguments": {"q": "kyoto"}}
    t = add(t, "a2", {"role": "assistant", "content": [call]})
    t = add(
        t,
        "r2",
        {
            "role": "toolResult",
            "toolCallId": "c1",
            "toolName": "lodging",
            "content": [{"type": "text", "text": "Found: Piece Hostel Sanjo"}],
            "isError": False,
        },
    )
    t = add(t, "a3", {"role": "assistant", "content": "Cheap plan: hostels"})
    t = t.move_to("u2")
    t = add(t, "a2b", {"role": "assistant", "content": "Cheaper still: camp by the river"})
    t = t.move_to("a1")
    t = add(t, "u3", {"role": "user", "content": "Make it luxurious"})
    t = add(t, "a4", {"role": "assistant", "content": "Luxury plan: ryokan"})
    t = t.move_to("a1")
    t = add(t, "u4", {"role": "user", "content": "Make it a day trip"})
    t = add(t, "a6", {"role": "assistant", "content": "Day trip: Fushimi Inari"})
    t = t.append_session_info("Kyoto trip", id="n1", timestamp=T0)
    t = t.append_label("a4", "favourite", id="l1", timestamp=T0)
    return t.move_to("a4")


def png_1x1() -> str:
    """A valid 1x1 red PNG, base64."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return (
            struct.pack(">I", len(body))
            + kind
            + body
            + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)
        )

    raw = b"\x89PNG\r\n\x1a\n"
    raw += chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0))
    raw += chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00"))
    raw += chunk(b"IEND", b"")
    return base64.b64encode(raw).decode("ascii")


XSS = [
    "<script>window.pwned = 'script'</script>",
    "<img src=x onerror=\"window.pwned = 'img'\">",
    "[click me](javascript:window.pwned='link') javascript:window.pwned='bare'",
    "</script><script>window.pwned = 'breakout'</script><!--",
    '<svg onload="window.pwned=\'svg\'"></svg> <iframe src="javascript:window.pwned=1">',
]
BIDI = "invoice\u202egnp.exe \u2066hidden\u2069 \x1b[31mred"


def hostile() -> ptree.SessionTree:
    """Payloads in every place text can come from: messages, thinking, tool names and
    arguments, results, summaries, labels, the session name, the header, ids."""
    header = ptree.SessionHeader(id="<b>s</b>", timestamp=T0, cwd="<script>x()</script>")
    t = ptree.SessionTree(header=header)
    evil_id = "x\"'><img src=x onerror=\"window.pwned='id'\">"
    t = t.append({"role": "user", "content": "\n".join(XSS)}, id=evil_id, timestamp=T0)
    t = t.append(
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": XSS[0]},
                {"type": "text", "text": XSS[1] + "\n```\n" + XSS[3] + "\n```\n" + BIDI},
                {"type": "toolCall", "id": "c", "name": XSS[1], "arguments": {"x": XSS[2]}},
            ],
        },
        id="a1",
        timestamp=T0,
    )
    t = t.append(
        {
            "role": "toolResult",
            "toolCallId": "c",
            "toolName": XSS[4],
            "content": [{"type": "text", "text": XSS[3]}],
            "isError": True,
        },
        id="r1",
        timestamp=T0,
    )
    t = t.append_compaction(XSS[0] + XSS[4], "a1", 1234, id="c1", timestamp=T0)
    t = t.append(
        {
            "role": "user",
            "content": [{"type": "image", "mimeType": "image/png", "data": png_1x1()}],
        },
        id="img",
        timestamp=T0,
    )
    t = t.append(
        {
            "role": "user",
            "content": [
                {"type": "image", "mimeType": "image/svg+xml", "data": "PHN2Zz4="},
                {"type": "image", "mimeType": "image/png", "data": '" onerror=alert(1) x="'},
            ],
        },
        id="badimg",
        timestamp=T0,
    )
    t = t.append_label(evil_id, XSS[1], id="l1", timestamp=T0)
    return t.append_session_info(XSS[3], id="n1", timestamp=T0)


# ---------------------------------------------------------------- the browser


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One headless Debian Chromium for the whole module."""
    if not Path(CHROMIUM).exists() or shutil.which(CHROMIUM) is None:
        missing(f"no Chromium at {CHROMIUM}: .ci/run installs Debian's chromium")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:  # pragma: no cover - the test extra has it
        missing("the playwright package is not installed")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield b
        finally:
            b.close()


class Viewer:
    """One page of the viewer, opened from disk, with every other request refused."""

    def __init__(self, browser: Any, path: Path, *, width: int = 1280) -> None:
        self.context = browser.new_context(viewport={"width": width, "height": 860})
        self.page = self.context.new_page()
        self.url = path.resolve().as_uri()
        self.requests: list[str] = []
        self.dialogs: list[str] = []
        self.errors: list[str] = []
        self.failed: dict[str, str] = {}
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.on("requestfailed", lambda r: self.failed.setdefault(r.url, r.failure))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))

        def dialog(d: Any) -> None:
            self.dialogs.append(d.message)
            d.dismiss()

        self.page.on("dialog", dialog)

        def route(r: Any) -> None:
            if r.request.url == self.url:
                r.continue_()
            else:
                r.abort()

        self.context.route("**/*", route)
        self.page.goto(self.url)
        self.page.wait_for_selector("body[data-ready='1']", timeout=30_000)

    def path_ids(self) -> list[str]:
        """The ids of the cards on screen, in order."""
        ids: list[str] = self.page.eval_on_selector_all(
            "#cards > .card", "cs => cs.map(c => c.dataset.id)"
        )
        return ids

    def card(self, eid: str) -> Any:
        return self.page.locator(f"#cards > .card[data-id={json.dumps(eid)}]")

    def close(self) -> None:
        """Check the page asked for nothing but itself and raised no error; close it."""
        try:
            assert self.requests == [self.url]
            assert self.errors == []
        finally:
            self.context.close()


@pytest.fixture
def open_page(browser: Any, tmp_path: Path) -> Iterator[Any]:
    pages: list[Viewer] = []

    def opener(tree: ptree.SessionTree, name: str = "s.html", **kw: Any) -> Viewer:
        path = tmp_path / name
        path.write_text(to_html(tree), encoding="utf-8")
        v = Viewer(browser, path, **kw)
        pages.append(v)
        return v

    yield opener
    for v in pages:
        v.close()


# ---------------------------------------------------------------- tests


class TestBranches:
    def test_opens_on_the_current_path(self, open_page: Any) -> None:
        """The page opens on the leaf's path, the leaf marked, the name as title."""
        v = open_page(kyoto())
        assert v.path_ids() == ["u1", "a1", "u3", "a4"]
        assert v.page.inner_text("#h1") == "Kyoto trip"
        assert "current leaf" in v.card("a4").inner_text()
        assert "favourite" in v.card("a4").inner_text()
        assert v.page.inner_text("#path-messages") == "4"

    def test_switch_to_sibling_shows_its_newest_leaf(self, open_page: Any) -> None:
        """Switching u3 to its previous sibling u2 shows u2's newest leaf (a2b, written
        after a3); switching a2b back to a2 shows a2's only leaf a3; then forward twice
        from u2 reaches u4, whose newest leaf is the label entry l1 under n1."""
        v = open_page(kyoto())
        assert "branch 2 / 3" in v.card("u3").inner_text()
        v.card("u3").locator(".sw-prev").click()
        assert v.path_ids() == ["u1", "a1", "u2", "a2b"]
        assert "Cheaper still: camp by the river" in v.page.inner_text("#cards")
        assert "Luxury plan" not in v.page.inner_text("#cards")
        v.card("a2b").locator(".sw-prev").click()
        assert v.path_ids() == ["u1", "a1", "u2", "a2", "r2", "a3"]
        assert "Found: Piece Hostel Sanjo" in v.card("r2").inner_text()
        assert v.card("u2").locator(".sw-prev").is_disabled()
        v.card("u2").locator(".sw-next").click()
        assert v.path_ids() == ["u1", "a1", "u3", "a4"]
        v.card("u3").locator(".sw-next").click()
        assert v.path_ids() == ["u1", "a1", "u4", "a6", "n1", "l1"]
        assert v.card("u4").locator(".sw-next").is_disabled()
        assert "Session named Kyoto trip" in v.card("n1").inner_text()

    def test_tree_panel_click_shows_that_path(self, open_page: Any) -> None:
        """The panel draws all 14 entries; clicking a6 shows the path through it; clicking
        the leaf's row returns to the current path."""
        v = open_page(kyoto())
        rows = v.page.eval_on_selector_all("#tree .row", "rs => rs.map(r => r.dataset.id)")
        assert sorted(rows) == sorted(
            ["u1", "a1", "u2", "a2", "r2", "a3", "a2b", "u3", "a4", "u4", "a6", "n1", "l1"]
        )
        # pre-order, siblings in the order they were written
        assert rows == [
            "u1",
            "a1",
            "u2",
            "a2",
            "r2",
            "a3",
            "a2b",
            "u3",
            "a4",
            "u4",
            "a6",
            "n1",
            "l1",
        ]
        leaf_row = v.page.locator('#tree .row[data-id="a4"]')
        assert "leaf" in leaf_row.inner_text()
        v.page.locator('#tree .row[data-id="a6"]').click()
        assert v.path_ids() == ["u1", "a1", "u4", "a6", "n1", "l1"]
        assert "focus" in (v.card("a6").get_attribute("class") or "")
        on_path = v.page.eval_on_selector_all(
            "#tree .row.on-path", "rs => rs.map(r => r.dataset.id)"
        )
        assert on_path == ["u1", "a1", "u4", "a6", "n1", "l1"]
        leaf_row.click()
        assert v.path_ids() == ["u1", "a1", "u3", "a4"]

    def test_search_jumps_to_a_hit_on_another_branch(self, open_page: Any) -> None:
        """'piece hostel' is only in r2's result, on u2's branch: Enter shows the path
        through r2 (to a3, the newest leaf under r2) with the hit marked."""
        v = open_page(kyoto())
        v.page.fill("#search", "piece hostel")
        v.page.press("#search", "Enter")
        assert v.path_ids() == ["u1", "a1", "u2", "a2", "r2", "a3"]
        assert v.card("r2").locator("mark").inner_text() == "Piece Hostel"
        assert v.page.inner_text("#search-count") == "1 / 1"
        assert v.page.locator('#tree .row.hit[data-id="r2"]').count() == 1

    def test_search_steps_through_hits_and_tool_names(self, open_page: Any) -> None:
        """'plan' is in u1, a1, a3 and a4 (in tree order); Enter walks them; a tool name
        ('lodging') is found in the call a2 and the result r2."""
        v = open_page(kyoto())
        v.page.fill("#search", "plan")
        v.page.press("#search", "Enter")
        assert v.page.inner_text("#search-count") == "1 / 4"
        seen = []
        for _ in range(4):
            seen.append(v.page.get_attribute("#cards > .card.focus", "data-id"))
            v.page.press("#search", "Enter")
        assert seen == ["u1", "a1", "a3", "a4"]
        v.page.fill("#search", "lodging")
        v.page.press("#search", "Enter")
        assert v.page.inner_text("#search-count") == "1 / 2"
        assert v.page.get_attribute("#cards > .card.focus", "data-id") == "a2"

    def test_keyboard_in_the_tree_and_links_to_entries(self, open_page: Any) -> None:
        """In the tree panel, arrow keys move and Enter shows; the address then ends in
        #<id>, and opening that address shows the same entry on the same path."""
        v = open_page(kyoto())
        v.page.locator('#tree .row[data-id="u1"]').click()
        for _ in range(6):  # u1 → a1 → u2 → a2 → r2 → a3 → a2b
            v.page.keyboard.press("ArrowDown")
        v.page.keyboard.press("Enter")
        assert v.path_ids() == ["u1", "a1", "u2", "a2b"]
        assert v.page.url.endswith("#a2b")
        other = v.context.new_page()
        asked: list[str] = []
        other.on("request", lambda r: asked.append(r.url))
        other.goto(v.url + "#r2")
        other.wait_for_selector("body[data-ready='1']")
        ids = other.eval_on_selector_all("#cards > .card", "cs => cs.map(c => c.dataset.id)")
        assert ids == ["u1", "a1", "u2", "a2", "r2", "a3"]
        assert other.get_attribute("#cards > .card.focus", "data-id") == "r2"
        other.goto(v.url + "#" + "nothing-here")
        other.reload()
        other.wait_for_selector("body[data-ready='1']")
        ids = other.eval_on_selector_all("#cards > .card", "cs => cs.map(c => c.dataset.id)")
        assert ids == ["u1", "a1", "u3", "a4"]
        other.close()
        assert {u.split("#")[0] for u in asked} == {v.url}

    def test_result_list_click(self, open_page: Any) -> None:
        """The list under the search box names each hit's branch; clicking one shows it."""
        v = open_page(kyoto())
        v.page.fill("#search", "plan")
        v.page.wait_for_selector("#results.open")
        hits = v.page.locator("#results .hit")
        assert hits.count() == 4
        assert "other branch" in hits.nth(2).inner_text()  # a3, on u2's branch
        hits.nth(2).click()
        assert v.path_ids() == ["u1", "a1", "u2", "a2", "r2", "a3"]
        assert v.card("a3").locator("mark").inner_text() == "plan"

    def test_title_without_a_name_is_the_first_request(self, open_page: Any) -> None:
        """A session with no name is titled by its first user message, like Pi's list."""
        t = ptree.SessionTree().append({"role": "user", "content": "Fix the\nlogin bug"}, id="u")
        v = open_page(t)
        assert v.page.inner_text("#h1") == "Fix the login bug"
        assert v.page.title() == "Fix the login bug · ptree"

    def test_empty_session(self, open_page: Any) -> None:
        """A session with no entries opens and says so."""
        v = open_page(ptree.SessionTree())
        assert v.page.inner_text("#path-info") == "This session has no entries."
        assert v.path_ids() == []


class TestSafety:
    def test_nothing_in_the_session_runs_or_becomes_markup(self, open_page: Any) -> None:
        """Scripts, event handlers, javascript: links and a script-closing tag in every
        text field: no dialog, no flag set, no element made, the text shown literally."""
        v = open_page(hostile())
        v.page.click("#go-end")
        v.page.wait_for_timeout(100)
        assert v.page.evaluate("window.pwned") is None
        assert v.dialogs == []
        for selector in ("#cards script", "#cards iframe", "#cards svg", "a", "img[src='x']"):
            assert v.page.locator(selector).count() == 0, selector
        assert v.page.locator("script").count() == 2  # the data and the viewer
        text = v.page.inner_text("#cards")
        for payload in XSS[:3]:
            assert payload in text.replace("\n", ""), payload
        assert "</script><script>window.pwned = 'breakout'</script><!--" in text
        assert v.page.inner_text("#h1") == XSS[3]
        assert v.page.title() == XSS[3] + " · ptree"
        assert "<script>x()</script>" in v.page.inner_text("#facts")

    def test_content_security_policy_stops_foreign_scripts(self, open_page: Any) -> None:
        """Defence in depth: even a script element added to the page does not run, and
        an image from the network is not fetched (the page's CSP allows only its own
        script and data: images)."""
        v = open_page(kyoto())
        v.page.evaluate(
            """() => { const s = document.createElement('script');
                       s.textContent = 'window.pwned = 1'; document.body.appendChild(s);
                       const i = document.createElement('img');
                       i.src = 'https://example.invalid/x.png'; document.body.appendChild(i); }"""
        )
        v.page.wait_for_timeout(200)
        assert v.page.evaluate("window.pwned") is None
        # Chromium reports the image request, refused by the page itself (not by the
        # test's router, which would say "net::ERR_FAILED").
        assert v.failed == {"https://example.invalid/x.png": "csp"}
        v.requests.remove("https://example.invalid/x.png")

    def test_bidi_and_control_characters_are_shown_as_markers(self, open_page: Any) -> None:
        """U+202E, U+2066/U+2069 and ESC cannot reorder or hide text: each is a visible
        marker and the character itself is not on the page."""
        v = open_page(hostile())
        a1 = v.card("a1").inner_text()
        assert "invoiceU+202Egnp.exe" in a1
        assert "U+2066hiddenU+2069" in a1
        assert "ESC[31mred" in a1
        body = v.page.evaluate("document.body.innerText")
        for ch in ("\u202e", "\u2066", "\u2069", "\x1b"):
            assert ch not in body

    def test_images_inline_only_as_safe_data(self, open_page: Any) -> None:
        """A PNG is shown inline from a data: URL; an SVG and a bad base64 string are
        named, not loaded."""
        v = open_page(hostile())
        v.page.click("#go-end")
        img = v.card("img").locator("img")
        assert img.count() == 1
        assert img.evaluate("i => i.complete && i.naturalWidth") == 1
        assert (img.get_attribute("src") or "").startswith("data:image/png;base64,iVBOR")
        bad = v.card("badimg")
        assert bad.locator("img").count() == 0
        assert "[image: image/svg+xml]" in bad.inner_text()

    def test_script_json_escapes(self) -> None:
        """The embedded JSON has no '<', '>', '&', U+2028/9 or lone surrogate left, and
        reads back to the same value."""
        value = {"t": "</script><!-- & \u2028\u2029 \ud800", "k": ["<", ">"]}
        text = script_json(value)
        for ch in ("<", ">", "&", "\u2028", "\u2029", "\ud800"):
            assert ch not in text
        assert json.loads(text) == value


class TestFixtures:
    @pytest.mark.parametrize(
        ("name", "messages"),
        # Every line of these v1 files is on one straight path (no ids: migration chains
        # them): the messages on the path are the file's "message" lines.
        [("large-session.jsonl", 914), ("before-compaction.jsonl", 990)],
    )
    def test_real_pi_session(
        self, open_page: Any, pi_fixtures: Path, name: str, messages: int
    ) -> None:
        """A real Pi file: the message count is right, the first card is the file's first
        user message, and End shows the last line's entry as the current leaf."""
        lines = [json.loads(x) for x in (pi_fixtures / name).read_text().splitlines()]
        assert sum(1 for x in lines if x.get("type") == "message") == messages
        first_user = next(x for x in lines if x.get("type") == "message")
        tree = ptree.load(pi_fixtures / name)
        v = open_page(tree, name=name + ".html")
        assert v.page.inner_text("#path-messages") == f"{messages:,}"
        first = v.page.locator("#cards > .card").first
        assert first.locator(".bubble").inner_text() == first_user["message"]["content"][0]["text"]
        v.page.click("#go-end")
        last = v.page.locator("#cards > .card").last
        assert last.get_attribute("data-id") == tree.leaf_id
        assert "current leaf" in last.inner_text()
        if name == "large-session.jsonl":
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            v.page.click("#go-start")
            v.page.screenshot(path=str(ARTIFACTS / "viewer-first-screen.png"))

    def test_compaction_divider(self, open_page: Any, pi_fixtures: Path) -> None:
        """before-compaction.jsonl's two compactions are drawn as dividers on the path,
        found by searching their summaries' opening words."""
        lines = [
            json.loads(x)
            for x in (pi_fixtures / "before-compaction.jsonl").read_text().splitlines()
        ]
        summaries = [x["summary"] for x in lines if x.get("type") == "compaction"]
        assert len(summaries) == 2
        v = open_page(ptree.load(pi_fixtures / "before-compaction.jsonl"))
        v.page.fill("#search", summaries[1][:40])
        v.page.press("#search", "Enter")
        focus = v.page.locator("#cards > .card.focus")
        assert focus.get_attribute("data-kind") == "compaction"
        assert "Compacted" in focus.inner_text()


class TestPi16Kinds:
    def test_system_usage_and_context_edits(self, open_page: Any) -> None:
        """Pi 1.6's system message shows its prompt, sections and tool changes; a usage
        entry its provider, tokens and cost; a context edit its target and new content
        (or that it leaves the target out); each is found by search."""
        from tests.test_markdown import TestPi16Kinds as Markdown

        v = open_page(Markdown().tree())
        assert v.path_ids() == ["s", "u", "a", "g", "x", "y"]
        system = v.card("s").inner_text()
        assert "System prompt" in system
        assert "You are a coding agent." in system
        assert "tools + read" in system
        assert "tools − bash" in system
        assert "section skills removed" in system
        usage = v.card("g").inner_text()
        assert "Usage · cache_warm" in usage
        assert "anthropic/claude-sonnet-4-5, 50,000 tokens, $0.0150 (warm)" in usage
        edit = v.card("x").inner_text()
        assert "Context edit" in edit
        assert "replaces what a gives the model" in edit
        assert "The end." in edit
        assert "left out of the model's context" in v.card("y").inner_text()
        assert v.card("x").get_attribute("data-kind") == "context_edit"
        v.page.fill("#search", "The end")
        v.page.press("#search", "Enter")
        assert v.page.locator("#cards > .card.focus").get_attribute("data-id") == "x"


class TestScale:
    def test_big_branched_session_stays_windowed(self, open_page: Any) -> None:
        """20,000 entries in 200 branches: the page keeps at most a few hundred cards and
        tree rows in the document, scrolls further on demand, and search still jumps."""
        t = ptree.SessionTree()
        for b in range(200):
            t = t.move_to(None if b == 0 else "m0-50")
            for k in range(100 if b == 0 else 99):
                t = t.append(
                    {"role": "user", "content": f"branch {b} step {k}"},
                    id=f"m{b}-{k}",
                    timestamp=T0,
                )
        assert len(t) == 100 + 199 * 99
        v = open_page(t, name="big.html")
        counts = v.page.evaluate(
            "[document.querySelectorAll('.card').length, document.querySelectorAll('.row').length]"
        )
        assert counts[0] <= 400
        assert counts[1] <= 200
        v.page.fill("#search", "branch 123 step 98")
        v.page.press("#search", "Enter")
        assert v.page.get_attribute("#cards > .card.focus", "data-id") == "m123-98"
        ids = v.path_ids()
        assert ids[-1] == "m123-98"
        # the path: m0-0 … m0-50, then m123-0 … m123-98
        assert v.page.inner_text("#path-messages") == "150"
        v.page.click("#go-start")
        assert v.path_ids()[0] == "m0-0"
        for _ in range(30):
            if "m123-0" in v.path_ids():
                break
            v.page.mouse.move(900, 500)
            v.page.mouse.wheel(0, 3000)
            v.page.wait_for_timeout(100)
        ids = v.path_ids()
        at = ids.index("m123-0")
        assert ids[at - 1] == "m0-50"
        assert len(ids) <= 400
        # from the end upwards, the earlier part comes back as it scrolls into view
        v.page.click("#go-end")
        assert v.path_ids()[-1] == "m123-98"
        for _ in range(30):
            if v.path_ids()[0] == "m0-0":
                break
            v.page.mouse.wheel(0, -3000)
            v.page.wait_for_timeout(100)
        assert v.path_ids()[0] == "m0-0"


class TestPage:
    def test_self_contained_and_linear(self, pi_fixtures: Path, tmp_path: Path) -> None:
        """No URL to fetch anything is in the page, a CSP forbids every request, and the
        page is about the size of the session written as a Pi file (measured: 1.05x and
        1.00x for the two fixtures; the bound allows 1.15x plus 60 kB of viewer)."""
        for name in ("large-session.jsonl", "before-compaction.jsonl"):
            tree = ptree.load(pi_fixtures / name)
            ptree.dump(tree, tmp_path / name)
            page = to_html(tree)
            assert "default-src 'none'" in page
            for needle in ('src="http', 'href="http', "url(http", "@import", "<link"):
                assert needle not in page
            assert len(page.encode()) <= 1.15 * (tmp_path / name).stat().st_size + 60_000

    def test_size_grows_linearly(self) -> None:
        """Ten times the entries, about ten times the page (the viewer's part fixed)."""

        def page(n: int) -> int:
            t = ptree.SessionTree()
            for k in range(n):
                t = t.append({"role": "user", "content": f"message {k:06d} <tag>"}, id=f"e{k:06d}")
            return len(to_html(t).encode())

        empty = len(to_html(ptree.SessionTree()).encode())
        small, big = page(1_000) - empty, page(10_000) - empty
        assert 9.9 * small <= big <= 10.1 * small

    def test_lone_surrogates_still_encode(self) -> None:
        """A lone surrogate (valid JSON, kept by Pi) in a name or a message: the page is
        still valid UTF-8, and the data keeps it as an escape JSON reads back."""
        t = ptree.SessionTree().append({"role": "user", "content": "a\ud800b"}, id="u")
        page = to_html(t.append_session_info("n\udfff"))
        page.encode("utf-8")
        data = page.split('id="ptree-data">')[1].split("</script>")[0]
        assert json.loads(data)["entries"][0]["message"]["content"] == "a\ud800b"

    def test_unknown_show_entry(self) -> None:
        """Opening on an id that is not in the tree is an UnknownEntryError."""
        with pytest.raises(ptree.UnknownEntryError):
            to_html(kyoto(), show="nope")
