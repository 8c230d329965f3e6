"""Pictures of a session tree: an indented text drawing, JSON, Graphviz DOT, Mermaid.

The text drawing follows Pi's tree view: a chain of single children is drawn as a
straight column (no indent per step), and indentation grows only where the
conversation branches, so a 100,000-entry linear session stays readable.  Every
line shows whether the entry is on the current path (``*``), its id, its label
(``[label]``), its kind and a one-line preview of its text; the leaf is marked.

Every function here is iterative and O(n) in the number of entries: no recursion,
so paths 100,000 deep are fine.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..entries import BranchSummary, Compaction, Entry, MessageEntry
from ..tree import SessionTree
from .text import entry_preview, message_role, one_line

__all__ = ["render_dot", "render_mermaid", "render_text", "tree_to_json"]

# ANSI styles; used only when the caller asks for colour (a terminal, no NO_COLOR).
_RESET = "\x1b[0m"
_BOLD = "\x1b[1m"
_DIM = "\x1b[2m"
_GREEN = "\x1b[32m"
_YELLOW = "\x1b[33m"
_CYAN = "\x1b[36m"

_UNICODE = {
    "tee": "├─ ",
    "last": "└─ ",
    "pipe": "│  ",
    "space": "   ",
    "leaf": "← leaf",
    "more": "…",
}
_ASCII = {
    "tee": "|- ",
    "last": "`- ",
    "pipe": "|  ",
    "space": "   ",
    "leaf": "<- leaf",
    "more": "...",
}


def _children_map(tree: SessionTree) -> dict[str | None, list[Entry]]:
    """Parent id (``None`` for the roots) to children in insertion order.  O(n)."""
    kids: dict[str | None, list[Entry]] = {}
    for entry in tree.entries():
        kids.setdefault(entry.parent_id, []).append(entry)
    return kids


def _path_ids(tree: SessionTree) -> set[str]:
    return {e.id for e in tree.path()} if tree.leaf is not None else set()


def _kind(entry: Entry) -> str:
    """The short kind of an entry: a message's role, else the entry type."""
    if isinstance(entry, MessageEntry):
        return message_role(entry)
    return entry.type


def _folded(chain: list[Entry], keep: set[str], fold: int) -> Iterator[Entry | tuple[Entry, int]]:
    """The chain with each run of more than ``fold`` unremarkable entries cut short.

    Yields entries, and in place of each hidden middle part its first entry and the
    number of entries hidden.  Entries in ``keep`` (the leaf, labelled entries) are
    never hidden.
    """
    head = (fold + 1) // 2
    tail = fold // 2
    run: list[Entry] = []

    def flush() -> Iterator[Entry | tuple[Entry, int]]:
        if len(run) > fold:
            yield from run[:head]
            yield run[head], len(run) - head - tail
            yield from run[len(run) - tail :]
        else:
            yield from run
        run.clear()

    for entry in chain:
        if entry.id in keep:
            yield from flush()
            yield entry
        else:
            run.append(entry)
    yield from flush()


def render_text(
    tree: SessionTree,
    *,
    color: bool = False,
    ascii_only: bool = False,
    width: int | None = None,
    fold: int | None = None,
) -> Iterator[str]:
    """The tree as an indented text drawing, one line at a time (no newlines).

    A line is ``M PREFIX ID [LABEL] KIND: PREVIEW`` where ``M`` is ``*`` on the
    current path, ``PREFIX`` the branch lines (``├─``, ``└─``, ``│``), and the leaf
    ends with ``← leaf``.  Children are drawn in insertion order.  Several roots are
    drawn as branches of an invisible top.  Branches nested deeper than 24 levels
    draw their last 24 levels of branch lines after ``…N`` (N levels not drawn), so
    each line stays short and the output is linear in the number of entries.

    Cost: O(n) time and memory, iterative; lines are produced lazily, so printing
    starts at once even for a huge tree.

    Args:
        tree: the tree to draw.
        color: add ANSI colours (bold current path, dim ids, yellow labels).
        ascii_only: draw with ``|-``, ```-`` and ``|`` instead of box-drawing characters.
        width: the preview is shortened so that a line fits this many columns
            (default: previews of up to 80 characters).
        fold: draw at most this many entries of a linear run of unremarkable
            entries, replacing the middle by ``… N more``; the leaf, labelled
            entries, compactions and branch summaries always stay visible.  ``None``
            draws everything.

    >>> t = SessionTree().append({"role": "user", "content": "Which plan?"})
    >>> t = t.append({"role": "assistant", "content": "Plan A."}).move_to("e1")
    >>> t = t.append({"role": "assistant", "content": "Plan B."}).append_label("e2", "old")
    >>> print("\\n".join(render_text(t, ascii_only=True)))
    * e1 user: Which plan?
      |- e2 [old] assistant: Plan A.
    * `- e3 assistant: Plan B.
    *    e4 label e2: old  <- leaf
    """
    glyph = _ASCII if ascii_only else _UNICODE
    kids = _children_map(tree)
    on_path = _path_ids(tree)
    labels = tree.labels()
    leaf_id = tree.leaf_id
    # Landmarks a fold never hides: the leaf, labelled entries, summaries.
    keep = set(labels)
    if leaf_id is not None:
        keep.add(leaf_id)
    if fold is not None:
        keep.update(e.id for e in tree.entries() if isinstance(e, (Compaction, BranchSummary)))

    leaf_tail = f"  {glyph['leaf']}"

    def line(entry: Entry, prefix: str) -> str:
        eid = entry.id
        # Ids and labels come from the file as they are: a newline or an escape
        # sequence in one must not break the drawing or reach the terminal.
        shown = one_line(eid)
        label = labels.get(eid)
        label_text = f"[{one_line(label)}] " if label else ""
        room = (
            80 if width is None else max(20, width - len(prefix) - len(shown) - len(label_text) - 4)
        )
        preview = entry_preview(entry, room)
        tail = leaf_tail if eid == leaf_id else ""
        if not color:
            return f"{'*' if eid in on_path else ' '} {prefix}{shown} {label_text}{preview}{tail}"
        mark = "*" if eid in on_path else " "
        kind, sep, rest = preview.partition(": ")
        strong = _BOLD if eid in on_path else ""
        return (
            f"{_GREEN}{mark}{_RESET} {_DIM}{prefix}{_RESET}{_DIM}{shown}{_RESET} "
            + (f"{_YELLOW}{label_text}{_RESET}" if label_text else "")
            + f"{strong}{_CYAN}{kind}{sep}{_RESET}{strong}{rest}{_RESET}"
            + (f"{_GREEN}{tail}{_RESET}" if tail else "")
        )

    # A stack of chain starts: (first entry, its line prefix, the prefix below it).
    # Prefixes are chains of segments, drawn to at most _MAX_LEVELS: a string per
    # prefix would grow a segment per branch level, and a comb of n entries (each with
    # a side branch) would print O(n^2) characters.
    def text_of(p: _Prefix) -> str:
        return "" if p is None else _draw_prefix(p, glyph["more"])

    def step(p: _Prefix, segment: str, level: int) -> _Prefix:
        return _prefix(p, glyph[segment], level)

    roots = kids.get(None, [])
    stack: list[tuple[Entry, _Prefix, _Prefix]] = []
    if len(roots) == 1:
        stack.append((roots[0], None, None))
    else:
        for i in range(len(roots) - 1, -1, -1):
            last = i == len(roots) - 1
            stack.append(
                (
                    roots[i],
                    step(None, "last" if last else "tee", 1),
                    step(None, "space" if last else "pipe", 1),
                )
            )
    while stack:
        first, prefix_node, below_node = stack.pop()
        prefix, below = text_of(prefix_node), text_of(below_node)
        chain = [first]
        children = kids.get(first.id, ())
        while len(children) == 1:
            chain.append(children[0])
            children = kids.get(children[0].id, ())
        items: Iterator[Entry | tuple[Entry, int]] = (
            iter(chain) if fold is None else _folded(chain, keep, max(fold, 2))
        )
        for n, item in enumerate(items):
            pre = prefix if n == 0 else below
            if isinstance(item, tuple):
                # A chain is on the current path from its top down, or not at all.
                mark = "*" if item[0].id in on_path else " "
                more = f"{glyph['more']} {item[1]} more"
                yield f"{mark} {pre}{_DIM}{more}{_RESET}" if color else f"{mark} {pre}{more}"
            else:
                yield line(item, pre)
        level = 1 if below_node is None else below_node[2] + 1
        for i in range(len(children) - 1, -1, -1):
            last = i == len(children) - 1
            stack.append(
                (
                    children[i],
                    step(below_node, "last" if last else "tee", level),
                    step(below_node, "space" if last else "pipe", level),
                )
            )


# A line prefix: (the prefix above it, this level's segment, its number of levels, and
# its last _MAX_LEVELS segments, which are what is drawn).
_Prefix = tuple[Any, str, int, tuple[str, ...]] | None

_MAX_LEVELS = 24
"""Branch levels drawn in full; deeper lines show the last ones after ``…N``."""


def _prefix(above: _Prefix, segment: str, level: int) -> _Prefix:
    """The prefix one level below ``above``, ending in ``segment``.  O(_MAX_LEVELS)."""
    segments = (segment,) if above is None else (*above[3][1 - _MAX_LEVELS :], segment)
    return (above, segment, level, segments)


def _draw_prefix(p: _Prefix, more: str) -> str:
    """The text of a prefix: its last :data:`_MAX_LEVELS` segments, after ``…N`` when
    N levels above them are not drawn.  O(_MAX_LEVELS)."""
    if p is None:
        return ""
    drawn = "".join(p[3])
    hidden = p[2] - len(p[3])
    return f"{more}{hidden} {drawn}" if hidden > 0 else drawn


def tree_to_json(tree: SessionTree) -> dict[str, Any]:
    """The tree as one JSON-ready dict, flat so that any depth is fine.

    ``{"header", "leafId", "sessionName", "entries": [...]}`` where each entry is
    ``{"id", "parentId", "type", "kind", "preview", "depth", "onPath", "children",
    "label"?}`` in insertion order (``kind`` is a message's role, else the type;
    ``children`` lists ids; ``label`` only when set).  The entries themselves, in
    Pi's file format, are what ``ptree fork`` and the session file keep; this is a
    picture for programs.

    Cost: O(n).

    Args:
        tree: the tree.

    >>> t = SessionTree().append({"role": "user", "content": "hi"})
    >>> tree_to_json(t)["entries"][0]["preview"]
    'user: hi'
    """
    kids = _children_map(tree)
    on_path = _path_ids(tree)
    labels = tree.labels()
    out: list[dict[str, Any]] = []
    for entry in tree.entries():
        item: dict[str, Any] = {
            "id": entry.id,
            "parentId": entry.parent_id,
            "type": entry.type,
            "kind": _kind(entry),
            "preview": entry_preview(entry, 120),
            "depth": tree.depth(entry.id),
            "onPath": entry.id in on_path,
            "children": [c.id for c in kids.get(entry.id, ())],
        }
        if entry.id in labels:
            item["label"] = labels[entry.id]
        out.append(item)
    header = tree.header
    return {
        "header": None if header is None else header.to_json(),
        "leafId": tree.leaf_id,
        "sessionName": tree.session_name,
        "entries": out,
    }


def _dot_quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _dot_label(title: str, preview: str) -> str:
    """A DOT label of two lines, each already on one line and printable.

    Graphviz decodes HTML entities in labels (``&amp;`` shows ``&``, ``&#1;``
    writes a control character into the SVG, which XML refuses), so ``&`` is
    escaped too.
    """
    return _dot_quote(f"{title}\n{preview}".replace("&", "&amp;"))


def _dot_name(entry_id: str) -> str:
    """A DOT node name for an entry id: the id itself, quoted, when it is printable.

    Graphviz refuses a NUL and writes other control characters raw into the SVG
    (``<title>``), so in an id that has them each becomes ``\\uXXXX`` and each
    backslash is doubled: two different ids never share a name.
    """
    if entry_id.isprintable() and "\\" not in entry_id:
        return _dot_quote(entry_id)
    return _dot_quote(
        "".join(
            "\\\\" if c == "\\" else c if c.isprintable() else f"\\u{ord(c):04x}" for c in entry_id
        )
    )


def render_dot(tree: SessionTree, *, preview_width: int = 48) -> Iterator[str]:
    """The tree as a Graphviz DOT digraph, one line at a time.

    Each entry is a box ``id [label]`` over ``kind: preview``; an edge goes from
    each parent to each child; the current path is drawn bold and blue and the leaf
    filled.  Render it with ``dot -Tsvg``.

    Cost: O(n).

    Args:
        tree: the tree drawn.
        preview_width: the most characters of each entry's preview.

    >>> t = SessionTree().append({"role": "user", "content": 'say "hi"'})
    >>> print("\\n".join(render_dot(t)))  # doctest: +ELLIPSIS
    digraph ptree {
    ...
      "e1" [label="e1\\nuser: say \\"hi\\"", color="#1f6fb2", penwidth=2, ...];
    }
    """
    on_path = _path_ids(tree)
    labels = tree.labels()
    leaf_id = tree.leaf_id
    yield "digraph ptree {"
    yield "  rankdir=TB;"
    yield '  node [shape=box, style=rounded, fontname="Helvetica", fontsize=10];'
    yield "  edge [arrowsize=0.6];"
    for entry in tree.entries():
        label = labels.get(entry.id)
        title = one_line(entry.id + (f" [{label}]" if label else ""))
        attrs = [f"label={_dot_label(title, entry_preview(entry, preview_width))}"]
        if entry.id in on_path:
            attrs.append('color="#1f6fb2", penwidth=2')
        if entry.id == leaf_id:
            attrs.append('style="rounded,filled", fillcolor="#dcebf7"')
        yield f"  {_dot_name(entry.id)} [{', '.join(attrs)}];"
        if entry.parent_id is not None:
            edge = f"  {_dot_name(entry.parent_id)} -> {_dot_name(entry.id)}"
            if entry.id in on_path:
                edge += ' [color="#1f6fb2", penwidth=2]'
            yield edge + ";"
    yield "}"


# Mermaid's entity codes: a quote would end the label, ``<``/``>``/``&`` would be
# read as HTML (``&amp;`` would show ``&``), ``#`` would start an entity code, and
# a backtick at the start makes a Markdown string.
_MERMAID_ESCAPES = str.maketrans(
    {'"': "#quot;", "<": "#lt;", ">": "#gt;", "#": "#35;", "&": "#38;", "`": "#96;"}
)


def render_mermaid(tree: SessionTree, *, preview_width: int = 48) -> Iterator[str]:
    """The tree as a Mermaid flowchart, one line at a time.

    Node names are ``n0``, ``n1``, … in insertion order (entry ids may hold
    characters Mermaid does not allow); each node shows the id, label and preview.
    The current path is in the class ``current`` (blue, thick), the leaf in ``leaf``.

    Cost: O(n).

    Args:
        tree: the tree drawn.
        preview_width: the most characters of each entry's preview.

    >>> t = SessionTree().append({"role": "user", "content": "hi"})
    >>> print("\\n".join(render_mermaid(t)))
    flowchart TD
      n0["e1<br/>user: hi"]
      classDef current stroke:#1f6fb2,stroke-width:3px
      classDef leaf fill:#dcebf7
      class n0 current
      class n0 leaf
    """
    on_path = _path_ids(tree)
    labels = tree.labels()
    leaf_id = tree.leaf_id
    entries = tree.entries()
    # Named up front: a parent may come after its child in insertion order.
    names = {entry.id: f"n{n}" for n, entry in enumerate(entries)}
    current: list[str] = []
    leaf_name = None
    yield "flowchart TD"
    for entry in entries:
        name = names[entry.id]
        label = labels.get(entry.id)
        title = one_line(entry.id + (f" [{label}]" if label else ""))
        preview = entry_preview(entry, preview_width)
        text = f"{title.translate(_MERMAID_ESCAPES)}<br/>{preview.translate(_MERMAID_ESCAPES)}"
        yield f'  {name}["{text}"]'
        if entry.parent_id is not None:
            yield f"  {names[entry.parent_id]} --> {name}"
        if entry.id in on_path:
            current.append(name)
        if entry.id == leaf_id:
            leaf_name = name
    yield "  classDef current stroke:#1f6fb2,stroke-width:3px"
    yield "  classDef leaf fill:#dcebf7"
    if current:
        yield f"  class {','.join(current)} current"
    if leaf_name is not None:
        yield f"  class {leaf_name} leaf"
