"""Entry kinds: construction, validation, JSON in Pi's format, unknown kinds and fields."""

from __future__ import annotations

import os
import pickle
from typing import Any

import attrs
import pytest
from hypothesis import given, settings

import ptree
from ptree.entries import entry_from_json

from .strategies import trees

T0 = "2026-01-01T00:00:00.000Z"

EXAMPLES: list[dict[str, Any]] = [
    {
        "type": "message",
        "id": "a",
        "parentId": None,
        "timestamp": T0,
        "message": {"role": "user", "content": "hi", "timestamp": 1},
    },
    {
        "type": "thinking_level_change",
        "id": "b",
        "parentId": "a",
        "timestamp": T0,
        "thinkingLevel": "high",
    },
    {
        "type": "model_change",
        "id": "c",
        "parentId": "b",
        "timestamp": T0,
        "provider": "anthropic",
        "modelId": "claude-opus-4-5",
    },
    {
        "type": "active_tools_change",
        "id": "d",
        "parentId": "c",
        "timestamp": T0,
        "activeToolNames": ["read", "bash"],
    },
    {
        "type": "compaction",
        "id": "e",
        "parentId": "d",
        "timestamp": T0,
        "summary": "s",
        "firstKeptEntryId": "a",
        "tokensBefore": 1000,
        "details": {"files": ["x"]},
        "fromHook": False,
    },
    {
        "type": "branch_summary",
        "id": "f",
        "parentId": "e",
        "timestamp": T0,
        "fromId": "a",
        "summary": "tried X",
    },
    {
        "type": "custom",
        "id": "g",
        "parentId": "f",
        "timestamp": T0,
        "customType": "ext",
        "data": {"k": [1, 2]},
    },
    {
        "type": "custom_message",
        "id": "h",
        "parentId": "g",
        "timestamp": T0,
        "customType": "ext",
        "content": [{"type": "text", "text": "x"}],
        "display": True,
    },
    {
        "type": "label",
        "id": "i",
        "parentId": "h",
        "timestamp": T0,
        "targetId": "a",
        "label": "start",
    },
    {"type": "session_info", "id": "j", "parentId": "i", "timestamp": T0, "name": "demo"},
]


class TestJSON:
    @pytest.mark.parametrize("obj", EXAMPLES, ids=lambda o: o["type"])
    def test_known_kinds_round_trip(self, obj: dict[str, Any]) -> None:
        """Every Pi kind reads into its class and writes back the same JSON."""
        entry = entry_from_json(obj)
        assert type(entry) is ptree.entries.ENTRY_TYPES[obj["type"]]
        assert entry.type == obj["type"]
        assert entry.to_json() == obj
        assert entry.extra == {}

    def test_unknown_fields_survive(self) -> None:
        """Fields ptree does not know are kept in extra and written back."""
        obj = {**EXAMPLES[2], "reason": "user asked", "nested": {"a": [1]}}
        entry = entry_from_json(obj)
        assert entry.extra == {"reason": "user asked", "nested": {"a": [1]}}
        assert entry.to_json() == obj

    def test_unknown_kind_survives(self) -> None:
        """An unknown type gives an UnknownEntry that writes back the same JSON."""
        obj = {
            "type": "future_thing",
            "id": "z",
            "parentId": "a",
            "timestamp": T0,
            "payload": {"x": [1, None]},
        }
        entry = entry_from_json(obj)
        assert isinstance(entry, ptree.UnknownEntry)
        assert entry.type == "future_thing"
        assert entry.to_json() == obj

    def test_explicit_null_of_an_optional_field_survives(self) -> None:
        """'details': null stays null on the way back out (not dropped, not invented)."""
        obj = {**EXAMPLES[5], "details": None}
        entry = entry_from_json(obj)
        assert isinstance(entry, ptree.BranchSummary)
        assert entry.details is None
        assert entry.to_json() == obj

    def test_custom_message_without_display_stays_without(self) -> None:
        """A custom_message without display reads as None and is written back without it."""
        obj = {k: v for k, v in EXAMPLES[7].items() if k != "display"}
        entry = entry_from_json(obj)
        assert isinstance(entry, ptree.CustomMessage)
        assert entry.display is None
        assert entry.to_json() == obj
        assert (
            "display"
            not in ptree.build_context(ptree.SessionTree().append_entry(entry)).messages[0]
        )

    def test_custom_message_display_null_stays_null(self) -> None:
        """display: null is written back as null, not turned into true."""
        obj = {**EXAMPLES[7], "display": None}
        assert entry_from_json(obj).to_json() == obj

    @pytest.mark.parametrize(
        ("obj", "field"),
        [
            ({"type": "message", "parentId": None, "timestamp": T0}, "id"),
            ({"type": "message", "id": "", "parentId": None, "timestamp": T0}, "id"),
            ({"type": "message", "id": 5, "parentId": None, "timestamp": T0}, "id"),
            ({"id": "a", "parentId": None, "timestamp": T0}, "type"),
            ({"type": "message", "id": "a", "timestamp": T0, "message": {"role": "u"}}, "parentId"),
            (
                {"type": "message", "id": "a", "parentId": None, "message": {"role": "u"}},
                "timestamp",
            ),
            ({"type": "message", "id": "a", "parentId": None, "timestamp": T0}, "message"),
            (
                {
                    "type": "model_change",
                    "id": "a",
                    "parentId": None,
                    "timestamp": T0,
                    "provider": "p",
                },
                "modelId",
            ),
            (
                {
                    "type": "model_change",
                    "id": "a",
                    "parentId": None,
                    "timestamp": T0,
                    "provider": "p",
                    "modelId": 3,
                },
                "modelId",
            ),
            (
                {
                    "type": "compaction",
                    "id": "a",
                    "parentId": None,
                    "timestamp": T0,
                    "summary": "s",
                    "firstKeptEntryId": "x",
                    "tokensBefore": "many",
                },
                "tokensBefore",
            ),
            (
                {"type": "label", "id": "a", "parentId": 7, "timestamp": T0, "targetId": "x"},
                "parentId",
            ),
        ],
    )
    def test_bad_entries_name_the_field(self, obj: dict[str, Any], field: str) -> None:
        """A missing or mistyped field raises InvalidEntryError naming it (a ValueError)."""
        with pytest.raises(ptree.InvalidEntryError) as info:
            entry_from_json(obj)
        assert info.value.field == field
        assert isinstance(info.value, ValueError)

    def test_bad_message_names_the_entry(self) -> None:
        """A message without a role is an InvalidEntryError naming the entry."""
        with pytest.raises(ptree.InvalidEntryError) as info:
            entry_from_json(
                {
                    "type": "message",
                    "id": "m",
                    "parentId": None,
                    "timestamp": T0,
                    "message": {"content": "no role"},
                }
            )
        assert info.value.entry_id == "m"

    @settings(max_examples=200)
    @given(trees())
    def test_every_entry_of_random_trees_round_trips(self, tree: ptree.SessionTree) -> None:
        """entry_from_json(e.to_json()) == e for every kind."""
        for entry in tree.entries():
            assert entry_from_json(entry.to_json()) == entry


class PickledKind(ptree.MessageEntry):
    """A kind of message entry of a caller's own (module level: pickle finds it)."""

    __slots__ = ()


class TestValues:
    def test_equality_hash_pickle(self) -> None:
        """Entries are values: equal by fields, hashable, picklable."""
        a, b = entry_from_json(EXAMPLES[4]), entry_from_json(EXAMPLES[4])
        assert a == b
        assert hash(a) == hash(b)
        assert pickle.loads(pickle.dumps(a)) == a
        assert a != a.evolve(summary="other")

    def test_a_message_entry_subclass_pickles_as_itself(self) -> None:
        """A subclass of MessageEntry comes back of its own kind, its shape unread."""
        back = pickle.loads(
            pickle.dumps(
                PickledKind(id="k", parent_id=None, timestamp=T0, message={"role": "user"})
            )
        )
        assert type(back) is PickledKind
        assert back == PickledKind(id="k", parent_id=None, timestamp=T0, message={"role": "user"})

    def test_frozen(self) -> None:
        """Entry fields refuse assignment."""
        e = entry_from_json(EXAMPLES[1])
        assert isinstance(e, ptree.ThinkingLevelChange)
        with pytest.raises(attrs.exceptions.FrozenInstanceError):
            e.thinking_level = "low"  # type: ignore[misc]

    def test_message_entry_role(self) -> None:
        """A message entry exposes its role."""
        e = entry_from_json(EXAMPLES[0])
        assert isinstance(e, ptree.MessageEntry)
        assert e.role == "user"

    def test_header_round_trip(self) -> None:
        """A v1 header keeps its extra fields; the version defaults to 1 when absent."""
        obj = {
            "type": "session",
            "id": "s",
            "timestamp": T0,
            "cwd": "/w",
            "provider": "anthropic",
            "modelId": "m",
            "thinkingLevel": "off",
        }
        h = ptree.SessionHeader.from_json(obj)
        assert h.version == 1
        assert h.extra == {"provider": "anthropic", "modelId": "m", "thinkingLevel": "off"}
        assert h.to_json(version=1) == {**obj, "version": 1}
        with pytest.raises(ptree.InvalidEntryError):
            ptree.SessionHeader.from_json({"type": "message"})


_LINKS_SCRIPT = r"""
import pickle, sys
if sys.argv[1] == "python":
    sys.modules["ptree._cfrozen"] = None  # as where no C compiler built the extension
import ptree
from ptree import entries
from ptree.entries import MessageEntry
fresh = MessageEntry(id="x", parent_id=None, timestamp="t", message={"role": "user"})
try:
    fresh.seq
except AttributeError:
    unlinked = "unlinked"
else:
    unlinked = "linked"
t = ptree.SessionTree()
for i in range(300):
    t = t.append({"role": "user", "content": str(i)})
t = t.move_to("e100").append({"role": "user", "content": "branch"})
e = t["e301"]
kids = [c.id for c in t.children("e100")]
back = pickle.loads(pickle.dumps(e))
print(type(entries.Entry.__mro__[1]).__name__, entries.Entry.__mro__[1].__name__, unlinked,
      e.seq, e.depth, e.parent_entry.id, t["e300"].depth, kids, back == e,
      hasattr(back, "seq"))
"""


@pytest.mark.parametrize("links", ["c", "python"])
def test_links_read_the_same_with_or_without_the_c_extension(links: str) -> None:
    """An entry's links (parent, depth, position) read the same on the Python slots as
    on the C extension's machine integers: unset until a tree takes the entry in, set
    once, never pickled."""
    import subprocess
    import sys

    from ptree.frozen import COMPILED

    if links == "c" and not COMPILED and os.environ.get("CI") != "true":
        pytest.skip("the C extension is not built here")
    out = subprocess.run(
        [sys.executable, "-c", _LINKS_SCRIPT, links],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split(maxsplit=2)
    base = "Links" if links == "c" else "_Links"
    assert out[1] == base
    # e<k> is the k-th append (position k - 1, depth k - 1); e301 hangs under e100.
    assert out[2].strip() == "unlinked 300 100 e100 299 ['e101', 'e301'] True False"


def test_linked_entries_are_not_tracked_by_the_collector_unless_a_subclass_adds_fields() -> None:
    """Where the C extension is built, an entry a tree has taken in is untracked by the
    cyclic garbage collector (its kind can make no cycle), so full collections never
    walk a big tree's entries; a fresh entry, and an entry of a subclass that adds a
    field (which could hold a cycle), stay tracked."""
    import gc

    from ptree.frozen import COMPILED

    if not COMPILED and os.environ.get("CI") != "true":
        pytest.skip("the C extension is not built here")

    @attrs.frozen(kw_only=True, weakref_slot=False)
    class Noted(ptree.MessageEntry):
        note: Any = None

    fresh = ptree.MessageEntry(id="a", parent_id=None, timestamp="t", message={"role": "user"})
    assert gc.is_tracked(fresh)
    t = ptree.SessionTree.from_entries([fresh])
    t = t.append({"role": "user", "content": "hi"})
    assert not gc.is_tracked(t["a"])
    assert not gc.is_tracked(t["e1"])
    cyclic: list[Any] = []
    noted = Noted(id="n", parent_id="e1", timestamp="t", message={"role": "user"}, note=cyclic)
    t = t.insert(noted)
    cyclic.append(t["n"])  # the cycle the collector must still see
    assert gc.is_tracked(t["n"])
