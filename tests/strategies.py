"""Hypothesis strategies shared by the tests: JSON values, Pi messages, entry kinds."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

import ptree

# Small alphabets keep examples readable and still hit unicode and escaping.
text = st.text(alphabet=st.sampled_from('ab xé方\n"\\{}'), max_size=8)
keys = st.text(alphabet=st.sampled_from("abcxyz_"), min_size=1, max_size=5)

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | text
)


def _containers(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    # A named function: Hypothesis reads a lambda's source to check that it uses its
    # argument, and a lambda inside a call is not always found.
    return st.lists(children, max_size=3) | st.dictionaries(keys, children, max_size=3)


def json_values(max_leaves: int = 8) -> st.SearchStrategy[Any]:
    """Any JSON-like value (dicts, lists, scalars), plain and mutable."""
    return st.recursive(json_scalars, _containers, max_leaves=max_leaves)


content_blocks = st.lists(
    st.fixed_dictionaries({"type": st.just("text"), "text": text}), min_size=1, max_size=2
)

user_messages = st.fixed_dictionaries(
    {"role": st.just("user"), "content": text | content_blocks},
    optional={"timestamp": st.integers(0, 2**41)},
)
assistant_messages = st.fixed_dictionaries(
    {
        "role": st.just("assistant"),
        "content": content_blocks,
        "provider": st.sampled_from(["anthropic", "openai"]),
        "model": st.sampled_from(["claude-sonnet-4-5", "gpt-5.1-codex"]),
    },
    optional={
        "usage": st.fixed_dictionaries({"input": st.integers(0, 99)}),
        "extra": json_values(4),
    },
)
tool_results = st.fixed_dictionaries(
    {
        "role": st.just("toolResult"),
        "toolCallId": keys,
        "toolName": keys,
        "content": content_blocks,
        "isError": st.booleans(),
    }
)
bash_messages = st.fixed_dictionaries(
    {"role": st.just("bashExecution"), "command": text, "output": text},
    optional={"excludeFromContext": st.booleans()},
)
custom_role_messages = st.fixed_dictionaries(
    {"role": st.just("custom"), "customType": keys, "content": text, "display": st.booleans()}
)
messages = user_messages | assistant_messages | tool_results | bash_messages | custom_role_messages

# Pi 1.6: system messages (a prompt, then patches of sections and tools), and messages
# whose content is null or absent (old or hand-made files).
tool_decls = st.fixed_dictionaries(
    {"name": st.sampled_from(["read", "bash", "edit"]), "description": text}
)
system_messages = st.fixed_dictionaries(
    {"role": st.just("system"), "content": text | content_blocks},
    optional={
        "sections": st.dictionaries(st.sampled_from(["tools", "skills", "a"]), st.none() | text),
        "toolsAdded": st.lists(tool_decls, max_size=2),
        "toolsRemoved": st.lists(tool_decls.map(lambda t: {"name": t["name"]}), max_size=1),
        "timestamp": st.integers(0, 2**41),
    },
)
contentless_messages = st.builds(
    lambda role, null: {"role": role, "content": None} if null else {"role": role},
    st.sampled_from(["system", "user", "assistant", "toolResult", "bashExecution"]),
    st.booleans(),
)
usages = st.fixed_dictionaries(
    {
        "input": st.integers(0, 999),
        "output": st.integers(0, 999),
        "cacheRead": st.integers(0, 99_999),
        "cacheWrite": st.integers(0, 999),
        "totalTokens": st.integers(0, 99_999),
        "cost": st.fixed_dictionaries(
            {k: st.sampled_from([0, 0.015, 0.5]) for k in ("input", "output", "total")}
        ),
    }
)
replacements = st.none() | st.fixed_dictionaries({"content": text | content_blocks})
messages_16 = messages | system_messages | contentless_messages

timestamps = st.sampled_from(
    ["2026-01-01T00:00:00.000Z", "2026-06-30T12:34:56.789Z", "2025-12-09T00:53:29.825Z"]
)


@dataclass(frozen=True)
class Step:
    """One append of any kind, described so that a model can tell what it adds.

    ``kind`` is the entry's ``type``; ``method`` the :class:`~ptree.SessionTree` method
    that appends it, called with ``args`` and ``kwargs`` (``"insert"``: an
    :class:`~ptree.UnknownEntry` made from ``kwargs`` under the leaf, with the next id).
    """

    kind: str
    method: str
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)

    def apply(self, tree: ptree.SessionTree) -> ptree.SessionTree:
        if self.method == "insert":
            entry = ptree.UnknownEntry(
                id=ptree.ids.counter_ids(tree), parent_id=tree.leaf_id, **self.kwargs
            )
            return tree.insert(entry)
        method: Callable[..., ptree.SessionTree] = getattr(tree, self.method)
        return method(*self.args, **self.kwargs)


@st.composite
def append_steps(draw: st.DrawFn, ids: Sequence[str]) -> Step:
    """An append of a random kind under a tree with these ``ids`` (labels aim at them)."""
    choices = [
        "message",
        "thinking",
        "model",
        "tools",
        "branch",
        "custom",
        "custom_message",
        "session_info",
        "unknown",
    ]
    if ids:
        choices += ["compaction", "label"]
    kind = draw(st.sampled_from(choices))
    ts = {"timestamp": draw(timestamps)}
    if kind == "message":
        return Step("message", "append", (draw(messages),), ts)
    if kind == "thinking":
        level = draw(st.sampled_from(["off", "minimal", "low", "medium", "high"]))
        return Step("thinking_level_change", "append_thinking_level_change", (level,), ts)
    if kind == "model":
        return Step("model_change", "append_model_change", (draw(keys), draw(keys)), ts)
    if kind == "tools":
        tools = draw(st.lists(keys, max_size=3))
        return Step("active_tools_change", "append_active_tools_change", (tools,), ts)
    if kind == "branch":
        return Step("branch_summary", "append_branch_summary", (draw(keys), draw(text)), ts)
    if kind == "custom":
        return Step("custom", "append_custom", (draw(keys), draw(json_values(4))), ts)
    if kind == "custom_message":
        return Step(
            "custom_message",
            "append_custom_message",
            (draw(keys), draw(text | content_blocks)),
            {**ts, "display": draw(st.booleans())},
        )
    if kind == "session_info":
        return Step("session_info", "append_session_info", (draw(st.none() | text),), ts)
    if kind == "compaction":
        args = (draw(text), draw(st.sampled_from(ids)), draw(st.integers(0, 10**6)))
        return Step("compaction", "append_compaction", args, ts)
    if kind == "label":
        target, label = draw(st.sampled_from(ids)), draw(st.none() | text)
        return Step("label", "append_label", (target, label), ts)
    extra = {"payload": draw(json_values(4))}
    return Step("future_kind", "insert", (), {**ts, "entry_type": "future_kind", "extra": extra})


@st.composite
def appends(draw: st.DrawFn, tree: ptree.SessionTree, pi16: bool = False) -> ptree.SessionTree:
    """Append one entry of a random kind under ``tree``'s leaf (labels aim at real ids);
    with ``pi16``, Pi 1.6's kinds and shapes too (:func:`appends_16`)."""
    if pi16:
        return draw(appends_16(tree))
    return draw(append_steps(tree.ids())).apply(tree)


@st.composite
def appends_16(draw: st.DrawFn, tree: ptree.SessionTree) -> ptree.SessionTree:
    """Append one entry under ``tree``'s leaf: any kind :func:`append_steps` makes, or
    Pi 1.6's kinds and shapes: usage entries, context edits aimed at any entry (or
    none), system and contentless messages, branch summaries with usage, compactions
    keeping nothing (no, a null or their own ``firstKeptEntryId``) or with a
    checkpoint, custom messages with null content or display.
    """
    ids = tree.ids()
    kind = draw(
        st.sampled_from(
            ["other"] * 3
            + ["message", "branch", "custom_message", "compaction", "usage"]
            + ["edit"] * 2
        )
    )
    ts = draw(timestamps)
    if kind == "other":
        return draw(append_steps(ids)).apply(tree)
    if kind == "message":
        return tree.append(draw(messages_16), timestamp=ts)
    if kind == "branch":
        usage = draw(st.none() | usages)
        return tree.append_branch_summary(draw(keys), draw(text), usage=usage, timestamp=ts)
    if kind == "custom_message":
        extra: dict[str, Any] = {}
        for key in ("content", "display", "details"):
            if draw(st.booleans()):
                extra[key] = None
        custom = ptree.CustomMessage(
            id=ptree.ids.counter_ids(tree),
            parent_id=tree.leaf_id,
            timestamp=ts,
            custom_type=draw(keys),
            content=None if "content" in extra or draw(st.booleans()) else draw(text),
            display=None if "display" in extra else draw(st.none() | st.booleans()),
            extra=extra,
        )
        return tree.insert(custom)
    if kind == "compaction":
        new_id = ptree.ids.counter_ids(tree)
        first = draw(st.sampled_from([None, "null", new_id, *ids]))
        checkpoint = draw(st.none() | system_messages)
        compaction = ptree.Compaction(
            id=new_id,
            parent_id=tree.leaf_id,
            timestamp=ts,
            summary=draw(text),
            first_kept_entry_id=None if first == "null" else first,
            tokens_before=draw(st.integers(0, 10**6)),
            usage=draw(st.none() | usages),
            system_message=checkpoint,
            extra={"firstKeptEntryId": None} if first == "null" else None,
        )
        return tree.insert(compaction)
    if kind == "usage":
        return tree.append_usage(
            draw(st.sampled_from(["cache_warm", "classifier", "x"])),
            draw(keys),
            draw(keys),
            draw(usages),
            note=draw(st.none() | text),
            timestamp=ts,
        )
    edit = ptree.ContextEdit(  # kind == "edit"
        id=ptree.ids.counter_ids(tree),
        parent_id=tree.leaf_id,
        timestamp=ts,
        target_id=draw(st.sampled_from(["nowhere", *ids])),
        replacement=draw(replacements),
    )
    return tree.insert(edit)


@st.composite
def trees(draw: st.DrawFn, max_steps: int = 25, pi16: bool = False) -> ptree.SessionTree:
    """A random tree of every entry kind, with branches (moves to earlier entries).

    ``pi16``: Pi 1.6's kinds and shapes too (see :func:`appends`).
    """
    tree = ptree.SessionTree()
    for _ in range(draw(st.integers(0, max_steps))):
        if tree and draw(st.integers(0, 3)) == 0:
            tree = tree.move_to(draw(st.sampled_from((None, *tree.ids()))))
        tree = draw(appends(tree, pi16))
    return tree
