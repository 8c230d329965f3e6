"""Pi 1.6's kinds and rules through ptree's own API (expected values written by hand;
the same behaviour is checked against Pi 1.6 itself in ``test_pi16.py``)."""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any, TypeVar

import pytest

import ptree
from ptree import (
    Compaction,
    ContextEdit,
    CustomMessage,
    SessionTree,
    Usage,
    build_context,
    dump,
    load,
    thaw,
)
from ptree.context import to_provider_messages
from ptree.entries import entry_from_json

TS = "2026-11-20T09:00:00.000Z"
_T = TypeVar("_T")


def as_(value: object, cls: type[_T]) -> _T:
    """``value``, checked to be a ``cls`` (for the type checker and the test)."""
    assert isinstance(value, cls), value
    return value


USAGE = {"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 3}


def line(type_: str, eid: str = "x", parent: str | None = None, **fields: Any) -> dict[str, Any]:
    """An entry line as a file holds it."""
    return {"type": type_, "id": eid, "parentId": parent, "timestamp": TS, **fields}


class TestEntryKinds:
    """usage and context_edit are typed, frozen, round-trip exactly, pickle."""

    @pytest.mark.parametrize(
        ("obj", "cls"),
        [
            (line("usage", kind="cache_warm", provider="p", model="m", usage=USAGE), Usage),
            (line("usage", kind="k", provider="p", model="m", usage=USAGE, note="n"), Usage),
            (line("context_edit", targetId="a", replacement=None), ContextEdit),
            (line("context_edit", targetId="a", replacement={"content": "t", "z": 1}), ContextEdit),
            (line("compaction", summary="s", tokensBefore=1), Compaction),
            (line("compaction", summary="s", tokensBefore=1, firstKeptEntryId=None), Compaction),
            (
                line(
                    "compaction",
                    summary="s",
                    firstKeptEntryId="x",
                    tokensBefore=1,
                    usage=USAGE,
                    systemMessage={"role": "system", "content": "P", "timestamp": 0},
                ),
                Compaction,
            ),
            (line("branch_summary", fromId="root", summary="s", usage=USAGE), ptree.BranchSummary),
            (line("custom_message", customType="t", content=None, display=None), CustomMessage),
            (line("custom_message", customType="t"), CustomMessage),
        ],
    )
    def test_round_trip(self, obj: dict[str, Any], cls: type) -> None:
        """The entry has the right class, writes back the same JSON (null stays null,
        absent stays absent), refuses changes and pickles to an equal value."""
        entry = entry_from_json(obj)
        assert type(entry) is cls
        assert entry.to_json() == obj
        assert json.loads(json.dumps(entry.to_json())) == obj
        assert pickle.loads(pickle.dumps(entry)) == entry
        with pytest.raises(AttributeError):
            entry.id = "y"  # type: ignore[misc]

    def test_fields(self) -> None:
        """The typed fields hold what the file says."""
        u = as_(
            entry_from_json(line("usage", kind="k", provider="p", model="m", usage=USAGE)), Usage
        )
        assert (u.kind, u.provider, u.model, thaw(u.usage), u.note) == ("k", "p", "m", USAGE, None)
        c = as_(entry_from_json(line("compaction", summary="s", tokensBefore=1)), Compaction)
        assert (c.first_kept_entry_id, c.usage, c.system_message) == (None, None, None)
        edit = as_(
            entry_from_json(line("context_edit", targetId="a", replacement=None)), ContextEdit
        )
        assert (edit.target_id, edit.replacement, edit.removes) == ("a", None, True)

    @pytest.mark.parametrize(
        ("obj", "field"),
        [
            (line("usage", kind="k", provider="p", model="m"), "usage"),
            (line("usage", kind="k", provider="p", model="m", usage=[1]), "usage"),
            (line("context_edit", targetId="a"), "replacement"),
            (line("context_edit", targetId="a", replacement={"x": 1}), "replacement"),
            (line("context_edit", targetId=5, replacement=None), "targetId"),
            (
                line("compaction", summary="s", tokensBefore=1, firstKeptEntryId=3),
                "firstKeptEntryId",
            ),
            (line("compaction", summary="s", tokensBefore=1, systemMessage="x"), "systemMessage"),
        ],
    )
    def test_invalid(self, obj: dict[str, Any], field: str) -> None:
        """A wrong or missing field is refused, naming it."""
        with pytest.raises(ptree.InvalidEntryError, match=field):
            entry_from_json(obj)

    def test_keep_invalid_sets_optional_fields_aside(self) -> None:
        """keep_invalid keeps the entry, the bad optional field in extra (written back)."""
        obj = line("compaction", summary="s", tokensBefore=1, usage=[1], fromHook="yes")
        entry = as_(entry_from_json(obj, keep_invalid=True), Compaction)
        assert (entry.usage, entry.from_hook, entry.to_json()) == (None, None, obj)
        with pytest.raises(ptree.InvalidEntryError):
            entry_from_json(line("compaction", summary=1, tokensBefore=1), keep_invalid=True)


class TestTreeApi:
    """SessionTree creates the new kinds as Pi 1.6's SessionManager does."""

    def tree(self) -> SessionTree:
        t = SessionTree().append({"role": "system", "content": "P", "timestamp": 5}, id="s")
        t = t.append({"role": "user", "content": "q"}, id="u")
        return t.append({"role": "assistant", "content": [{"type": "text", "text": "a"}]}, id="a")

    def test_append_usage(self) -> None:
        """An empty note is left out; the entry is the leaf and gives no message."""
        t = self.tree().append_usage("cache_warm", "p", "m", USAGE, note="")
        assert as_(t.leaf, Usage).to_json() == {
            "type": "usage",
            "id": t.leaf_id,
            "parentId": "a",
            "timestamp": as_(t.leaf, Usage).timestamp,
            "kind": "cache_warm",
            "provider": "p",
            "model": "m",
            "usage": USAGE,
        }
        assert build_context(t).messages == build_context(t, "a").messages

    def test_append_context_edit(self) -> None:
        """A string for an assistant message becomes one text block; for a user
        message it stays a string; None removes."""
        t = self.tree().append_context_edit("a", "short", id="e1")
        assert thaw(as_(t["e1"], ContextEdit).replacement) == {
            "content": [{"type": "text", "text": "short"}]
        }
        t = t.append_context_edit("u", "Q", id="e2")
        assert thaw(as_(t["e2"], ContextEdit).replacement) == {"content": "Q"}
        assert thaw(build_context(t).messages) == [
            {"role": "system", "content": "P", "timestamp": 5},
            {"role": "user", "content": "Q"},
            {"role": "assistant", "content": [{"type": "text", "text": "short"}]},
        ]
        gone = t.append_context_edit("u", None, id="e3")
        assert [m["role"] for m in build_context(gone).messages] == ["system", "assistant"]

    @pytest.mark.parametrize("target", ["s", "elsewhere"])
    def test_append_context_edit_refuses(self, target: str) -> None:
        """Not a user/assistant/tool-result/custom message, or off the branch."""
        t = self.tree().move_to("u").append({"role": "user", "content": "x"}, id="elsewhere")
        t = t.move_to("a")
        with pytest.raises(ValueError, match=target):
            t.append_context_edit(target, "x")
        with pytest.raises(ptree.UnknownEntryError):
            t.append_context_edit("nope", None)

    def test_append_compaction_checkpoint(self) -> None:
        """The checkpoint folds the context's system messages, timed at the compaction;
        None keeps nothing (the entry names itself)."""
        t = self.tree().append_compaction("sum", None, 7, id="c", timestamp=TS)
        c = as_(t["c"], Compaction)
        assert c.first_kept_entry_id == "c"
        assert thaw(c.system_message) == {
            "role": "system",
            "content": "P",
            "timestamp": ptree.context.iso_to_ms(TS),
        }
        assert [m["role"] for m in build_context(t).messages] == ["system", "compactionSummary"]
        plain = SessionTree().append({"role": "user", "content": "q"}, id="u")
        assert as_(plain.append_compaction("s", "u", 1).leaf, Compaction).system_message is None

    def test_session_names(self) -> None:
        """Written as Pi 1.6 writes them; read with JavaScript's trim."""
        t = SessionTree().append_session_info(" a\r\n\nb \n")
        assert (as_(t.leaf, ptree.SessionInfo).name, t.session_name) == ("a b", "a b")
        odd = SessionTree().insert(
            ptree.SessionInfo(id="n", parent_id=None, timestamp=TS, name=" \u001c ")
        )
        assert odd.session_name == "\u001c"
        bom = SessionTree().insert(
            ptree.SessionInfo(id="n", parent_id=None, timestamp=TS, name="\ufeff")
        )
        assert bom.session_name is None


class TestVersions:
    """pi="0.73.1" gives 0.73.1's meaning; unknown versions are refused."""

    def test_system_messages(self) -> None:
        t = SessionTree().append({"role": "system", "content": "P"}, id="s")
        t = t.append({"role": "user"}, id="u")
        t = t.append_context_edit("u", "x", id="e")
        new, old = build_context(t), build_context(t, pi="0.73.1")
        assert thaw(new.messages) == [
            {"role": "system", "content": "P"},
            {"role": "user", "content": "x"},
        ]
        assert thaw(old.messages) == [{"role": "system", "content": "P"}, {"role": "user"}]
        assert [m["role"] for m in to_provider_messages(new.messages)] == ["system", "user"]
        assert [m["role"] for m in to_provider_messages(old.messages, pi="0.73.1")] == ["user"]

    def test_unknown_version(self) -> None:
        with pytest.raises(ValueError, match="pi must be"):
            build_context(SessionTree(), pi="2.0")  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="pi must be"):
            to_provider_messages([], pi="1.5")  # type: ignore[arg-type]


class TestFilesAndCli:
    """The new kinds survive dump/load and show in `ptree show`."""

    def test_dump_load_show(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        t = SessionTree().append({"role": "user", "content": "long question"}, id="q")
        t = t.append_usage(
            "cache_warm",
            "anthropic",
            "m",
            {"totalTokens": 500, "cost": {"total": 0.5}},
            note="warm",
        )
        t = t.append_context_edit("q", "short")
        t = t.append_context_edit("q", None)
        path = tmp_path / "s.jsonl"
        saved = dump(t, path)
        assert load(path) == saved
        from ptree.cli import main

        assert main(["show", str(path), "--color", "never"]) == 0
        out = capsys.readouterr().out
        assert "usage [cache_warm]: anthropic/m, 500 tokens, $0.5 (warm)" in out
        assert "context edit q: short" in out
        assert "context edit q: (removed)" in out


class TestPi16Features:
    """pi16_features names what only Pi 1.6 writes, each once, in a fixed order."""

    def test_none_in_an_old_style_tree(self) -> None:
        t = SessionTree().append({"role": "user", "content": "q"}, id="u")
        t = t.append({"role": "assistant", "content": "a"}, id="a")
        t = t.append_compaction("s", "u", 1).move_to("u")
        t = t.append_branch_summary("u", "0.73.1 style")
        assert ptree.pi.pi16_features(t) == ()

    def test_all(self) -> None:
        t = SessionTree().append({"role": "system", "content": "P", "timestamp": 0}, id="s")
        t = t.append({"role": "user", "content": "q"}, id="u")
        t = t.append({"role": "assistant", "content": "a"}, id="a")
        t = t.append_context_edit("u", None).append_usage("k", "p", "m", USAGE)
        t = t.append_compaction("s", None, 1, usage=USAGE)
        t = t.move_to("u").append_branch_summary("a", "abandoned a")
        assert ptree.pi.pi16_features(t) == (
            "usage entries",
            "context edits",
            "system messages",
            "compaction checkpoints",
            "summary usage",
            "retain-none compactions",
            "abandoned-leaf fromId",
        )
