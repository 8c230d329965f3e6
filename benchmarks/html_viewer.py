"""How fast the HTML viewer opens a big session in headless Chromium.

    python benchmarks/html_viewer.py            # 5 and 50 MB sessions, 3 runs each
    python benchmarks/html_viewer.py --smoke    # one 1 MB session, one run

Each session is built from the real Pi messages (``messages.py``), cycled, with a new
branch every 200 entries (hanging off a random earlier entry, seeded), so the page has
a tree to draw.  For each size: the time ``to_html`` takes and the page's size, then,
in Debian's Chromium (``/usr/bin/chromium``, driven by playwright, every request but
the file refused), the median wall time from ``page.goto`` to the first screen being
drawn (the viewer sets ``data-ready`` after its first render), the time a search over
every entry takes to jump to its hit, and the time a branch switch takes.

Baseline, in the same run, taking turns: the same bytes of JSON in a page with no
viewer, timed from ``page.goto`` to its ``load`` event: what any page holding the
session costs the browser to read and parse.  The viewer's own share is the
difference; ``viewer script`` is its in-page time (``performance`` marks: parse the
JSON, index the tree, draw the first screen).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from messages import load_pool  # noqa: E402

import ptree  # noqa: E402
from ptree.formats.html import to_html  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]


def session(megabytes: float) -> ptree.SessionTree:
    """About ``megabytes`` of real messages, branching every 200 entries."""
    pool = load_pool()
    n = int(megabytes * 1e6 / pool.mean_json_bytes)
    rng = random.Random(1)
    t = ptree.SessionTree()
    ids: list[str] = []
    for k, message in enumerate(pool.take(n)):
        if k and k % 200 == 0:
            t = t.move_to(ids[rng.randrange(len(ids))])
        if k == n - 1:
            # a sibling of e{n//3 + 1}: the search hit has a branch switch to click
            t = t.move_to(ids[n // 3])
            message = {"role": "user", "content": "needle-in-the-haystack"}
        t = t.append(message, id=f"e{k}")
        ids.append(f"e{k}")
    return t.move_to(ids[n // 2])


def measure(megabytes: float, runs: int) -> dict[str, float]:
    from playwright.sync_api import sync_playwright

    tree = session(megabytes)
    started = time.perf_counter()
    page_text = to_html(tree)
    export_s = time.perf_counter() - started
    data = page_text.split('<script type="application/json" id="ptree-data">')[1]
    data = data.split("</script>")[0]
    bare = f'<!doctype html><meta charset="utf-8"><script type="application/json">{data}</script>'
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "s.html"
        path.write_text(page_text, encoding="utf-8")
        base_path = Path(d) / "bare.html"
        base_path.write_text(bare, encoding="utf-8")
        url, base_url = path.as_uri(), base_path.as_uri()
        first, baseline, script, search, switch = [], [], [], [], []
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            for _ in range(runs):
                context = browser.new_context(viewport={"width": 1280, "height": 860})
                context.route(
                    "**/*",
                    lambda r: r.continue_() if r.request.url in (url, base_url) else r.abort(),
                )
                page = context.new_page()
                t0 = time.perf_counter()
                page.goto(base_url, wait_until="load")
                baseline.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                page.goto(url)
                page.wait_for_selector("body[data-ready='1']", timeout=120_000)
                first.append(time.perf_counter() - t0)
                script.append(
                    page.evaluate(
                        "performance.getEntriesByName('ptree-ready')[0].startTime"
                        " - performance.getEntriesByName('ptree-start')[0].startTime"
                    )
                    / 1000
                )
                page.fill("#search", "needle-in-the-haystack")
                t0 = time.perf_counter()
                page.press("#search", "Enter")
                page.wait_for_selector(f"#cards > .card.focus[data-id='e{len(tree) - 1}']")
                search.append(time.perf_counter() - t0)
                needle = page.locator("#cards > .card.focus")
                before = page.evaluate("document.body.dataset.leaf")
                t0 = time.perf_counter()
                needle.locator(".sw-prev").click()
                page.wait_for_function(f"document.body.dataset.leaf !== {before!r}")
                switch.append(time.perf_counter() - t0)
                context.close()
            browser.close()
    return {
        "entries": len(tree),
        "page_mb": len(page_text.encode()) / 1e6,
        "export_s": export_s,
        "first_screen_s": statistics.median(first),
        "baseline_s": statistics.median(baseline),
        "script_s": statistics.median(script),
        "search_s": statistics.median(search),
        "switch_s": statistics.median(switch),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--smoke", action="store_true", help="one 1 MB session, one run")
    args = parser.parse_args()
    sizes, runs = ([1.0], 1) if args.smoke else ([5.0, 50.0], 3)
    print(
        "| session | entries | page | to_html | first screen | baseline: bare page | "
        "viewer script | search (all entries) | branch switch |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for mb in sizes:
        r = measure(mb, runs)
        print(
            f"| {mb:g} MB | {r['entries']:,.0f} | {r['page_mb']:.1f} MB | {r['export_s']:.2f} s "
            f"| {r['first_screen_s']:.2f} s | {r['baseline_s']:.2f} s "
            f"| {r['script_s']:.2f} s | {r['search_s'] * 1000:.0f} ms "
            f"| {r['switch_s'] * 1000:.0f} ms |"
        )


if __name__ == "__main__":
    main()
