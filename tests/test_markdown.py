"""Markdown export (``ptree.formats.markdown``): hand-written expected documents, golden
files for the real Pi fixtures, and a real Markdown parser (``markdown-it-py``, the
CommonMark reference port) checking the structure of whole exports."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt

import ptree
from ptree.formats.markdown import to_markdown
from tests.helpers import golden
from tests.test_html_viewer import T0, kyoto

GOLDEN = Path(__file__).parent / "golden"


def tokens(text: str) -> list[Any]:
    return MarkdownIt("commonmark").enable("table").parse(text)


def headings(text: str, tag: str) -> list[str]:
    """The text of every heading of one level, as a CommonMark parser reads it."""
    toks = tokens(text)
    return [
        toks[n + 1].content for n, t in enumerate(toks) if t.type == "heading_open" and t.tag == tag
    ]


KYOTO_PATH = """\
# Kyoto trip

- **Tree:** 13 entries, 4 leaves
- **Path:** 4 entries, ending at `a4` (the current leaf)

## Turn 1

### User

Plan a trip to Kyoto

### Assistant

Plan A

## Turn 2

### User

Make it luxurious

### Assistant

Luxury plan: ryokan

🏷 *Label:* favourite
"""

KYOTO_A3 = """\
# Kyoto trip

- **Tree:** 13 entries, 4 leaves
- **Path:** 6 entries, ending at `a3`

## Turn 1

### User

Plan a trip to Kyoto

### Assistant

Plan A

## Turn 2

### User

Make it cheaper

### Assistant

**Tool call** `lodging`

```json
{
  "q": "kyoto"
}
```

### Tool result · lodging

```
Found: Piece Hostel Sanjo
```

### Assistant

Cheap plan: hostels
"""

KYOTO_ALL = """\
# Kyoto trip

- **Tree:** 13 entries, 4 leaves
- **Path:** 4 entries, ending at `a4` (the current leaf)

## Branch 1 · the current path

*From the root; ends at `a4`.*

### Turn 1

#### User

Plan a trip to Kyoto

#### Assistant

Plan A

### Turn 2

#### User

Make it luxurious

#### Assistant

Luxury plan: ryokan

🏷 *Label:* favourite

## Branch 2

*Forks from branch 1 after `a1` (depth 2); ends at `a3`.*

### Turn 2

#### User

Make it cheaper

#### Assistant

**Tool call** `lodging`

```json
{
  "q": "kyoto"
}
```

#### Tool result · lodging

```
Found: Piece Hostel Sanjo
```

#### Assistant

Cheap plan: hostels

## Branch 3

*Forks from branch 2 after `u2` (depth 3); ends at `a2b`.*

#### Assistant

Cheaper still: camp by the river

## Branch 4

*Forks from branch 1 after `a1` (depth 2); ends at `l1`.*

### Turn 2

#### User

Make it a day trip

#### Assistant

Day trip: Fushimi Inari

*Session named “Kyoto trip”*

*Label “favourite” set on `a4`*
"""


class TestToMarkdown:
    def test_current_path(self) -> None:
        """The leaf's path: a turn heading per user message, a heading per message, the
        label under its entry."""
        assert to_markdown(kyoto()) == KYOTO_PATH

    def test_chosen_leaf_with_tool_call_and_result(self) -> None:
        """Another leaf's path: the tool call as fenced JSON, the result fenced."""
        assert to_markdown(kyoto(), leaf="a3") == KYOTO_A3

    def test_all_branches(self) -> None:
        """Every branch once, the current one first in full, the others from their fork,
        each saying where it forks; turns numbered along the path."""
        assert to_markdown(kyoto(), all_branches=True) == KYOTO_ALL

    def test_unknown_leaf(self) -> None:
        """A leaf that is not in the tree is an UnknownEntryError."""
        with pytest.raises(ptree.UnknownEntryError):
            to_markdown(kyoto(), leaf="zz")

    def test_state_entries_thinking_and_summaries(self) -> None:
        """Header facts, thinking folded, model/thinking changes, a compaction between
        rules, a shell command, an error result, an image, an aborted reply."""
        header = ptree.SessionHeader(id="s1", timestamp="2026-01-05T09:00:00.000Z", cwd="/w")
        t = ptree.SessionTree(header=header)
        t = t.append_model_change("anthropic", "claude-x", id="m", timestamp=T0)
        t = t.append_thinking_level_change("high", id="t", timestamp=T0)
        image = {"type": "image", "mimeType": "image/png", "data": "AAAA"}
        t = t.append(
            {"role": "user", "content": [{"type": "text", "text": "Look"}, image]},
            id="u",
            timestamp=T0,
        )
        t = t.append(
            {
                "role": "assistant",
                "model": "claude-x",
                "content": [
                    {"type": "thinking", "thinking": "Hmm."},
                    {"type": "text", "text": "A cat."},
                ],
            },
            id="a",
            timestamp=T0,
        )
        t = t.append(
            {
                "role": "toolResult",
                "toolCallId": "c",
                "toolName": "ls",
                "content": [],
                "isError": True,
            },
            id="r",
            timestamp=T0,
        )
        t = t.append_compaction("We looked at a cat.", "a", 12345, id="c", timestamp=T0)
        t = t.append(
            {"role": "bashExecution", "command": "ls", "output": "a\nb\n", "exitCode": 0},
            id="b",
            timestamp=T0,
        )
        t = t.append(
            {
                "role": "assistant",
                "content": [],
                "stopReason": "aborted",
                "errorMessage": "Request was aborted",
            },
            id="x",
            timestamp=T0,
        )
        expected = """\
# Session s1

- **Session:** `s1`
- **Started:** 2026-01-05 09:00 UTC
- **Working directory:** `/w`
- **Tree:** 8 entries, 1 leaf
- **Path:** 8 entries, ending at `x` (the current leaf)

*Model → anthropic / claude-x*

*Thinking level → high*

## Turn 1

### User

Look

*\\[image: image/png\\]*

### Assistant · claude-x

<details>
<summary>Thinking</summary>

Hmm.

</details>

A cat.

### Tool result · ls · error

*(no output)*

---

**Compaction** · 12,345 tokens summarised

We looked at a cat.

---

### Shell · exit 0

```sh
$ ls
```

```
a
b
```

### Assistant

*Stopped: Request was aborted*
"""
        assert to_markdown(t) == expected

    def test_hostile_text_cannot_break_the_document(self) -> None:
        """A reply with an unclosed fence, a top-level heading, '</details>' and raw HTML
        stays inside its own section: the fence is closed, the heading moved below the
        document's, and tags outside code written as text."""
        text = "# Big\n<script>x()</script> and `<b>` kept\n</details>\n```js\nlet a = '<i>';"
        t = ptree.SessionTree().append({"role": "user", "content": "q"}, id="u")
        t = t.append(
            {
                "role": "assistant",
                "content": [{"type": "thinking", "thinking": text}, {"type": "text", "text": text}],
            },
            id="a",
        ).append({"role": "user", "content": "after"}, id="u2")
        md = to_markdown(t)
        body = """\
#### Big
&lt;script>x()&lt;/script> and `<b>` kept
&lt;/details>
```js
let a = '<i>';
```"""
        assert (
            f"<details>\n<summary>Thinking</summary>\n\n{body}\n\n</details>\n\n{body}\n\n## Turn 2"
            in md
        )
        assert headings(md, "h2") == ["Turn 1", "Turn 2"]
        assert headings(md, "h3") == ["User", "Assistant", "User"]
        assert not any(t.type == "html_inline" and "script" in t.content for t in tokens(md))

    def test_fences_longer_than_any_inside(self) -> None:
        """Tool output holding ``` is fenced with four backticks; a tool name with a
        backtick stays one code span."""
        t = ptree.SessionTree().append(
            {
                "role": "toolResult",
                "toolCallId": "c",
                "toolName": "a`b",
                "content": [{"type": "text", "text": "```\ncode\n```"}],
            },
            id="r",
        )
        md = to_markdown(t)
        assert "### Tool result · a\\`b\n\n````\n```\ncode\n```\n````\n" in md
        fences = [x for x in tokens(md) if x.type == "fence"]
        assert [f.content for f in fences] == ["```\ncode\n```\n"]


class TestFixtures:
    @pytest.mark.parametrize("name", ["large-session.jsonl", "before-compaction.jsonl"])
    def test_golden_prefix(self, pi_fixtures: Path, name: str) -> None:
        """The path to each fixture's 40th entry matches its golden file (reviewed)."""
        tree = ptree.load(pi_fixtures / name)
        leaf = tree.entries()[39].id
        golden(f"markdown_{name.removesuffix('.jsonl')}.md", to_markdown(tree, leaf=leaf))

    @pytest.mark.parametrize("name", ["large-session.jsonl", "before-compaction.jsonl"])
    def test_whole_path_structure(self, pi_fixtures: Path, name: str) -> None:
        """The whole path, parsed by markdown-it: one ## per user message, one ### per
        message, one ```json fence per tool call (counted from the file's lines), so no
        fence swallows what follows it."""
        lines = [json.loads(x) for x in (pi_fixtures / name).read_text().splitlines()]
        messages = [x["message"] for x in lines if x.get("type") == "message"]
        users = sum(1 for m in messages if m["role"] == "user")
        calls = sum(
            1
            for m in messages
            if m["role"] == "assistant"
            for b in m["content"]
            if b["type"] == "toolCall"
        )
        md = to_markdown(ptree.load(pi_fixtures / name))
        assert len(headings(md, "h2")) == users
        assert len(headings(md, "h3")) == len(messages)
        json_fences = [t for t in tokens(md) if t.type == "fence" and t.info == "json"]
        assert len(json_fences) == calls
        for fence in json_fences:
            json.loads(fence.content)


class TestPi16Kinds:
    """Pi 1.6's system messages, usage and context edits, each drawn as what it is."""

    def tree(self) -> ptree.SessionTree:
        t = ptree.SessionTree()
        t = t.append(
            {
                "role": "system",
                "content": "You are a coding agent.",
                "sections": {"tools": "<tools>read</tools>", "skills": None},
                "toolsAdded": [{"name": "read", "description": "Read", "parameters": {}}],
                "toolsRemoved": [{"name": "bash"}],
            },
            id="s",
            timestamp=T0,
        )
        t = t.append({"role": "user", "content": "Tell me a long story"}, id="u", timestamp=T0)
        t = t.append(
            {"role": "assistant", "content": [{"type": "text", "text": "Once upon a time"}]},
            id="a",
            timestamp=T0,
        )
        cost = {"input": 0, "output": 0, "cacheRead": 0.015, "cacheWrite": 0, "total": 0.015}
        usage = {"input": 0, "output": 0, "cacheRead": 50000, "cacheWrite": 0}
        t = t.append_usage(
            "cache_warm",
            "anthropic",
            "claude-sonnet-4-5",
            {**usage, "totalTokens": 50000, "cost": cost},
            note="warm",
            id="g",
            timestamp=T0,
        )
        t = t.append_context_edit("a", "The end.", id="x", timestamp=T0)
        return t.append_context_edit("u", None, id="y", timestamp=T0)

    def test_each_kind_in_the_document(self) -> None:
        md = to_markdown(self.tree())
        assert "### System prompt\n\nYou are a coding agent." in md
        assert "**Section tools**\n\n```\n<tools>read</tools>\n```" in md
        assert "*Section skills removed*" in md
        assert "*Tools added: read*" in md
        assert "*Tools removed: bash*" in md
        assert (
            "*Usage (cache\\_warm) · anthropic / claude-sonnet-4-5, 50,000 tokens, $0.0150 (warm)*"
            in md
        )
        assert "*Context edit: what `a` gives the model is now:*\n\nThe end." in md
        assert "*Context edit: `u` left out of the model's context*" in md
        assert "Entry of type" not in md

    def test_structure(self) -> None:
        """A CommonMark parser sees the system prompt as a heading of its own."""
        assert "System prompt" in headings(to_markdown(self.tree()), "h3")
