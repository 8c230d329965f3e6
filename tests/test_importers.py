"""ChatGPT and Open WebUI exports to session trees (library functions).

The sample exports are built here from the documented formats: ChatGPT's
``conversations.json`` is a list of conversations, each with a ``mapping`` of nodes
(``id``, ``parent``, ``children``, ``message``) and a ``current_node``; Open WebUI's
export is a list of chats with ``chat.history.messages`` (``parentId``,
``childrenIds``) and ``chat.history.currentId``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ptree
from ptree import Custom, CustomMessage, MessageEntry, SessionInfo
from ptree.formats import ImportFormatError, chatgpt, openwebui, write_sessions


def gpt_node(
    nid: str,
    parent: str | None,
    children: list[str],
    role: str | None,
    text: str = "",
    *,
    t: float | None = 1_700_000_000.0,
    **meta: Any,
) -> dict[str, Any]:
    """One ChatGPT mapping node (``role`` None: a node without a message)."""
    message = (
        None
        if role is None
        else {
            "id": nid,
            "author": {"role": role, "name": meta.pop("name", None), "metadata": {}},
            "create_time": t,
            "update_time": None,
            "content": {"content_type": "text", "parts": [text]},
            "status": "finished_successfully",
            "end_turn": True,
            "weight": 1.0,
            "metadata": meta,
            "recipient": "all",
        }
    )
    return {"id": nid, "message": message, "parent": parent, "children": children}


def gpt_conversation() -> dict[str, Any]:
    """An empty root, a hidden system node, a question edited once, an answer regenerated.

    root ─ sys(hidden) ─┬ u1 "What is 2+2?" ─┬ a1 "4"
                        │                    └ a2 "Four." ─ u3 "Thanks"   (current)
                        └ u2 "What is 3+3?" ── a3 "6"
    """
    nodes = [
        gpt_node("root", None, ["sys"], None),
        gpt_node(
            "sys",
            "root",
            ["u1", "u2"],
            "system",
            "",
            t=None,
            is_visually_hidden_from_conversation=True,
        ),
        gpt_node("u1", "sys", ["a1", "a2"], "user", "What is 2+2?", t=1_700_000_001.5),
        gpt_node("a1", "u1", [], "assistant", "4", t=1_700_000_002.0, model_slug="gpt-4o"),
        gpt_node("a2", "u1", ["u3"], "assistant", "Four.", t=1_700_000_003.0, model_slug="gpt-4o"),
        gpt_node("u3", "a2", [], "user", "Thanks", t=1_700_000_004.0),
        gpt_node("u2", "sys", ["a3"], "user", "What is 3+3?", t=1_700_000_005.0),
        gpt_node("a3", "u2", [], "assistant", "6", t=1_700_000_006.0),
    ]
    return {
        "title": "Small sums",
        "create_time": 1_700_000_000.0,
        "update_time": 1_700_000_006.0,
        "mapping": {n["id"]: n for n in nodes},
        "current_node": "u3",
        "conversation_id": "6790b1c2-aaaa-bbbb-cccc-000000000001",
        "id": "6790b1c2",
        "default_model_slug": "gpt-4o-mini",
        "moderation_results": [],
    }


def webui_chat() -> dict[str, Any]:
    """A question answered twice (regenerated), the first answer followed up (current)."""
    messages = {
        "m1": {
            "id": "m1",
            "parentId": None,
            "childrenIds": ["m2", "m3"],
            "role": "user",
            "content": "Name a colour",
            "timestamp": 1_700_000_000,
            "models": ["llama3:8b"],
        },
        "m2": {
            "id": "m2",
            "parentId": "m1",
            "childrenIds": ["m4"],
            "role": "assistant",
            "content": "Blue",
            "timestamp": 1_700_000_001,
            "model": "llama3:8b",
            "done": True,
        },
        "m3": {
            "id": "m3",
            "parentId": "m1",
            "childrenIds": [],
            "role": "assistant",
            "content": "Red",
            "timestamp": 1_700_000_002,
            "model": "mistral:7b",
            "done": True,
        },
        "m4": {
            "id": "m4",
            "parentId": "m2",
            "childrenIds": [],
            "role": "user",
            "content": "Another?",
            "timestamp": 1_700_000_003,
        },
    }
    return {
        "id": "7f3c9e2a-1111-2222-3333-444455556666",
        "user_id": "u",
        "title": "Colours",
        "created_at": 1_700_000_000,
        "updated_at": 1_700_000_003,
        "archived": False,
        "chat": {
            "id": "",
            "title": "Colours",
            "models": ["llama3:8b"],
            "history": {"messages": messages, "currentId": "m4"},
            "messages": list(messages.values()),
            "timestamp": 1_700_000_000_000,
        },
    }


class TestChatgptSessions:
    def test_every_branch_is_kept_and_current_node_is_the_leaf(self) -> None:
        """Edits (u1/u2) and regenerations (a1/a2) are siblings; u3 is the leaf."""
        [s] = list(chatgpt.sessions([gpt_conversation()], cwd="/w"))
        tree = s.tree
        tree._check()
        assert tree.leaf_id == "u3"
        assert [e.id for e in tree.path()] == ["session-name", "u1", "a2", "u3"]
        assert sorted(c.id for c in tree.children("u1")) == ["a1", "a2"]
        assert sorted(c.id for c in tree.children("session-name")) == ["u1", "u2"]
        assert len(tree) == 7

    def test_empty_root_and_hidden_system_give_no_entry(self) -> None:
        """The message-less root and the hidden system node are left out, documented."""
        [s] = list(chatgpt.sessions([gpt_conversation()], cwd="/w"))
        assert "root" not in s.tree
        assert "sys" not in s.tree

    def test_include_hidden_keeps_hidden_nodes_as_custom_entries(self) -> None:
        """include_hidden=True keeps the hidden node as a custom entry on the path."""
        [s] = list(chatgpt.sessions([gpt_conversation()], cwd="/w", include_hidden=True))
        hidden = s.tree["sys"]
        assert isinstance(hidden, Custom)
        assert hidden.custom_type == "chatgpt.hidden"
        assert s.tree.parent("u1") is hidden

    def test_messages_have_pi_shapes(self) -> None:
        """User and assistant messages are Pi messages with ms timestamps and a model."""
        [s] = list(chatgpt.sessions([gpt_conversation()], cwd="/w"))
        user, answer = s.tree["u1"], s.tree["a2"]
        assert isinstance(user, MessageEntry)
        assert isinstance(answer, MessageEntry)
        assert user.message == {
            "role": "user",
            "content": [{"type": "text", "text": "What is 2+2?"}],
            "timestamp": 1_700_000_001_500,
        }
        assert user.timestamp == "2023-11-14T22:13:21.500Z"
        assert answer.message["provider"] == "openai"
        assert answer.message["model"] == "gpt-4o"
        assert answer.message["content"] == [{"type": "text", "text": "Four."}]
        assert s.tree.message("a3")["model"] == "gpt-4o-mini"

    def test_header_name_and_filename(self) -> None:
        """A new session id, the conversation's time, its title as the session name."""
        [s] = list(chatgpt.sessions([gpt_conversation()], cwd="/w"))
        header = s.tree.header
        assert header is not None
        assert header.timestamp == "2023-11-14T22:13:20.000Z"
        assert header.cwd == "/w"
        assert len(header.id) == 36
        assert header.extra["importedFrom"]["format"] == "chatgpt"
        assert s.tree.session_name == "Small sums"
        assert isinstance(s.tree["session-name"], SessionInfo)
        assert s.filename == "small-sums-6790b1c2.jsonl"
        assert s.source_id == "6790b1c2-aaaa-bbbb-cccc-000000000001"

    def test_leaf_entry_is_last_so_pi_cli_opens_the_same_branch(self) -> None:
        """Entries come parents first and the current branch last."""
        [s] = list(chatgpt.sessions([gpt_conversation()], cwd="/w"))
        ids = s.tree.ids()
        assert ids[-1] == "u3"
        for entry in s.tree.entries():
            if entry.parent_id is not None:
                assert ids.index(entry.parent_id) < ids.index(entry.id)

    def test_tool_and_visible_system_messages(self) -> None:
        """Tool outputs become chatgpt.tool custom messages; system text chatgpt.system."""
        nodes = [
            gpt_node("s", None, ["u"], "system", "Be brief."),
            gpt_node("u", "s", ["t"], "user", "search"),
            gpt_node("t", "u", ["a"], "tool", "results...", name="browser"),
            gpt_node("a", "t", [], "assistant", "done"),
        ]
        conv = {
            "title": "",
            "create_time": 1.0,
            "mapping": {n["id"]: n for n in nodes},
            "current_node": "a",
        }
        [s] = list(chatgpt.sessions(conv, cwd="/w"))
        system, tool = s.tree["s"], s.tree["t"]
        assert isinstance(system, CustomMessage)
        assert (system.custom_type, system.display) == ("chatgpt.system", False)
        assert isinstance(tool, CustomMessage)
        assert tool.custom_type == "chatgpt.tool"
        assert tool.details == {"name": "browser"}
        assert s.tree.session_name is None
        assert s.filename == "1.jsonl"

    def test_thoughts_become_thinking_blocks(self) -> None:
        """Reasoning content (thoughts) becomes Pi thinking blocks."""
        node = gpt_node("a", None, [], "assistant")
        node["message"]["content"] = {
            "content_type": "thoughts",
            "thoughts": [{"summary": "s", "content": "hmm"}],
        }
        [s] = list(chatgpt.sessions([{"mapping": {"a": node}, "current_node": "a"}], cwd="/"))
        assert s.tree.message("a")["content"] == [{"type": "thinking", "thinking": "hmm"}]

    def test_missing_parent_and_cycle_are_repaired(self) -> None:
        """A node naming a missing parent is a root; a parent cycle is broken."""
        nodes = [
            gpt_node("a", "ghost", [], "user", "orphan"),
            gpt_node("x", "y", ["y"], "user", "x"),
            gpt_node("y", "x", ["x"], "assistant", "y"),
        ]
        [s] = list(chatgpt.sessions([{"mapping": {n["id"]: n for n in nodes}}], cwd="/"))
        s.tree._check()
        assert len(s.tree) == 3
        assert s.tree["a"].parent_id is None
        assert {s.tree["x"].parent_id, s.tree["y"].parent_id} in ({None, "x"}, {None, "y"})

    def test_filenames_are_unique(self) -> None:
        """Two conversations with the same title and id get different files."""
        sessions = list(chatgpt.sessions([gpt_conversation(), gpt_conversation()], cwd="/"))
        assert [s.filename for s in sessions] == [
            "small-sums-6790b1c2.jsonl",
            "small-sums-6790b1c2-2.jsonl",
        ]

    def test_reads_a_file_one_conversation_at_a_time(self, tmp_path: Path) -> None:
        """A path is read as JSON; each conversation is converted as it is reached."""
        path = tmp_path / "conversations.json"
        path.write_text(json.dumps([gpt_conversation()] * 3), encoding="utf-8")
        found = chatgpt.sessions(path, cwd="/")
        first = next(found)
        assert first.format == "chatgpt"
        assert first.tree.leaf_id == "u3"
        assert len(list(found)) == 2

    @pytest.mark.parametrize(
        ("data", "where"),
        [
            ({"not": "a list"}, "conversations"),
            ([{"title": "x"}], "conversations[0].mapping"),
            ([{"mapping": {"a": 3}}], "conversations[0].mapping['a']"),
            ([{"mapping": {"a": {"message": "text"}}}], "conversations[0].mapping['a'].message"),
        ],
    )
    def test_bad_exports_say_where(self, data: Any, where: str) -> None:
        """A wrong shape raises ImportFormatError (a ValueError) naming the place."""
        with pytest.raises(ImportFormatError) as info:
            list(chatgpt.sessions(data))
        assert info.value.where == where
        assert isinstance(info.value, ValueError)

    def test_not_json(self, tmp_path: Path) -> None:
        """A file that is not JSON is an ImportFormatError with the path."""
        path = tmp_path / "c.json"
        path.write_text("{nope", encoding="utf-8")
        with pytest.raises(ImportFormatError) as info:
            list(chatgpt.sessions(path))
        assert info.value.path == path


def one_conversation(
    nodes: list[dict[str, Any]], current: str | None = None, **extra: Any
) -> ptree.SessionTree:
    """The tree of a ChatGPT conversation of these nodes (checked)."""
    conv: dict[str, Any] = {"mapping": {n["id"]: n for n in nodes}, **extra}
    if current is not None:
        conv["current_node"] = current
    [s] = list(chatgpt.sessions([conv], cwd="/"))
    s.tree._check()
    return s.tree


class TestOddChatgptExports:
    def test_message_less_node_in_the_middle(self) -> None:
        """A null message below the root: its children hang under its parent, all kept."""
        tree = one_conversation(
            [
                gpt_node("r", None, ["u1"], None),
                gpt_node("u1", "r", ["mid"], "user", "q"),
                gpt_node("mid", "u1", ["a1", "a2"], None),
                gpt_node("a1", "mid", [], "assistant", "one"),
                gpt_node("a2", "mid", [], "assistant", "two"),
            ],
            current="a1",
        )
        assert "mid" not in tree
        assert [c.id for c in tree.children("u1")] == ["a2", "a1"]
        assert tree.leaf_id == "a1"

    def test_parts_that_are_not_strings(self) -> None:
        """Image pointers become [image], text parts their text, other values nothing."""
        node = gpt_node("u", None, [], "user")
        node["message"]["content"] = {
            "content_type": "multimodal_text",
            "parts": [
                {"content_type": "image_asset_pointer", "asset_pointer": "file-service://f"},
                "what is this?",
                {"content_type": "audio_transcription", "text": "spoken"},
                42,
                None,
                ["nested"],
                {"content_type": "audio_asset_pointer"},
            ],
        }
        tree = one_conversation([node], current="u")
        assert tree.message("u")["content"] == [
            {"type": "text", "text": "[image]\nwhat is this?\nspoken"}
        ]

    def test_code_execution_output_and_browsing(self) -> None:
        """code (assistant), execution_output and tether_browsing_display (tool) keep text."""
        code = gpt_node("c", None, ["o"], "assistant")
        code["message"]["content"] = {
            "content_type": "code",
            "language": "python",
            "text": "print(1 + 1)",
        }
        out = gpt_node("o", "c", ["b"], "tool", name="python")
        out["message"]["content"] = {"content_type": "execution_output", "text": "2"}
        browse = gpt_node("b", "o", [], "tool", name="browser")
        browse["message"]["content"] = {
            "content_type": "tether_browsing_display",
            "result": "page text",
            "summary": None,
        }
        tree = one_conversation([code, out, browse], current="b")
        assert tree["c"].message["content"][0]["text"] == "print(1 + 1)"  # type: ignore
        for nid, name, text in (("o", "python", "2"), ("b", "browser", "page text")):
            entry = tree[nid]
            assert isinstance(entry, CustomMessage)
            assert entry.custom_type == "chatgpt.tool"
            assert entry.details == {"name": name}
            assert entry.content == ({"type": "text", "text": text},)

    def test_no_current_node_makes_the_newest_branch_current(self) -> None:
        """Without current_node the leaf is reached through each node's last child."""
        tree = one_conversation(
            [
                gpt_node("u", None, ["a1", "a2"], "user", "q"),
                gpt_node("a1", "u", ["f"], "assistant", "one"),
                gpt_node("f", "a1", [], "user", "more"),
                gpt_node("a2", "u", [], "assistant", "two"),
            ]
        )
        assert tree.leaf_id == "a2"
        assert len(tree) == 4

    def test_hidden_current_node_gives_its_visible_ancestor(self) -> None:
        """current_node on a hidden node: the leaf is the nearest ancestor that is kept."""
        tree = one_conversation(
            [
                gpt_node("u", None, ["a"], "user", "q"),
                gpt_node("a", "u", ["h"], "assistant", "one"),
                gpt_node(
                    "h", "a", [], "system", "context", is_visually_hidden_from_conversation=True
                ),
            ],
            current="h",
        )
        assert "h" not in tree
        assert tree.leaf_id == "a"

    def test_current_node_unknown(self) -> None:
        """A current_node naming no node: as if there were none, no error."""
        tree = one_conversation([gpt_node("u", None, [], "user", "q")], current="zz")
        assert tree.leaf_id == "u"

    def test_long_cycle_does_not_hang(self) -> None:
        """A cycle of 10,000 nodes with no root: one becomes the root, all are kept."""
        n = 10_000
        nodes = [
            gpt_node(f"n{i}", f"n{(i - 1) % n}", [f"n{(i + 1) % n}"], "user", str(i))
            for i in range(n)
        ]
        tree = one_conversation(nodes, current="n5")
        assert len(tree) == n
        assert len(tree.roots()) == 1

    def test_two_nodes_with_one_id_are_both_kept(self) -> None:
        """Node ids that clash (key and id disagree) never drop a node."""
        first = gpt_node("b", None, [], "user", "first")
        second = gpt_node("b", None, [], "user", "second")
        [s] = list(chatgpt.sessions([{"mapping": {"a": first, "b": second}}], cwd="/"))
        s.tree._check()
        texts = sorted(e.message["content"][0]["text"] for e in s.tree.entries())  # type: ignore
        assert texts == ["first", "second"]

    def test_titles_and_ids_cannot_leave_the_folder(self, tmp_path: Path) -> None:
        """'..', '/' and '\\' in titles and ids never make a file outside -o DIR, and
        clashing titles and ids never overwrite one another."""
        conv = {"mapping": {"u": gpt_node("u", None, [], "user", "q")}, "current_node": "u"}
        odd = [
            ("../../etc/passwd", "c1"),
            ("../../etc/passwd", "c1"),
            ("a/b\\c", "../../x"),
            ("..", ".."),
            (".", "."),
            ("", ""),
            (None, None),
            ("x" * 300, "y" * 300),
        ]
        convs = [dict(conv, title=t, conversation_id=c) for t, c in odd]
        out = tmp_path / "out"
        paths = write_sessions(chatgpt.sessions(convs, cwd="/"), out)
        assert len(set(paths)) == len(convs)
        assert sorted(p.name for p in out.iterdir()) == sorted(p.name for p in paths)
        assert all(p.parent == out and not p.name.startswith(".") for p in paths)
        assert all(len(p.name) < 100 for p in paths)
        assert [p.name for p in tmp_path.iterdir()] == ["out"]

    def test_empty_export(self, tmp_path: Path) -> None:
        """An empty list: no sessions, no files, no error."""
        assert list(chatgpt.sessions([])) == []
        assert write_sessions(chatgpt.sessions([]), tmp_path / "o") == []


class TestOpenwebuiSessions:
    def test_every_branch_is_kept_and_current_id_is_the_leaf(self) -> None:
        """Regenerated answers are siblings; currentId is the leaf."""
        [s] = list(openwebui.sessions([webui_chat()], cwd="/w"))
        tree = s.tree
        tree._check()
        assert tree.leaf_id == "m4"
        assert [e.id for e in tree.path()] == ["session-name", "m1", "m2", "m4"]
        assert [c.id for c in tree.children("m1")] == ["m3", "m2"]  # current branch last
        assert tree.ids()[-1] == "m4"

    def test_messages_have_pi_shapes(self) -> None:
        """Content strings become text blocks; seconds become ms; the model is kept."""
        [s] = list(openwebui.sessions([webui_chat()], cwd="/w"))
        red = s.tree["m3"]
        assert isinstance(red, MessageEntry)
        assert red.message["content"] == [{"type": "text", "text": "Red"}]
        assert red.message["model"] == "mistral:7b"
        assert red.message["provider"] == "openwebui"
        assert red.message["timestamp"] == 1_700_000_002_000
        assert s.tree.header is not None
        assert s.tree.header.timestamp == "2023-11-14T22:13:20.000Z"
        assert s.filename == "colours-7f3c9e2a.jsonl"

    def test_a_single_chat_object_is_accepted(self) -> None:
        """One chat (not in a list), even without the outer wrapper, is read."""
        assert len(list(openwebui.sessions(webui_chat(), cwd="/"))) == 1
        assert len(list(openwebui.sessions(webui_chat()["chat"], cwd="/"))) == 1

    def test_system_message(self) -> None:
        """A system message with text becomes an openwebui.system custom message."""
        chat = webui_chat()
        messages = chat["chat"]["history"]["messages"]
        messages["s"] = {
            "id": "s",
            "parentId": None,
            "childrenIds": ["m1"],
            "role": "system",
            "content": "Be nice",
            "timestamp": 1_699_999_999,
        }
        messages["m1"]["parentId"] = "s"
        [s] = list(openwebui.sessions([chat], cwd="/"))
        system = s.tree["s"]
        assert isinstance(system, CustomMessage)
        assert system.custom_type == "openwebui.system"
        assert s.tree.parent("m1") is system

    def test_bad_export(self) -> None:
        """A chat without history is an ImportFormatError naming the place."""
        with pytest.raises(ImportFormatError) as info:
            list(openwebui.sessions([{"id": "x", "chat": {"title": "t"}}]))
        assert info.value.where == "chats[0].chat.history"


@st.composite
def gpt_trees(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, str | None], str]:
    """A random ChatGPT conversation: its mapping (in a random order), parents, current."""
    n = draw(st.integers(1, 30))
    parents: dict[str, str | None] = {"n0": None}
    for i in range(1, n):
        parents[f"n{i}"] = f"n{draw(st.integers(0, i - 1))}"
    order = draw(st.permutations(sorted(parents)))
    nodes = {}
    for nid in order:
        kids = [c for c in parents if parents[c] == nid]
        role = draw(st.sampled_from(["user", "assistant"]))
        nodes[nid] = gpt_node(nid, parents[nid], draw(st.permutations(kids)), role, nid)
    current = draw(st.sampled_from(sorted(parents)))
    return (
        {"title": "t", "create_time": 1.0, "mapping": nodes, "current_node": current},
        parents,
        current,
    )


class TestImportProperties:
    @settings(max_examples=200)
    @given(gpt_trees())
    def test_shape_is_kept(self, case: tuple[dict[str, Any], dict[str, str | None], str]) -> None:
        """Every node is an entry under the same parent; current node is the leaf and
        the last entry (Pi's CLI takes the last entry as the leaf); every other parent
        comes before its children."""
        conv, parents, current = case
        [s] = list(chatgpt.sessions([conv], cwd="/"))
        tree = s.tree
        tree._check()
        assert len(tree) == len(parents) + 1
        for nid, parent in parents.items():
            assert tree[nid].parent_id == (parent or "session-name")
        assert tree.leaf_id == current
        ids = tree.ids()
        position = {eid: i for i, eid in enumerate(ids)}
        for entry in tree.entries():
            if entry.parent_id is not None and entry.parent_id != current:
                assert position[entry.parent_id] < position[entry.id]
        assert ids[-1] == current
        # Siblings keep the order the parent lists them in, except that the child
        # toward the current node comes last.
        for nid, node in conv["mapping"].items():
            on_path = {e.id for e in tree.path()}
            listed = [c for c in node["children"] if c not in on_path]
            assert [c.id for c in tree.children(nid) if c.id not in on_path] == listed


class TestImportFunctions:
    def test_write_sessions_writes_one_file_per_conversation(self, tmp_path: Path) -> None:
        """write_sessions writes one loadable file per conversation, named by each."""
        paths = write_sessions(
            chatgpt.sessions([gpt_conversation(), gpt_conversation()], cwd="/w"), tmp_path / "out"
        )
        assert [p.name for p in paths] == [
            "small-sums-6790b1c2.jsonl",
            "small-sums-6790b1c2-2.jsonl",
        ]
        tree = ptree.load(paths[0])
        assert tree.leaf_id == "u3"
        assert len(tree) == 7

    def test_openwebui_sessions_are_written(self, tmp_path: Path) -> None:
        """write_sessions writes the chat; loading it gives the same tree."""
        [path] = write_sessions(openwebui.sessions([webui_chat()], cwd="/w"), tmp_path)
        [session] = list(openwebui.sessions([webui_chat()], cwd="/w"))
        loaded = ptree.load(path)
        assert [e.to_json() for e in loaded.entries()] == [
            e.to_json() for e in session.tree.entries()
        ]
        assert loaded.leaf_id == "m4"

    def test_bad_export_writes_nothing_when_strict(self, tmp_path: Path) -> None:
        """strict=True: a bad conversation anywhere in the export, no file is written."""
        with pytest.raises(ImportFormatError):
            write_sessions(
                chatgpt.sessions([gpt_conversation(), {"title": "broken"}], strict=True),
                tmp_path / "out",
            )
        assert not (tmp_path / "out").exists()

    def test_broken_conversation_is_skipped_with_a_warning(self, tmp_path: Path) -> None:
        """By default a conversation with ``mapping: null`` is skipped, named in a
        warning, and the others are written."""
        broken = {"title": "broken", "id": "b-1", "mapping": None}
        with pytest.warns(
            ptree.SessionFileWarning,
            match=r"conversations\[1\] 'broken' "
            r"'b-1': conversations\[1\].mapping: expected an object, found null",
        ):
            paths = write_sessions(chatgpt.sessions([gpt_conversation(), broken]), tmp_path / "out")
        assert [p.name for p in paths] == ["small-sums-6790b1c2.jsonl"]
        said: list[str] = []
        list(chatgpt.sessions([broken, gpt_conversation()], on_report=said.append))
        assert said == [
            "skipped conversations[0] 'broken' 'b-1': conversations[0].mapping: "
            "expected an object, found null"
        ]

    def test_existing_files_are_not_replaced(self, tmp_path: Path) -> None:
        """A second import into the same folder refuses (FileExistsError, nothing
        written) unless force=True."""
        [path] = write_sessions(chatgpt.sessions([gpt_conversation()]), tmp_path)
        path.write_text("mine", encoding="utf-8")
        with pytest.raises(FileExistsError):
            write_sessions(chatgpt.sessions([gpt_conversation()]), tmp_path)
        assert path.read_text(encoding="utf-8") == "mine"
        write_sessions(chatgpt.sessions([gpt_conversation()]), tmp_path, force=True)
        assert ptree.load(path).leaf_id == "u3"
