"""Make the screenshot of the HTML viewer (docs/viewer.png) that the command-line guide
(docs/how-to/command-line.md) shows.

    python docs/screenshot.py

The session: the first 60 entries of the real Pi session
``shared/fixtures/pi/large-session.jsonl``, with a second branch added at its first
real request, a label and a name, exported with ``ptree.formats.to_html`` and photographed in
Debian's Chromium (``/usr/bin/chromium``) through playwright.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import ptree  # noqa: E402

FIXTURE = ROOT.parent / "shared" / "fixtures" / "pi" / "large-session.jsonl"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]


def session() -> ptree.SessionTree:
    full = ptree.load(FIXTURE)
    t = ptree.SessionTree.from_entries(full.entries()[:60], header=full.header)
    ask = t.entries()[3]  # the first real request
    t = t.move_to(ask.parent_id)
    t = t.append(
        {"role": "user", "content": "Skip the docs: port user-message-selector.ts right away."}
    )
    t = t.append(
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "Start from the oauth selector's pattern."},
                {"type": "text", "text": "Starting with the closest existing selector."},
                {
                    "type": "toolCall",
                    "id": "call_1",
                    "name": "read",
                    "arguments": {"path": "packages/coding-agent/src/tui/oauth-selector.ts"},
                },
            ],
            "model": "claude-sonnet-4-5",
            "provider": "anthropic",
        }
    )
    t = t.append_label(ask.id, "the plan we kept")
    t = t.append_session_info("Port the user-message selector")
    return t.move_to(full.entries()[59].id)


def main() -> None:
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as d:
        page_path = Path(d) / "viewer.html"
        page_path.write_text(ptree.formats.to_html(session()), encoding="utf-8")
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
            page = browser.new_page(viewport={"width": 1360, "height": 820})
            page.goto(page_path.as_uri())
            page.wait_for_selector("body[data-ready='1']")
            page.fill("#search", "selector")
            page.wait_for_timeout(400)
            page.press("#search", "Escape")
            page.wait_for_timeout(200)
            page.screenshot(path=str(ROOT / "docs" / "viewer.png"))
            browser.close()


if __name__ == "__main__":
    main()
