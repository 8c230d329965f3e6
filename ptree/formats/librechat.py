"""LibreChat conversation exports (the JSON of "Export conversation") as Pi sessions.

LibreChat writes one conversation per file: ``{conversationId, title, endpoint,
options, recursive, messages}``.  With ``recursive: true`` the messages are a tree
(each message's replies in its ``children``; older versions call the list
``messagesTree``); otherwise a flat list whose ``parentMessageId`` links make the
tree (``00000000-0000-0000-0000-000000000000`` marks a root), or, in the linear
variant without links, a plain sequence.  Every branch is kept.

- A message ``isCreatedByUser`` is a Pi user message (its ``text``).
- Any other message is an assistant message: ``provider`` the endpoint, ``model``
  the model (else the sender), ``api`` ``"librechat-export"``.  An agent's
  structured ``content`` is read part by part: ``text`` parts are text, ``think``
  parts thinking blocks, and each ``tool_call`` part a toolCall followed by its
  output as a ``toolResult`` message, the text after it a further assistant
  message (ids ``<messageId>#2``, ``#3`` …).  ``error`` gives ``stopReason``
  ``"error"``, ``unfinished`` gives ``"aborted"``.
- The leaf is the newest message (by ``createdAt``, then by order in the file);
  the title is a ``session_info`` entry that is the first root.

Every message keeps its LibreChat fields other than its text, links and children
under the entry's ``librechat`` field, so nothing of the export is lost.
"""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from ..entries import Entry, MessageEntry
from ..frozen import FrozenDict, FrozenList, freeze
from ..header import SessionHeader
from ..tree import SessionTree, TreeBuilder
from ._common import (
    EPOCH,
    ZERO_USAGE,
    Ids,
    ImportedSession,
    Node,
    Report,
    assemble,
    call_arguments,
    collector_paused,
    entry_of,
    imported,
    imported_header,
    kind,
    ms,
    ms_of_text,
    plain_message_entry,
    push_order,
    read_json_document,
    reporter,
    text_blocks,
    title_node,
    tool_result,
)
from .errors import ImportFormatError

__all__ = ["FORMAT", "NO_PARENT", "read", "sessions"]

FORMAT = "librechat"
#: The ``parentMessageId`` LibreChat gives a conversation's first message.
NO_PARENT = "00000000-0000-0000-0000-000000000000"

#: The fields of a LibreChat message not kept under an entry's ``librechat`` field.
_DROP = ("text", "content", "children", "parentMessageId", "messageId")


def _kept(message: dict[str, Any]) -> dict[str, Any]:
    """The fields of ``message`` an entry keeps under ``librechat``, in their order."""
    keep = message.copy()
    pop = keep.pop
    for name in _DROP:
        pop(name, None)
    return keep


def _output_text(output: object) -> str:
    """A tool call's ``output`` as its result's text: a string as it is, anything else
    as its JSON.  O(size of the output)."""
    return output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)


# What :meth:`_Reader.flat` gives for an export that nests its messages after all.
_NESTED: list[tuple[dict[str, Any], str | None]] = []

# The entries of a plain export in the order the tree takes them, each one's parent
# entry, and the first message's time (:meth:`_Reader.entries_in_order`).
_InOrder = tuple[list[Entry], list[Entry | None], str | None]

try:  # the same in C where a compiler was found (setup.py)
    from . import _librechat
except ImportError:  # pragma: no cover - built where a C compiler is found
    _librechat = None  # type: ignore[assignment]

if _librechat is not None:
    _librechat.setup(
        MessageEntry,
        tuple(
            next(k.__dict__[name] for k in MessageEntry.__mro__ if name in k.__dict__)
            for name in ("id", "parent_id", "timestamp", "extra", "message")
        ),
        freeze,
        ms_of_text,
        freeze(ZERO_USAGE),
        FrozenDict,
        FrozenList,
        call_arguments,
        _output_text,
        text_blocks,
        tool_result,
    )

COMPILED = _librechat is not None
"""Whether the reader's common case runs in C (``ptree/formats/_librechat.c``)."""


def read(src: str | os.PathLike[str], *, on_report: Report | None = None) -> ImportedSession:
    """Read a LibreChat export (tree, flat or linear) into a session keeping every branch.

    Cost: O(size of the export); iterative however deep the reply tree goes.

    Args:
        src: the export file.
        on_report: called with one line for each thing kept only as text (content
            parts of a kind Pi has no block for); default: a
            :class:`~ptree.pi.SessionFileWarning`.

    Raises:
        ImportFormatError: (a ``ValueError``) not JSON, not UTF-8, or not a LibreChat
            export; the message says where (``messages[3].children[0]`` …).
        OSError: the file cannot be read.

    >>> import tempfile, pathlib
    >>> export = {"conversationId": "c1", "title": "Hi", "recursive": True, "messages": [
    ...   {"messageId": "m1", "isCreatedByUser": True, "text": "hello",
    ...    "createdAt": "2024-01-01T00:00:00Z", "children": [
    ...     {"messageId": "m2", "isCreatedByUser": False, "text": "hi!", "model": "gpt-4o",
    ...      "createdAt": "2024-01-01T00:00:01Z", "children": []}]}]}
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = pathlib.Path(d, "export.json")
    ...     _ = p.write_text(json.dumps(export))
    ...     s = read(p)
    >>> s.source_id, s.title, [e.id for e in s.tree.path()]
    ('c1', 'Hi', ['m1', 'm2'])
    """
    path = Path(src)
    with collector_paused():
        data = read_json_document(path)
        if isinstance(data, list) and len(data) == 1:
            data = data[0]
        if not isinstance(data, dict):
            raise ImportFormatError(
                path, None, f"expected a LibreChat export object, found {kind(data)}"
            )
        return imported(FORMAT, path, _Reader(path, data, reporter(on_report, path)).run())


def sessions(src: str | os.PathLike[str], **options: Any) -> Iterator[ImportedSession]:
    """``iter([read(src, ...)])``: an export holds one conversation.  Raises as :func:`read`.

    The whole export is read before this returns.  Cost: O(size of the export), as
    :func:`read`.

    Args:
        src: the export file.
        **options: :func:`read`'s keyword options (``on_report``).
    """
    return iter([read(src, **options)])


class _Reader:
    def __init__(self, path: Path, export: dict[str, Any], report: Report) -> None:
        self.path = path
        self.report = report
        self.export = export
        self.ids = Ids()
        self.nodes: list[Node] = []
        self.endpoint = export.get("endpoint") if isinstance(export.get("endpoint"), str) else None

    def fail(self, where: str, reason: str) -> ImportFormatError:
        return ImportFormatError(self.path, None, reason, where=where)

    def messages(self) -> list[tuple[str, dict[str, Any], str | None]]:
        """Every message with where it is and its parent's messageId, in document order."""
        export = self.export
        key = "messagesTree" if "messagesTree" in export else "messages"
        top = export.get(key)
        if not isinstance(top, list):
            raise self.fail(key, f"expected a list of messages, found {kind(top)}")
        out: list[tuple[str, dict[str, Any], str | None]] = []
        nested = export.get("recursive") is True or any(
            isinstance(m, dict) and isinstance(m.get("children"), list) and m["children"]
            for m in top
        )
        if not nested:
            # A flat list (or the linear variant): no stack needed, the same checks.
            previous: str | None = None
            for i, message in enumerate(top):
                where = f"{key}[{i}]"
                parent = self.parent_of(where, message, None, False, previous)
                out.append((where, message, parent))
                previous = message["messageId"]
                children = message.get("children")
                if children is not None and not isinstance(children, list):
                    raise self.fail(f"{where}.children", f"expected a list, found {kind(children)}")
            return out
        # (where, value, parent id given by nesting); a stack keeps document order.
        stack: list[tuple[str, Any, str | None]] = [
            (f"{key}[{i}]", m, None) for i, m in reversed(list(enumerate(top)))
        ]
        previous = None
        while stack:
            where, message, nest_parent = stack.pop()
            out.append(
                (where, message, self.parent_of(where, message, nest_parent, True, previous))
            )
            mid = previous = message["messageId"]
            children = message.get("children")
            if children is None:
                continue
            if not isinstance(children, list):
                raise self.fail(f"{where}.children", f"expected a list, found {kind(children)}")
            stack.extend(
                (f"{where}.children[{j}]", c, mid) for j, c in reversed(list(enumerate(children)))
            )
        return out

    def parent_of(
        self,
        where: str,
        message: object,
        nest_parent: str | None,
        nested: bool,
        previous: str | None,
    ) -> str | None:
        """The messageId ``message`` replies to, checking it is a message: its nesting
        parent in a tree export, else its ``parentMessageId``, else (the linear variant)
        the message before it."""
        if not isinstance(message, dict):
            raise self.fail(where, f"expected a message object, found {kind(message)}")
        mid = message.get("messageId")
        if not isinstance(mid, str) or not mid:
            raise self.fail(where, "a message needs a string 'messageId'")
        if nested and nest_parent is not None:
            return nest_parent
        if "parentMessageId" in message:
            given = message["parentMessageId"]
            if given is not None and not isinstance(given, str):
                raise self.fail(where, f"'parentMessageId' must be a string, not {kind(given)}")
            return None if given is None or given == NO_PARENT else given
        return None if nested else previous  # the linear variant: one after another

    def run(self) -> SessionTree:
        direct = self.direct()
        if direct is not None:
            return direct
        listed = self.messages()
        last_of: dict[str, Node] = {}  # messageId -> its last entry (its replies hang there)
        pending: list[tuple[Node, str | None]] = []
        replied: set[str | None] = set()  # the messageIds some message replies to
        newest_when = 0
        newest: str | None = None
        for where, message, parent in listed:
            mid: str = message["messageId"]
            stamp = message.get("createdAt")
            # The newest message is the leaf: by createdAt, then the later in the file.
            when = ms(stamp)
            try:
                made = self.entries(
                    where, message, stamp if isinstance(stamp, str) and stamp else EPOCH, when
                )
            except RecursionError:
                raise self.fail(where, "nested too deeply to import") from None
            if mid not in last_of:
                last_of[mid] = made[-1]
            pending.append((made[0], parent))
            replied.add(parent)
            if len(made) > 1:
                for a, b in itertools.pairwise(made):
                    b.parent = a.id
            if newest is None or when >= newest_when:
                newest_when, newest = when, mid
        for node, parent in pending:
            target = last_of.get(parent) if parent is not None else None
            node.parent = target.id if target is not None else None
        leaf = last_of[newest].id if newest is not None else None
        if newest in replied:
            # Below the newest message there is nothing in a real export; should there be,
            # the leaf follows the newest reply down.
            children: dict[str, list[Node]] = {}
            for node in self.nodes:
                if node.parent is not None:
                    children.setdefault(node.parent, []).append(node)
            seen: set[str] = set()
            while leaf is not None and leaf in children and leaf not in seen:
                seen.add(leaf)
                leaf = children[leaf][-1].id
        title = self.export.get("title")
        first_time = (
            next(
                (m.get("createdAt") for _, m, _ in listed if isinstance(m.get("createdAt"), str)),
                None,
            )
            or EPOCH
        )
        if isinstance(title, str) and title:
            self.nodes.insert(0, title_node(self.ids, title, first_time, self.path))
        return assemble(self.nodes, leaf, self.header(first_time))

    def header(self, first_time: str) -> SessionHeader:
        """The session's header: the conversation's id, made at ``first_time``."""
        title = self.export.get("title")
        conv = self.export.get("conversationId")
        conv = conv if isinstance(conv, str) and conv else self.path.stem
        return imported_header(
            conv,
            first_time,
            "",
            {
                "format": FORMAT,
                "conversationId": conv,
                "file": self.path.name,
                "title": title if isinstance(title, str) else None,
            },
        )

    def flat(self, top: list[Any]) -> list[tuple[dict[str, Any], str | None]] | None:
        """:meth:`messages` of a flat export (or the linear variant) without the places,
        each message with its parent's messageId; ``None`` at anything :meth:`messages`
        would refuse (it then says what), :data:`_NESTED` at a message with replies
        (the export is a tree after all)."""
        out: list[tuple[dict[str, Any], str | None]] = []
        append = out.append
        previous: str | None = None
        for message in top:
            if type(message) is not dict:
                return None
            mid = message.get("messageId")
            if type(mid) is not str or not mid:
                return None
            if "parentMessageId" in message:
                given = message["parentMessageId"]
                if given is None or given == NO_PARENT:
                    append((message, None))
                elif type(given) is str:
                    append((message, given))
                else:
                    return None
            else:
                append((message, previous))  # the linear variant: one after another
            children = message.get("children")
            if children is not None:
                if type(children) is not list:
                    return None
                if children:
                    return _NESTED
            previous = mid
        return out

    def direct(self) -> SessionTree | None:
        """The tree :meth:`run` makes, made without nodes, for an export whose messages
        make their entries under their own ids (every messageId once, a structured
        content's further ids ``<messageId>#2`` … free, nothing to report, the newest
        message without replies, no cycle): the entries
        made in the order :func:`assemble` writes them (:meth:`entries_in_order`, or
        the same in C where it is built) and added to the tree parents first.  ``None``
        for anything else, before anything is reported: :meth:`run` then reads the
        export the general way.  O(messages)."""
        export = self.export
        key = "messagesTree" if "messagesTree" in export else "messages"
        top = export.get(key)
        if type(top) is not list or not top:
            return None
        title = export.get("title")
        titled = isinstance(title, str) and bool(title)
        got: _InOrder | Literal[False] | None = False
        if export.get("recursive") is not True:
            if _librechat is not None:
                got = _librechat.entries(top, None, self.endpoint, titled)
            else:
                found = self.flat(top)
                if found is None:
                    return None
                if found is not _NESTED:
                    got = self.entries_in_order(found, titled)
        if got is False:  # a tree: its messages listed (and checked) the general way
            listed = self.messages()
            if _librechat is not None:
                messages = [message for _, message, _ in listed]
                links = [parent for _, _, parent in listed]
                got = _librechat.entries(messages, links, self.endpoint, titled)
            else:
                got = self.entries_in_order([(m, p) for _, m, p in listed], titled)
        if not got:
            return None
        made, parents, first_time = got
        builder = TreeBuilder()
        add = builder.add
        if titled:
            assert isinstance(title, str)
            add(entry_of(title_node(Ids(), title, first_time or EPOCH, self.path), None), None)
        for entry, parent in zip(made, parents, strict=True):
            add(entry, parent)
        return builder.finish(made[-1], header=self.header(first_time or EPOCH))

    def entries_in_order(
        self, pairs: list[tuple[dict[str, Any], str | None]], titled: bool
    ) -> _InOrder | None:
        """For :meth:`direct` (``pairs``: each message with its parent's messageId, in
        document order; ``titled``: a title entry will take the id ``session-name``):
        the entries of the messages in the order :func:`assemble` writes them (parents
        first, siblings in document order but the one toward the leaf last, the leaf
        last), each with its parent entry (``None`` for a root), and the first
        message's time; ``None`` for an export that is not so plain.  O(messages).

        What ``ptree/formats/_librechat.c`` does in C: every rule here is its."""
        # Pass 1: each message's place, the newest, the first time.
        at: dict[str, tuple[dict[str, Any], str | None, str, int]] = {}
        replied: set[str | None] = set()
        newest_when = 0
        newest: str | None = None
        first_time: str | None = None
        for message, parent in pairs:
            mid: str = message["messageId"]
            if mid in at:
                return None  # a second message of that id: ids~2
            stamp = message.get("createdAt")
            if type(stamp) is str:
                if first_time is None:
                    first_time = stamp
                when = ms(stamp)
                at[mid] = (message, parent, stamp or EPOCH, when)
            else:
                when = 0
                at[mid] = (message, parent, EPOCH, 0)
            if newest is None or when >= newest_when:
                newest_when, newest = when, mid
            replied.add(parent)
        if newest is None or newest in replied or (titled and "session-name" in at):
            return None  # the leaf followed down, or the title's id taken
        # The replies of each message in document order, and the leaf's ancestors.
        kids: dict[str | None, list[str]] = {}
        for mid, (_, parent, _, _) in at.items():
            if parent is not None and (parent == mid or parent not in at):
                parent = None
            siblings = kids.get(parent)
            if siblings is None:
                kids[parent] = [mid]
            else:
                siblings.append(mid)
        toward: dict[str | None, str] = {}
        step: str | None = newest
        for _ in range(len(at)):  # a cycle above the leaf ends the walk
            if step is None:
                break
            parent = at[step][1]
            if parent is not None and (parent == step or parent not in at):
                parent = None
            toward[parent] = step
            step = parent
        made: list[Entry] = []
        parents: list[Entry | None] = []
        by_id: dict[str, Entry] = {}  # each message's last entry: its replies hang there
        one = self.one_entry
        stack = list(push_order(kids.get(None, []), toward.get(None)))
        push = stack.append
        while stack:
            mid = stack.pop()
            message, parent, stamp, when = at[mid]
            own = parent == mid
            if parent is not None and (own or parent not in at):
                parent = None
            up = None if parent is None else by_id[parent]
            plain = one(message, when)
            if plain is not None:
                entry = plain_message_entry(
                    mid, None if up is None else up.id, stamp, plain[0], {"librechat": plain[1]}
                )
                if entry is None:
                    return None  # fields Pi's format cannot hold: the checked path says why
                made.append(entry)
                parents.append(up)
                by_id[mid] = entry
            else:  # structured content: an entry per step and tool result, a chain
                if own:
                    return None  # its own parent: the general path makes the chain a cycle
                msgs = self.step_messages("", message, when, strict=True)
                if msgs is None:
                    return None  # a part to report, or not an object
                extra: dict[str, Any] = {"librechat": _kept(message)}
                for k, msg in enumerate(msgs):
                    eid = mid if k == 0 else f"{mid}#{k + 1}"
                    if k and eid in at:
                        return None  # an id taken: the general path renames one
                    entry = plain_message_entry(
                        eid, None if up is None else up.id, stamp, msg, extra
                    )
                    if entry is None:
                        return None
                    made.append(entry)
                    parents.append(up)
                    up = entry
                    extra = {}
                assert up is not None  # a structured content makes one message at least
                by_id[mid] = up
            children = kids.get(mid)
            if children is not None:
                if len(children) == 1:  # a chain: most messages
                    push(children[0])
                else:
                    stack.extend(push_order(children, toward.get(mid)))
        if len(by_id) != len(at) or made[-1] is not by_id[newest]:
            return None  # parent links that form a cycle: the general path names one
        return made, parents, first_time

    def node(self, wanted: str, fields: dict[str, Any], where: str) -> Node:
        node = Node(self.ids.claim(wanted), fields, self.path, None, wanted, where=where)
        self.nodes.append(node)
        return node

    def one_entry(
        self, message: dict[str, Any], when: int
    ) -> tuple[dict[str, Any], dict[str, Any]] | None:
        """The Pi message and the kept LibreChat fields of the one entry of a message
        (made at ``when``, Unix milliseconds) that makes one, with nothing to report: a
        user's, or an assistant's text alone (most messages); else ``None``."""
        keep = _kept(message)
        text = message.get("text")
        if isinstance(text, dict):
            text = text.get("value")
        text = text if isinstance(text, str) else ""
        if message.get("isCreatedByUser") is True:
            return {"role": "user", "content": text, "timestamp": when}, keep
        content = message.get("content")
        if isinstance(content, list) and content:
            return None
        model = message.get("model") or message.get("sender")
        endpoint = message.get("endpoint") or self.endpoint
        msg = {
            "role": "assistant",
            "api": "librechat-export",
            "provider": endpoint if isinstance(endpoint, str) and endpoint else "librechat",
            "model": model if isinstance(model, str) and model else "unknown",
            "usage": ZERO_USAGE,
            "timestamp": when,
            "content": [{"type": "text", "text": text}],
            "stopReason": "stop",
        }
        if message.get("error") is True:
            msg["stopReason"] = "error"
            msg["errorMessage"] = text or "error"
        elif message.get("unfinished") is True:
            msg["stopReason"] = "aborted"
        return msg, keep

    def entries(self, where: str, message: dict[str, Any], stamp: str, when: int) -> list[Node]:
        """The entries of one message (made at ``stamp``, ``when`` in Unix milliseconds)."""
        mid: str = message["messageId"]
        one = self.one_entry(message, when)
        if one is not None:
            only = {"type": "message", "timestamp": stamp, "message": one[0], "librechat": one[1]}
            return [self.node(mid, only, where)]
        # An assistant's structured content: an entry per step between tool calls.
        made: list[Node] = []
        for msg in self.step_messages(where, message, when, strict=False) or ():
            fields: dict[str, Any] = {"type": "message", "timestamp": stamp, "message": msg}
            if not made:
                fields["librechat"] = _kept(message)
            made.append(self.node(mid if not made else f"{mid}#{len(made) + 1}", fields, where))
        return made

    def step_messages(
        self, where: str, message: dict[str, Any], when: int, *, strict: bool
    ) -> list[dict[str, Any]] | None:
        """The Pi messages of an assistant's structured ``content`` (a non-empty list),
        made at ``when``: for each step between tool calls an assistant message, then a
        ``toolResult`` for each of its calls.  The entries made of them take the
        message's id, then ``<messageId>#2``, ``#3`` ….  ``strict`` (the direct path):
        ``None`` where a part would be reported or is not an object, instead of the
        report or the error.  O(size of the content).

        What ``ptree/formats/_librechat.c`` does in C (``structured``): every rule here
        is its."""
        text = message.get("text")
        if isinstance(text, dict):
            text = text.get("value")
        text = text if isinstance(text, str) else ""
        model = message.get("model") or message.get("sender")
        endpoint = message.get("endpoint") or self.endpoint
        provider = endpoint if isinstance(endpoint, str) and endpoint else "librechat"
        model = model if isinstance(model, str) and model else "unknown"
        steps = self.steps(where, message["content"], strict)
        if steps is None:
            return None
        made: list[dict[str, Any]] = []
        for i, (blocks, results) in enumerate(steps):
            last = i == len(steps) - 1
            msg = {
                "role": "assistant",
                "api": "librechat-export",
                "provider": provider,
                "model": model,
                "usage": ZERO_USAGE,
                "timestamp": when,
                "content": blocks,
                "stopReason": "toolUse" if results else "stop",
            }
            if last and message.get("error") is True:
                msg["stopReason"] = "error"
                msg["errorMessage"] = text or "error"
            elif last and message.get("unfinished") is True:
                msg["stopReason"] = "aborted"
            made.append(msg)
            for call_id, name, output in results:
                made.append(tool_result(call_id, name, text_blocks(output), False, when))
        return made

    def steps(
        self, where: str, content: list[Any], strict: bool = False
    ) -> list[tuple[list[dict[str, Any]], list[tuple[str, str, str]]]] | None:
        """An assistant message's structured content split at tool calls: (blocks, their
        results) each; ``strict``: ``None`` for a part that is not an object or that
        would be reported."""
        steps: list[tuple[list[dict[str, Any]], list[tuple[str, str, str]]]] = [([], [])]
        for j, part in enumerate(content):
            if not isinstance(part, dict):
                if strict:
                    return None
                raise self.fail(f"{where}.content[{j}]", f"expected an object, found {kind(part)}")
            ptype = part.get("type")
            blocks, results = steps[-1]
            if ptype != "tool_call" and results:
                blocks, results = [], []
                steps.append((blocks, results))
            if ptype in ("text", "think", "error"):
                value = part.get(ptype)
                if isinstance(value, dict):
                    value = value.get("value")
                value = value if isinstance(value, str) else ""
                if ptype == "think":
                    blocks.append({"type": "thinking", "thinking": value})
                else:
                    blocks.append({"type": "text", "text": value})
            elif ptype == "tool_call" and isinstance(part.get("tool_call"), dict):
                call = part["tool_call"]
                call_id = call.get("id")
                call_id = call_id if isinstance(call_id, str) and call_id else f"call-{j}"
                name = call.get("name") if isinstance(call.get("name"), str) else "unknown"
                args = call.get("args")
                args = {} if args is None else call_arguments(args)
                blocks.append({"type": "toolCall", "id": call_id, "name": name, "arguments": args})
                results.append((call_id, name, _output_text(call.get("output"))))
            elif strict:
                return None
            else:
                self.report(f"{where}.content[{j}]: a {ptype!r} part kept as text")
                blocks.append(
                    {"type": "text", "text": f"[{ptype}: {json.dumps(part, ensure_ascii=False)}]"}
                )
        return steps
