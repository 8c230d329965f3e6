"""Open WebUI's tool calls: the ``<details type="tool_calls">`` blocks Open WebUI writes
into an answer's text (attribute values HTML-escaped, as its middleware writes them:
``arguments`` and ``result`` are ``html.escape(json.dumps(...))``), and the
``function_call`` items of a structured ``output``, become Pi toolCall blocks and
toolResult messages in the right place; a block without its call stays in the text,
with a warning naming it.  Expected values are written by hand.
"""

from __future__ import annotations

import html
import json
import warnings
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import ptree
from ptree.formats import openwebui


def chat(*messages: dict[str, Any], current: str | None = None) -> dict[str, Any]:
    """A one-chat export of ``messages`` (each ``id``/``parentId``), children filled in."""
    by_id = {m["id"]: dict(m, childrenIds=[]) for m in messages}
    for m in by_id.values():
        if m.get("parentId") in by_id:
            by_id[m["parentId"]]["childrenIds"].append(m["id"])
    last = current or messages[-1]["id"]
    return {
        "id": "c1",
        "title": "Weather",
        "created_at": 0,
        "chat": {"history": {"currentId": last, "messages": by_id}},
    }


def question(mid: str = "u1", parent: str | None = None) -> dict[str, Any]:
    return {"id": mid, "parentId": parent, "role": "user", "content": "weather?", "timestamp": 1}


def answer(content: str, mid: str = "a1", parent: str = "u1", **more: Any) -> dict[str, Any]:
    return {
        "id": mid,
        "parentId": parent,
        "role": "assistant",
        "content": content,
        "timestamp": 2,
        "model": "llama3",
        **more,
    }


def block(call_id: str, name: str, arguments: str, result: Any, **more: str) -> str:
    """A tool-call block as Open WebUI's middleware writes it."""
    extra = "".join(f' {k}="{html.escape(v)}"' for k, v in more.items())
    return (
        f'<details type="tool_calls" done="true" id="{call_id}" name="{name}" '
        f'arguments="{html.escape(json.dumps(arguments))}" '
        f'result="{html.escape(json.dumps(result, ensure_ascii=False))}"{extra}>\n'
        "<summary>Tool Executed</summary>\n</details>\n"
    )


def message(tree: ptree.SessionTree, entry_id: str) -> Any:
    """The message of entry ``entry_id``, which must be a message entry."""
    entry = tree[entry_id]
    assert isinstance(entry, ptree.MessageEntry)
    return entry.message


def messages(tree: ptree.SessionTree) -> list[dict[str, Any]]:
    """The path's messages without the fields every assistant message has alike."""
    out = []
    for entry in tree.path():
        if isinstance(entry, ptree.MessageEntry):
            m = ptree.thaw(entry.message)
            for key in ("api", "provider", "model", "usage", "timestamp"):
                m.pop(key, None)
            out.append(m)
    return out


WEATHER = "The weather in Paris is 18C with rain."


class TestToolCallBlocks:
    def test_a_call_and_its_result_become_a_tool_call_and_a_tool_result(self) -> None:
        """The issue's answer, with the attributes Open WebUI writes: a toolCall, its
        toolResult, then the text after it, in that order on the path."""
        content = block("call_1", "get_weather", '{"city": "Paris"}', "Paris: 18C, rain") + WEATHER
        tree = openwebui.read([chat(question(), answer(content))], cwd="/").tree
        expected = [
            {"role": "user", "content": [{"type": "text", "text": "weather?"}]},
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "toolCall",
                        "id": "call_1",
                        "name": "get_weather",
                        "arguments": {"city": "Paris"},
                    }
                ],
                "stopReason": "toolUse",
            },
            {
                "role": "toolResult",
                "toolCallId": "call_1",
                "toolName": "get_weather",
                "content": [{"type": "text", "text": "Paris: 18C, rain"}],
                "isError": False,
                "details": {"openwebui": {"summary": "Tool Executed"}},
            },
            {
                "role": "assistant",
                "content": [{"type": "text", "text": WEATHER}],
                "stopReason": "stop",
            },
        ]
        assert messages(tree) == expected
        assert [e.id for e in tree.path()] == ["session-name", "u1", "a1", "a1#2", "a1#3"]
        assert tree.leaf_id == "a1#3"

    def test_the_context_sends_the_call_and_its_result(self) -> None:
        """What the model is given at the leaf holds the call and its result."""
        content = block("call_1", "get_weather", '{"city": "Paris"}', "Paris: 18C") + WEATHER
        tree = openwebui.read([chat(question(), answer(content))], cwd="/").tree
        roles = [m["role"] for m in ptree.build_context(tree).messages]
        assert roles == ["user", "assistant", "toolResult", "assistant"]

    def test_a_block_without_attributes_stays_in_the_text_with_a_warning(self) -> None:
        """No name and result: the block is the answer's text, whole, and a warning
        names the message."""
        content = (
            '<details type="tool_calls"><summary>Tool Executed</summary>'
            f'"Paris: 18C, rain"</details>{WEATHER}'
        )
        said: list[str] = []
        tree = openwebui.read(
            [chat(question(), answer(content))], cwd="/", on_report=said.append
        ).tree
        assert message(tree, "a1")["content"] == ({"type": "text", "text": content},)
        assert said == [
            "chats[0].chat.history.messages['a1']: a tool call without its name and "
            "result kept as text"
        ]

    def test_without_a_callback_the_warning_is_a_session_file_warning(self) -> None:
        """Nothing is left out silently: no on_report means a SessionFileWarning."""
        content = '<details type="tool_calls" done="false" name="x"><summary>…</summary></details>'
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            openwebui.read([chat(question(), answer(content))], cwd="/")
        assert [type(w.message) for w in caught] == [ptree.SessionFileWarning]
        assert "a tool call without its name and result kept as text" in str(caught[0].message)

    def test_files_and_other_attributes_are_kept_with_the_result(self) -> None:
        """``files`` (and any attribute ptree has no field for) ride in the result's
        details, decoded from JSON."""
        files = [{"type": "image", "url": "/api/v1/files/f1"}]
        content = block("call_7", "draw", "{}", {"ok": True}, files=json.dumps(files), embeds="[]")
        tree = openwebui.read([chat(question(), answer(content))], cwd="/").tree
        result = message(tree, "a1#2")
        assert result["content"] == ({"type": "text", "text": '{"ok": true}'},)
        assert ptree.thaw(result["details"]) == {
            "openwebui": {"files": files, "embeds": [], "summary": "Tool Executed"}
        }
        assert tree.leaf_id == "a1#2"  # the answer ended with the call

    def test_two_calls_one_step_then_reasoning_and_text(self) -> None:
        """Calls written one after the other are one assistant message with both
        calls; their results follow it in order; the rest is the next message."""
        content = (
            block("c1", "a", '{"n": 1}', "one")
            + block("c2", "b", '{"n": 2}', "two")
            + '<details type="reasoning" done="true"><summary>Thought</summary>\n> so\n</details>\n'
            + "Done."
        )
        tree = openwebui.read([chat(question(), answer(content))], cwd="/").tree
        got = messages(tree)[1:]
        assert [m["role"] for m in got] == ["assistant", "toolResult", "toolResult", "assistant"]
        assert [b["id"] for b in got[0]["content"]] == ["c1", "c2"]
        assert [m["toolCallId"] for m in got[1:3]] == ["c1", "c2"]
        assert got[3]["content"] == [
            {"type": "thinking", "thinking": "so"},
            {"type": "text", "text": "Done."},
        ]

    def test_a_reply_hangs_under_the_last_entry_of_the_answer(self) -> None:
        """The next question's parent is the answer's last entry, so the path keeps the
        call and its result."""
        content = block("c1", "get_weather", "{}", "rain") + WEATHER
        export = chat(question(), answer(content), question("u2", "a1"))
        tree = openwebui.read([export], cwd="/").tree
        assert tree["u2"].parent_id == "a1#3"
        assert [e.id for e in tree.path()] == ["session-name", "u1", "a1", "a1#2", "a1#3", "u2"]

    def test_arguments_written_as_an_object(self) -> None:
        """Some writers give the arguments as a JSON object, not a string of one."""
        content = (
            '<details type="tool_calls" done="true" id="c1" name="f" '
            f'arguments="{html.escape(json.dumps({"q": "x"}))}" result="&quot;ok&quot;">'
            "<summary>Tool Executed</summary></details>"
        )
        tree = openwebui.read([chat(question(), answer(content))], cwd="/").tree
        assert message(tree, "a1")["content"][0]["arguments"] == {"q": "x"}


class TestStructuredOutput:
    def test_function_calls_and_their_outputs(self) -> None:
        """A newer export's ``output``: function_call and function_call_output items are
        a toolCall and its toolResult, the message after them a further answer."""
        output = [
            {"type": "function_call", "call_id": "fc1", "name": "get_weather",
             "arguments": '{"city": "Paris"}'},
            {"type": "function_call_output", "call_id": "fc1", "output": "Paris: 18C"},
            {"type": "message", "content": [{"type": "output_text", "text": WEATHER}]},
        ]  # fmt: skip
        export = chat(question(), answer(WEATHER, output=output))
        tree = openwebui.read([export], cwd="/").tree
        got = messages(tree)[1:]
        assert [m["role"] for m in got] == ["assistant", "toolResult", "assistant"]
        assert got[0]["content"] == [
            {"type": "toolCall", "id": "fc1", "name": "get_weather", "arguments": {"city": "Paris"}}
        ]
        assert got[1]["content"] == [{"type": "text", "text": "Paris: 18C"}]
        assert got[2]["content"] == [{"type": "text", "text": WEATHER}]


@st.composite
def answers(draw: st.DrawFn) -> tuple[str, list[tuple[str, Any]]]:
    """An answer's text made of text, reasoning and tool-call pieces, and what each is."""
    pieces: list[tuple[str, Any]] = []
    text = ""
    words = st.text(st.sampled_from("abc xyz<>&\"'\n"), min_size=1, max_size=12).filter(
        lambda t: t.strip() and "<details" not in t and "</details>" not in t
    )
    for n in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["text", "call"]))
        if kind == "text":
            said = draw(words).strip()
            text += said + "\n"
            pieces.append(("text", said))
        else:
            args = {"q": draw(words)}
            result = draw(st.one_of(words, st.integers(), st.lists(st.integers(), max_size=3)))
            text += block(f"call-{n}", f"tool{n}", json.dumps(args), result)
            pieces.append(("call", (f"call-{n}", f"tool{n}", args, result)))
    return text, pieces


@settings(max_examples=60)
@given(answers())
def test_every_piece_is_kept_in_order(case: tuple[str, list[tuple[str, Any]]]) -> None:
    """Whatever the mix, the path holds every call with its arguments and result, and
    every piece of text, in the order of the answer; each call's result follows its
    call's message."""
    content, pieces = case
    tree = openwebui.read([chat(question(), answer(content))], cwd="/").tree
    seen: list[tuple[str, Any]] = []
    calls: dict[str, tuple[str, Any]] = {}
    for m in messages(tree)[1:]:
        if m["role"] == "assistant":
            for b in m["content"]:
                if b["type"] == "toolCall":
                    calls[b["id"]] = (b["name"], b["arguments"])
                elif b["type"] == "text":
                    seen.extend(("text", t) for t in b["text"].split("\n") if t.strip())
        else:
            name, args = calls.pop(m["toolCallId"])
            text = m["content"][0]["text"]
            seen.append(("call", (m["toolCallId"], name, args, text)))
    expected: list[tuple[str, Any]] = []
    for kind, value in pieces:
        if kind == "text":
            expected.extend(("text", t) for t in value.split("\n") if t.strip())
        else:
            call_id, name, args, result = value
            shown = result if isinstance(result, str) else json.dumps(result)
            expected.append(("call", (call_id, name, args, shown)))
    assert seen == expected
    assert not calls
