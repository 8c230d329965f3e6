"""A session as GitHub-flavoured Markdown: for notes, issues and pull requests.

:func:`to_markdown` writes the path to the leaf (or to any entry) as a document:
a title and a list of facts about the session, then one ``## Turn N`` heading per
user message, a ``###`` heading per message (``User``, ``Assistant · model``,
``Tool result · name``, ``Shell``), tool calls as fenced JSON blocks, tool results as
fenced text blocks (long ones folded in ``<details>``), thinking folded in
``<details>``, compactions and branch summaries between horizontal rules, and model,
thinking-level, label and name changes as italic lines.

With ``all_branches=True`` every branch gets its own section: first the path to the
leaf in full, then each other branch (in the order of :meth:`~ptree.SessionTree.leaves`)
from the point where it leaves a branch already written, with a line saying where it
forks, so the document stays linear in the size of the tree.  Turns are numbered along
each path, so a branch that forks in turn 3 starts at turn 4.

Message text is Markdown already and is kept as written, with three repairs so that
it cannot break the document around it: a code fence it leaves open is closed, its
headings are moved below the document's own (``#`` becomes ``####``), and ``<`` that
would start an HTML tag outside code is written ``&lt;`` (so text can neither close
a ``<details>`` nor inject markup).  To remove secrets first, pass the tree through
:func:`ptree.formats.redaction.redact`.

Imports: the core only.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

from .. import entries as kinds
from ..entries import Entry, MessageEntry
from ..errors import UnknownEntryError
from ..frozen import thaw
from ..tree import SessionTree

__all__ = ["to_markdown"]

# A tool result longer than this many lines is folded in <details>.
FOLD_LINES = 30

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_ATX = re.compile(r"^ {0,3}(#{1,6})(?=[ \t]|$)")
_TAG_START = re.compile(r"<(?=[A-Za-z/!?])")
_BACKTICKS = re.compile(r"`+")
_INLINE_SPECIAL = re.compile(r"([\\`*_\[\]<>|~#])")


def _inline(text: str) -> str:
    """Plain text for one line of Markdown: special characters escaped, lines joined."""
    return _INLINE_SPECIAL.sub(r"\\\1", " ".join(text.split()))


def _code_span(text: str) -> str:
    """``text`` as an inline code span, however many backticks it holds."""
    text = " ".join(text.split())
    runs = [len(m) for m in _BACKTICKS.findall(text)]
    ticks = "`" * (max(runs, default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def _fence(text: str, info: str = "") -> str:
    """``text`` as a fenced code block whose fence no line of ``text`` can close."""
    longest = 0
    for line in text.split("\n"):
        m = _FENCE.match(line)
        if m and m.group(1)[0] == "`":
            longest = max(longest, len(m.group(1)))
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{info}\n{text}\n{ticks}"


def _escape_tags(line: str) -> str:
    """``<`` that would open an HTML tag, outside inline code spans, as ``&lt;``."""
    out: list[str] = []
    pos = 0
    open_run = 0
    for m in _BACKTICKS.finditer(line):
        if open_run == 0:
            out.append(_TAG_START.sub("&lt;", line[pos : m.start()]))
            open_run = len(m.group())
        elif len(m.group()) == open_run:
            out.append(line[pos : m.start()])
            open_run = 0
        else:
            out.append(line[pos : m.start()])
        out.append(m.group())
        pos = m.end()
    rest = line[pos:]
    out.append(rest if open_run else _TAG_START.sub("&lt;", rest))
    return "".join(out)


def _md_text(text: str) -> str:
    """Message text made safe to embed (see the module doc).  O(len(text))."""
    out: list[str] = []
    fence: str | None = None
    for line in text.replace("\r\n", "\n").split("\n"):
        if fence is not None:
            out.append(line)
            close = re.match(r" {0,3}(`{3,}|~{3,})[ \t]*$", line)
            if close and close.group(1)[0] == fence[0] and len(close.group(1)) >= len(fence):
                fence = None
            continue
        m = _FENCE.match(line)
        if m and not (m.group(1)[0] == "`" and "`" in m.group(2)):
            fence = m.group(1)
            out.append(line)
            continue
        # (an indented line may be a list's text, not code: it is escaped too)
        h = _ATX.match(line)
        if h:
            level = min(6, len(h.group(1)) + 3)
            line = "#" * level + line[h.end() :]
        out.append(_escape_tags(line))
    if fence is not None:
        out.append(fence)
    return "\n".join(out).strip("\n")


def _blocks(content: Any) -> list[Mapping[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, (list, tuple)):
        return [b for b in content if isinstance(b, Mapping)]
    return []


def _plain(content: Any) -> str:
    parts = []
    for b in _blocks(content):
        if b.get("type") == "text" and isinstance(b.get("text"), str):
            parts.append(b["text"])
        elif b.get("type") == "image":
            parts.append(f"[image: {b.get('mimeType', 'unknown type')}]")
    return "\n".join(parts)


def _details(summary: str, body: str) -> str:
    return f"<details>\n<summary>{summary}</summary>\n\n{body}\n\n</details>"


def _content(content: Any) -> Iterator[str]:
    """The blocks of a user or assistant message, one Markdown chunk each."""
    for b in _blocks(content):
        kind = b.get("type")
        if kind == "text":
            text = _md_text(str(b.get("text", "")))
            if text.strip():
                yield text
        elif kind == "thinking":
            text = _md_text(str(b.get("thinking", "")))
            if text.strip():
                yield _details("Thinking", text)
        elif kind == "toolCall":
            args = thaw(b.get("arguments"))
            body = json.dumps(args, indent=2, ensure_ascii=False)
            yield f"**Tool call** {_code_span(str(b.get('name', '?')))}\n\n" + _fence(body, "json")
        elif kind == "image":
            yield f"*\\[image: {_inline(str(b.get('mimeType', 'unknown type')))}\\]*"
        else:
            body = json.dumps(thaw(b), indent=2, ensure_ascii=False)
            yield f"**{_inline(str(kind))} block**\n\n" + _fence(body, "json")


def _output(text: str) -> str:
    """Tool or shell output: a fenced block, folded when long."""
    if not text.strip():
        return "*(no output)*"
    block = _fence(text.rstrip("\n"))
    lines = text.count("\n") + 1
    if lines > FOLD_LINES:
        return _details(f"{lines:,} lines of output", block)
    return block


def _when(timestamp: str) -> str:
    m = re.match(r"(\d{4}-\d\d-\d\d)T(\d\d:\d\d)", timestamp)
    return f"{m.group(1)} {m.group(2)} UTC" if m else timestamp


class _Writer:
    def __init__(self, tree: SessionTree, base: int) -> None:
        self.tree = tree
        self.labels = tree.labels()
        self.base = base  # the level of turn headings
        self.turn = 0
        self.chunks: list[str] = []

    def h(self, level: int, text: str) -> None:
        self.chunks.append("#" * (self.base + level) + " " + text)

    def line(self, text: str) -> None:
        self.chunks.append(text)

    def entry(self, e: Entry) -> None:
        label = self.labels.get(e.id)
        if isinstance(e, MessageEntry):
            self.message(e)
        elif isinstance(e, kinds.Compaction):
            self.line("---")
            self.line(f"**Compaction** · {e.tokens_before:,} tokens summarised")
            self.line(_md_text(e.summary) or "*(empty summary)*")
            self.line("---")
        elif isinstance(e, kinds.BranchSummary):
            self.line("---")
            self.line("**Branch summary** · what was done on the branch this one came back from")
            self.line(_md_text(e.summary) or "*(empty summary)*")
            self.line("---")
        elif isinstance(e, kinds.ModelChange):
            self.line(f"*Model → {_inline(e.provider)} / {_inline(e.model_id)}*")
        elif isinstance(e, kinds.ThinkingLevelChange):
            self.line(f"*Thinking level → {_inline(e.thinking_level)}*")
        elif isinstance(e, kinds.ActiveToolsChange):
            names = ", ".join(str(n) for n in e.active_tool_names) or "none"
            self.line(f"*Active tools → {_inline(names)}*")
        elif isinstance(e, kinds.Label):
            if e.label:
                self.line(f"*Label “{_inline(e.label)}” set on {_code_span(e.target_id)}*")
            else:
                self.line(f"*Label cleared on {_code_span(e.target_id)}*")
        elif isinstance(e, kinds.SessionInfo):
            if e.name:
                self.line(f"*Session named “{_inline(e.name)}”*")
            else:
                self.line("*Session name cleared*")
        elif isinstance(e, kinds.CustomMessage):
            self.h(1, f"Extension message · {_inline(e.custom_type)}")
            self.chunks.extend(_content(e.content))
        elif isinstance(e, kinds.Custom):
            self.line(f"*Extension state · {_inline(e.custom_type)}*")
        elif isinstance(e, kinds.Usage):
            self.line(f"*Usage{_usage_kind(e.kind)} · {_usage(e)}*")
        elif isinstance(e, kinds.ContextEdit):
            if e.replacement is None:
                self.line(
                    f"*Context edit: {_code_span(e.target_id)} left out of the model's context*"
                )
            else:
                self.line(f"*Context edit: what {_code_span(e.target_id)} gives the model is now:*")
                self.chunks.extend(_content(e.replacement.get("content")) or ["*(empty)*"])
        else:
            self.line(f"*Entry of type {_inline(e.type)}*")
        if label:
            self.line(f"🏷 *Label:* {_inline(label)}")

    def message(self, e: MessageEntry) -> None:
        m = e.message
        role = e.role
        if role == "user":
            self.turn += 1
            self.h(0, f"Turn {self.turn}")
            self.h(1, "User")
            self.chunks.extend(_content(m.get("content")) or ["*(empty)*"])
        elif role == "assistant":
            model = m.get("model")
            self.h(1, "Assistant" + (f" · {_inline(str(model))}" if model else ""))
            parts = list(_content(m.get("content")))
            stop = m.get("stopReason")
            if stop in ("aborted", "error") or m.get("errorMessage"):
                why = m.get("errorMessage") or stop
                parts.append(f"*Stopped: {_inline(str(why))}*")
            self.chunks.extend(parts or ["*(empty)*"])
        elif role == "toolResult":
            error = " · error" if m.get("isError") is True else ""
            self.h(1, f"Tool result · {_inline(str(m.get('toolName', '?')))}{error}")
            self.line(_output(_plain(m.get("content"))))
        elif role == "bashExecution":
            code = m.get("exitCode")
            self.h(1, f"Shell · exit {code if code is not None else '?'}")
            self.line(_fence(f"$ {m.get('command', '')}", "sh"))
            self.line(_output(str(m.get("output", ""))))
        elif role == "system":
            self.h(1, "System prompt")
            self.chunks.extend(_content(m.get("content")))
            sections = m.get("sections")
            if isinstance(sections, Mapping):
                for name, text in sections.items():
                    if text is None:
                        self.line(f"*Section {_inline(str(name))} removed*")
                    else:
                        self.line(f"**Section {_inline(str(name))}**")
                        self.line(_output(str(text)))
            for key, verb in (("toolsAdded", "added"), ("toolsRemoved", "removed")):
                tools = m.get(key)
                if isinstance(tools, (list, tuple)) and tools:
                    names = ", ".join(
                        str(t.get("name", "?")) if isinstance(t, Mapping) else "?" for t in tools
                    )
                    self.line(f"*Tools {verb}: {_inline(names)}*")
        elif role == "custom":
            self.h(1, f"Extension message · {_inline(str(m.get('customType', '?')))}")
            self.chunks.extend(_content(m.get("content")))
        else:
            self.h(1, f"Message · {_inline(role)}")
            self.line(_fence(json.dumps(thaw(m), indent=2, ensure_ascii=False), "json"))


def _usage_kind(kind: str) -> str:
    return f" ({_inline(kind)})" if kind else ""


def _usage(e: kinds.Usage) -> str:
    u = e.usage
    out = f"{_inline(e.provider)} / {_inline(e.model)}"
    total = u.get("totalTokens") if isinstance(u, Mapping) else None
    if isinstance(total, int) and not isinstance(total, bool):
        out += f", {total:,} tokens"
    cost = u.get("cost") if isinstance(u, Mapping) else None
    dollars = cost.get("total") if isinstance(cost, Mapping) else None
    if isinstance(dollars, (int, float)) and not isinstance(dollars, bool):
        out += f", ${dollars:.4f}"
    if e.note:
        out += f" ({_inline(e.note)})"
    return out


def _count(n: int, one: str, many: str) -> str:
    return f"{n:,} {one if n == 1 else many}"


def _facts(tree: SessionTree, leaf: Entry | None) -> list[str]:
    header = tree.header
    out = []
    if header is not None:
        out.append(f"- **Session:** {_code_span(header.id)}")
        out.append(f"- **Started:** {_inline(_when(header.timestamp))}")
        if header.cwd:
            out.append(f"- **Working directory:** {_code_span(header.cwd)}")
    leaves = len(tree.leaves())
    size = f"{_count(len(tree), 'entry', 'entries')}, {_count(leaves, 'leaf', 'leaves')}"
    out.append(f"- **Tree:** {size}")
    if leaf is not None:
        which = " (the current leaf)" if leaf.id == tree.leaf_id else ""
        size = _count(tree.depth(leaf.id) + 1, "entry", "entries")
        out.append(f"- **Path:** {size}, ending at {_code_span(leaf.id)}{which}")
    return out


def to_markdown(tree: SessionTree, *, leaf: str | None = None, all_branches: bool = False) -> str:
    """The session as GitHub-flavoured Markdown (see the module doc).

    Cost: O(size of the path), or O(size of the tree) with ``all_branches``.

    Args:
        tree: the session.
        leaf: the entry whose path to write (default: the tree's leaf).
        all_branches: write every branch, each as its own section.

    Returns:
        the document, ending in one newline.

    Raises:
        UnknownEntryError: ``leaf`` is not an entry of the tree.

    >>> t = SessionTree().append({"role": "user", "content": "Hi <b>there</b>"}, id="u")
    >>> print(to_markdown(t.with_header(None)))
    # Session
    <BLANKLINE>
    - **Tree:** 1 entry, 1 leaf
    - **Path:** 1 entry, ending at `u` (the current leaf)
    <BLANKLINE>
    ## Turn 1
    <BLANKLINE>
    ### User
    <BLANKLINE>
    Hi &lt;b>there&lt;/b>
    """
    if leaf is not None and leaf not in tree:
        raise UnknownEntryError(leaf, f"no entry {leaf!r} to export")
    end = tree.get(leaf) if leaf is not None else tree.leaf
    name = tree.session_name
    header = tree.header
    title = name or (f"Session {header.id}" if header is not None else "Session")
    chunks = [f"# {_inline(title)}", "\n".join(_facts(tree, end))]
    if not all_branches:
        w = _Writer(tree, 2)
        for e in tree.path(end.id) if end is not None else ():
            w.entry(e)
        chunks.extend(w.chunks)
        return "\n\n".join(chunks) + "\n"
    # Every branch: the path to the leaf first, then the other leaves in tree order,
    # each from where it leaves what is already written.
    leaves = [e.id for e in tree.leaves()]
    if end is not None:
        leaves = [end.id] + [x for x in leaves if x != end.id]
    branch_of: dict[str, int] = {}
    turn_at: dict[str, int] = {}  # the turn number each written entry is in
    for n, tip in enumerate(leaves, 1):
        new: list[Entry] = []
        cursor: Entry | None = tree[tip]
        while cursor is not None and cursor.id not in branch_of:
            new.append(cursor)
            cursor = tree.parent(cursor.id)
        new.reverse()
        for x in new:
            branch_of[x.id] = n
        current = " · the current path" if tip == tree.leaf_id else ""
        chunks.append(f"## Branch {n}{current}")
        if cursor is None:
            where = "Starts at the root" if n > 1 else "From the root"
            chunks.append(f"*{where}; ends at {_code_span(tip)}.*")
        else:
            chunks.append(
                f"*Forks from branch {branch_of[cursor.id]} after {_code_span(cursor.id)} "
                f"(depth {tree.depth(cursor.id) + 1:,}); ends at {_code_span(tip)}.*"
            )
        w = _Writer(tree, 3)
        w.turn = turn_at[cursor.id] if cursor is not None else 0
        for x in new:
            w.entry(x)
            turn_at[x.id] = w.turn
        chunks.extend(w.chunks)
    return "\n\n".join(chunks) + "\n"
