"""A session as one self-contained HTML page: the conversation, and the whole tree.

:func:`to_html` writes a single file that opens from disk, offline, in any current
browser: the style sheet and the script are inline, images are ``data:`` URLs, and a
Content-Security-Policy forbids every network request and every script but the
viewer's own.  The page shows

- the current path as a conversation: user and assistant messages, tool calls with
  their arguments, tool results (long ones collapsed), thinking (collapsed), images,
  compactions and branch summaries as dividers, model and thinking-level changes,
  labels, the session's name and header;
- at every entry that has siblings, a switch to the other branches: choosing one shows
  the path down to that branch's newest leaf (the leaf written last below it);
- a side panel drawing the whole tree (a chain of single children stays in one column,
  indentation grows where the conversation branches), where clicking an entry shows a
  path through it, with the current leaf marked;
- a search over every entry of every branch (text, thinking, tool names, arguments,
  results, labels), stepping through the hits and switching branch as needed.

Safety: the session goes into the page as JSON inside a
``<script type="application/json">`` element, with ``<``, ``>``, ``&``, U+2028 and
U+2029 written as ``\\uXXXX`` escapes, so no text can end that element; the viewer
puts text on the page only as text nodes (never as HTML), never makes a link from
session text, and shows control and bidirectional-override characters as visible
``U+202E``-style markers.

Size: the page is the session's entries (minus the opaque thinking signatures and
partial-JSON copies of tool arguments) plus about 40 kB of viewer, so it grows
linearly with the session.  The viewer renders only what is on screen (a window of
cards on the path, the visible rows of the tree), so sessions of 10^5 entries stay
responsive.

Imports: the core only.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
from collections.abc import Mapping
from functools import cache
from importlib import resources
from typing import Any

from ..errors import UnknownEntryError
from ..tree import SessionTree

__all__ = ["to_html"]

# Fields that only repeat or sign what the entry already holds, dropped to keep the
# page small: a thinking block's signature, a tool call's partial JSON.
_DROPPED_BLOCK_KEYS = frozenset({"thinkingSignature", "textSignature", "partialJson"})

# In a JSON string these can end the <script> element (``</script>``, ``<!--``), or
# be taken as line ends by older JavaScript parsers; written as escapes they are the
# same JSON.
_SCRIPT_SAFE = (
    ("<", "\\u003c"),
    (">", "\\u003e"),
    ("&", "\\u0026"),
    ("\u2028", "\\u2028"),
    ("\u2029", "\\u2029"),
)
# A lone surrogate (Pi keeps them: "\\ud800" is valid JSON) cannot be written as
# UTF-8: it goes into the page as its escape, which JSON.parse reads back.
_SURROGATE = re.compile("[\ud800-\udfff]")


@cache
def _asset(name: str) -> str:
    return resources.files(__package__).joinpath("viewer", name).read_text(encoding="utf-8")


def _csp_hash(text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


def _slim(entry: dict[str, Any]) -> dict[str, Any]:
    # The entry's frozen values are shared with the tree: a slimmed message is a new
    # dict, never the old one changed.
    message = entry.get("message")
    if isinstance(message, Mapping):
        blocks = message.get("content")
        if isinstance(blocks, (list, tuple)) and any(
            isinstance(b, Mapping) and not _DROPPED_BLOCK_KEYS.isdisjoint(b) for b in blocks
        ):
            slim = [
                {k: v for k, v in b.items() if k not in _DROPPED_BLOCK_KEYS}
                if isinstance(b, Mapping)
                else b
                for b in blocks
            ]
            entry["message"] = {**message, "content": slim}
    return entry


def script_json(value: Any) -> str:
    """``value`` as JSON that is safe inside an HTML ``<script>`` element.

    ``<``, ``>``, ``&``, U+2028, U+2029 and lone surrogates are written as ``\\u``
    escapes: the text can neither close the element nor fail to encode as UTF-8, and
    ``JSON.parse`` reads it back unchanged.  Cost: O(size of the value).

    >>> script_json({"t": "</script><b>&"})
    '{"t":"\\\\u003c/script\\\\u003e\\\\u003cb\\\\u003e\\\\u0026"}'
    """
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    # str.replace runs at memory speed; str.translate with a table is 10x slower on
    # non-ASCII text (1.5 s for 5 MB measured).
    for char, escape in _SCRIPT_SAFE:
        if char in text:
            text = text.replace(char, escape)
    if _SURROGATE.search(text):
        text = _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    return text


def to_html(tree: SessionTree, *, show: str | None = None) -> str:
    """The whole session as one self-contained HTML page (see the module doc).

    Cost: O(size of the session); the page is about as big as the session file.

    Args:
        tree: the session.
        show: the entry whose path the page opens on (default: the tree's leaf).

    Returns:
        the page, as text (write it as UTF-8).

    Raises:
        UnknownEntryError: ``show`` is not an entry of the tree.

    >>> page = to_html(SessionTree().append({"role": "user", "content": "<b>hi</b>"}))
    >>> page.startswith("<!doctype html>"), "<b>hi</b>" in page
    (True, False)
    """
    if show is not None and show not in tree:
        raise UnknownEntryError(show, f"no entry {show!r} to show")
    header = tree.header
    name = tree.session_name
    payload = {
        "format": "ptree-html/1",
        "header": header.to_json() if header is not None else None,
        "name": name,
        "leaf": tree.leaf_id,
        "show": show,
        "labels": tree.labels(),
        "entries": [_slim(e.json_fields()) for e in tree.entries()],
    }
    css = _asset("viewer.css")
    js = _asset("viewer.js")
    # The viewer titles a session without a name by its first request, once it runs.
    title = name or (f"Session {header.id}" if header is not None else "Session")
    csp = (
        "default-src 'none'; img-src data:; "
        f"style-src {_csp_hash(css)}; script-src {_csp_hash(js)}; "
        "base-uri 'none'; form-action 'none'"
    )
    return _PAGE.format(
        csp=html.escape(csp, quote=False),
        title=html.escape(_SURROGATE.sub("\ufffd", title) + " · ptree"),
        css=css,
        data=script_json(payload),
        js=js,
    )


_PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="{csp}">
<meta name="referrer" content="no-referrer">
<meta name="generator" content="ptree">
<title>{title}</title>
<style>{css}</style>
</head>
<body>
<header id="bar">
<span class="logo">ptree</span>
<button id="toggle-tree" title="show or hide the tree">☰ Tree</button>
<span class="title" id="title"></span>
<div id="search-box">
<input id="search" type="search" placeholder="Search all branches  ( / )" autocomplete="off"
 spellcheck="false" aria-label="search every entry">
<span id="search-count" aria-live="polite"></span>
<button class="navbtn" id="search-prev" disabled aria-label="previous hit">↑</button>
<button class="navbtn" id="search-next" disabled aria-label="next hit">↓</button>
<div id="results" role="listbox"></div>
</div>
</header>
<div id="app">
<aside id="side" aria-label="the whole tree">
<div id="side-head"><b>Tree</b><span id="side-count"></span></div>
<div id="tree" tabindex="0"><div id="tree-spacer"></div></div>
</aside>
<main id="main">
<div id="conv">
<section id="head"><h1 id="h1"></h1><div class="facts" id="facts"></div></section>
<div id="pathbar">
<span class="grow" id="path-info"></span>
<button class="navbtn" id="go-start">Top</button>
<button class="navbtn" id="go-end">End</button>
<button class="navbtn" id="go-leaf">Current leaf</button>
</div>
<div class="gap-note" id="top-note"></div>
<div class="sentinel" id="top-sentinel"></div>
<div id="cards"></div>
<div class="sentinel" id="bottom-sentinel"></div>
<div class="gap-note" id="bottom-note"></div>
</div>
</main>
</div>
<script type="application/json" id="ptree-data">{data}</script>
<script>{js}</script>
</body>
</html>
"""
