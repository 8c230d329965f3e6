"""``Context.messages`` (:class:`ptree.Messages`): the tuple of a context's messages, read
when first asked for.

The expected values never come from ``Messages``: a message the context gives as
stored is expected to be the ``message`` of its line in the file, read by plain
``json.loads`` and frozen (``ptree.freeze``), and the value a ``Messages`` stands for is
the plain tuple of those.  Which entries the context selects is checked elsewhere
(``test_context.py`` against a naive reference and Pi itself, ``test_path_stream.py``
lazily loaded against decoded at load); here, what ``sources()`` says an item is (an
entry standing for its stored message, or the message itself) only names the line.
"""

from __future__ import annotations

import copy
import json
import pickle
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ptree
from ptree import Context, MessageEntry, Messages, SessionTree, build_context, dump, load
from ptree.context import current_system_message
from ptree.entries import LazyMessageEntry
from ptree.pi import fast
from tests.helpers import HEADER, message_line
from tests.strategies import messages_16, system_messages, trees

# The three ways the Pi reader reads a plain message line: the C scanner, msgspec one
# line at a time (no C extension), every message decoded at load.
READERS = {"C": ("C", True), "msgspec": ("msgspec", True), "decoded at load": ("none", False)}


def load_with(path: Path, reader: str) -> SessionTree:
    """The file loaded the way ``reader`` names (see READERS)."""
    saved = fast.SCANNER, fast.AVAILABLE
    fast.SCANNER, fast.AVAILABLE = READERS[reader]  # type: ignore[assignment]
    try:
        return load(path)
    finally:
        fast.SCANNER, fast.AVAILABLE = saved


def stored_messages(path: Path) -> dict[str, Any]:
    """Each message entry's message, by id: the file's lines read by ``json.loads``
    and frozen."""
    out = {}
    for text in path.read_text(encoding="utf-8").splitlines()[1:]:
        obj = json.loads(text)
        if obj.get("type") == "message":
            out[obj["id"]] = ptree.freeze(obj["message"])
    return out


def expected_tuple(messages: Messages, path: Path) -> tuple[Any, ...]:
    """The plain tuple ``messages`` must stand for: a stored message as its line
    holds it (json.loads + freeze), any other item as it is."""
    stored = stored_messages(path)
    return tuple(stored[s.id] if isinstance(s, MessageEntry) else s for s in messages.sources())


def undecoded(messages: Messages) -> set[int]:
    """The places of the messages still undecoded (their entry keeps its source)."""
    return {
        i
        for i, s in enumerate(messages.sources())
        if isinstance(s, LazyMessageEntry) and s.undecoded() is not None
    }


def session_file(folder: Path, messages: list[str]) -> Path:
    """A version-3 session of these raw messages, each the child of the one before."""
    path = folder / "s.jsonl"
    lines = [json.dumps(HEADER)]
    for i, raw in enumerate(messages):
        lines.append(message_line(f"m{i}", f"m{i - 1}" if i else None, raw))
    path.write_text("".join(x + "\n" for x in lines), encoding="utf-8")
    return path


@pytest.fixture
def dumped() -> Iterator[Callable[[SessionTree], Path]]:
    with tempfile.TemporaryDirectory() as d:
        made = 0

        def write(tree: SessionTree) -> Path:
            nonlocal made
            made += 1
            path = Path(d) / f"s{made}.jsonl"
            dump(tree, path)
            return path

        yield write


# ----------------------------------------------------------------- a value like the tuple


class TestLikeTheTuple:
    """A context's messages compare, hash, print, pickle and slice as the plain tuple of
    the messages they stand for, whichever reader loaded the file, read or not."""

    @settings(
        max_examples=60,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )
    @given(
        trees(max_steps=25, pi16=True),
        st.sampled_from(sorted(READERS)),
        st.sampled_from(["1.6", "0.73.1"]),
        st.data(),
    )
    def test_equal_hash_repr_pickle(
        self,
        dumped: Callable[[SessionTree], Path],
        tree: SessionTree,
        reader: str,
        pi: Any,
        data: st.DataObject,
    ) -> None:
        """Each operation first on a freshly loaded file (nothing read yet), then on the
        messages all read."""
        path = dumped(tree)
        leaf = data.draw(st.sampled_from([None, *tree.ids()]))

        def fresh() -> Messages:
            return build_context(load_with(path, reader), leaf, pi=pi).messages

        expected = expected_tuple(fresh(), path)
        checks: list[Callable[[Messages], None]] = [
            lambda m: _assert_same(m == expected, True),
            lambda m: _assert_same(expected == m, True),
            lambda m: _assert_same(m != expected, False),
            lambda m: _assert_same(expected != m, False),
            lambda m: _assert_same(hash(m), hash(expected)),
            lambda m: _assert_same(repr(m), repr(expected)),
            lambda m: _assert_same(len(m), len(expected)),
            lambda m: _assert_same(list(m), list(expected)),
            lambda m: _assert_same(list(reversed(m)), list(reversed(expected))),
            lambda m: _assert_same(bool(m), bool(expected)),
            lambda m: _assert_unpickles(m, expected),
            lambda m: _assert_same(ptree.thaw(m), json.loads(json.dumps(expected))),
        ]
        for check in checks:
            check(fresh())  # nothing read yet
        messages = fresh()
        list(messages)
        for check in checks:
            check(messages)  # every message read
        assert messages == fresh() == messages[:]
        assert isinstance(messages, Sequence)
        assert not isinstance(messages, tuple)

    @settings(
        max_examples=40,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )
    @given(trees(max_steps=25, pi16=True), st.sampled_from(sorted(READERS)), st.data())
    def test_sequence_operations(
        self,
        dumped: Callable[[SessionTree], Path],
        tree: SessionTree,
        reader: str,
        data: st.DataObject,
    ) -> None:
        """Indexing, slicing, ``+``, ``*``, ``in``, ``index`` and ``count`` give what the
        tuple gives; a slice, a sum and a product are Messages again."""
        path = dumped(tree)
        messages = build_context(load_with(path, reader)).messages
        expected = expected_tuple(messages, path)
        n = len(expected)
        if n:
            i = data.draw(st.integers(-n, n - 1))
            assert messages[i] == expected[i]
            assert expected[i] in messages
            assert messages.index(expected[i]) == expected.index(expected[i])
            assert messages.count(expected[i]) == expected.count(expected[i])
        with pytest.raises(IndexError):
            messages[n]
        start = data.draw(st.none() | st.integers(-n - 2, n + 2))
        stop = data.draw(st.none() | st.integers(-n - 2, n + 2))
        step = data.draw(st.none() | st.sampled_from([1, 2, 3, -1, -2]))
        part = messages[start:stop:step]
        assert type(part) is Messages
        assert part == expected[start:stop:step]
        assert expected[start:stop:step] == part
        for made, want in [
            (messages + expected, expected + expected),
            (expected + messages, expected + expected),
            (messages + messages, expected + expected),
            (messages * 2, expected * 2),
            (2 * messages, expected * 2),
        ]:
            assert type(made) is Messages
            assert made == want
            assert want == made
        assert {"role": "never-in-a-context"} not in messages

    def test_not_equal_to_what_a_tuple_is_not_equal_to(self) -> None:
        """Unequal lengths, unequal messages and other types are unequal, as for a
        tuple (a list is not a tuple); a FrozenList compares as a tuple does."""
        t = SessionTree().append({"role": "user", "content": "a"})
        t = t.append({"role": "user", "content": "b"})
        messages = build_context(t).messages
        a = {"role": "user", "content": "a"}
        b = {"role": "user", "content": "b"}
        assert messages == (a, b)
        assert messages != (a,)
        assert messages != (a, a)
        assert (b, a) != messages
        assert messages != [a, b]
        assert [a, b] != messages
        assert messages != "ab"
        assert messages == ptree.FrozenList([a, b])
        assert ptree.FrozenList([a, b]) == messages
        assert Messages() == () == Messages([])
        assert build_context(SessionTree()).messages == ()

    def test_a_context_is_equal_whatever_holds_its_messages(self, tmp_path: Path) -> None:
        """A context read lazily equals (and hashes like) one made by hand of the plain
        tuple of its messages, on either side of ``==``."""
        path = session_file(tmp_path, ['{"role":"user","content":"hi"}'] * 3)
        ctx = build_context(load_with(path, "C"))
        expected = expected_tuple(ctx.messages, path)
        by_hand = Context(expected, ctx.model, ctx.thinking_level, ctx.active_tools, ctx.leaf_id)
        assert type(by_hand.messages) is Messages
        assert ctx == by_hand
        assert by_hand == ctx
        assert hash(ctx) == hash(by_hand)
        assert repr(ctx) == repr(by_hand)
        assert pickle.loads(pickle.dumps(ctx)) == by_hand

    def test_a_context_pickled_with_a_tuple_unpickles_with_messages(self) -> None:
        """A context pickled before issue 26 held its messages in a plain tuple;
        unpickled now, it has a :class:`Messages`, as a new one would."""
        message = ptree.freeze({"role": "user", "content": "hi"})
        old = object.__new__(Context)
        fields = {"messages": (message,), "model": None, "thinking_level": "high"}
        for name, value in {**fields, "active_tools": ("read",), "leaf_id": "e1"}.items():
            object.__setattr__(old, name, value)
        assert isinstance(old.__getstate__()["messages"], tuple)  # as older versions held it
        back = pickle.loads(pickle.dumps(old))
        assert type(back.messages) is Messages
        assert list(back.messages) == [{"role": "user", "content": "hi"}]
        assert back == Context((message,), None, "high", ("read",), "e1")
        # attrs before 22.2 pickled the fields as a tuple, in order.
        older = object.__new__(Context)
        older.__setstate__(((message,), None, "off", None, "e2"))
        assert type(older.messages) is Messages
        assert older == Context((message,), leaf_id="e2")


def _assert_same(actual: Any, expected: Any) -> None:
    assert actual == expected


def _assert_unpickles(messages: Messages, expected: tuple[Any, ...]) -> None:
    back = pickle.loads(pickle.dumps(messages))
    assert type(back) is Messages
    assert back == expected
    assert expected == back
    assert hash(back) == hash(expected)


# ----------------------------------------------------------------- read when first asked


class TestReadOnFirstUse:
    @pytest.mark.parametrize("reader", ["C", "msgspec"])
    def test_building_reads_nothing_and_one_read_reads_one(
        self, tmp_path: Path, reader: str
    ) -> None:
        """A context of user messages reads none of them; asking for one message decodes
        that one alone, and it is its entry's own message from then on."""
        raws = [json.dumps({"role": "user", "content": f"m{i}"}) for i in range(6)]
        path = session_file(tmp_path, raws)
        messages = build_context(load_with(path, reader)).messages
        assert undecoded(messages) == set(range(6))
        assert len(messages) == 6
        part = messages[1:4]
        assert undecoded(messages) == set(range(6))
        assert part[1] == {"role": "user", "content": "m2"}
        assert undecoded(messages) == {0, 1, 3, 4, 5}
        assert messages[-3] == {"role": "user", "content": "m3"}
        assert undecoded(messages) == {0, 1, 4, 5}
        entry = messages.sources()[2]
        assert messages[2] is entry.message
        assert messages[2] is part[1]

    def test_two_contexts_of_one_tree_compare_without_reading(self, tmp_path: Path) -> None:
        """Two contexts sharing the same entries are equal without a message read."""
        path = session_file(tmp_path, ['{"role":"user","content":"x"}'] * 4)
        tree = load_with(path, "C")
        first, second = build_context(tree), build_context(tree)
        assert first == second
        assert first.messages[1:] == second.messages[1:]
        assert undecoded(first.messages) == {0, 1, 2, 3}

    def test_a_compaction_reads_only_the_system_messages(self, tmp_path: Path) -> None:
        """append_compaction folds the context's system messages into its checkpoint:
        the other messages stay unread."""
        raws = ['{"role":"system","content":"Be brief.","timestamp":7}']
        raws += [json.dumps({"role": "user", "content": f"u{i}"}) for i in range(5)]
        tree = load_with(session_file(tmp_path, raws), "C")
        compacted = tree.append_compaction("said hi", None, 10)
        assert isinstance(compacted.leaf, ptree.Compaction)
        checkpoint = compacted.leaf.system_message
        assert checkpoint is not None
        assert checkpoint["content"] == "Be brief."
        assert undecoded(build_context(tree).messages) == {1, 2, 3, 4, 5}

    @settings(
        max_examples=40,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )
    @given(
        st.lists(messages_16 | system_messages, max_size=12),
        st.sampled_from(sorted(READERS)),
    )
    def test_system_fold_reads_by_shape(
        self, dumped: Callable[[SessionTree], Path], chain: list[Any], reader: str
    ) -> None:
        """current_system_message of a context's Messages (which skips stored messages
        whose shape is not a system message's) is that of the plain tuple."""
        tree = SessionTree()
        for message in chain:
            tree = tree.append(message)
        path = dumped(tree)
        messages = build_context(load_with(path, reader)).messages
        expected = current_system_message(expected_tuple(messages, path))
        assert current_system_message(messages) == expected

    @settings(
        max_examples=60,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )
    @given(trees(max_steps=25, pi16=True), st.sampled_from(["C", "msgspec"]), st.data())
    def test_reading_one_decodes_that_one(
        self,
        dumped: Callable[[SessionTree], Path],
        tree: SessionTree,
        reader: str,
        data: st.DataObject,
    ) -> None:
        """On random trees: building the context decodes none of the loaded messages
        it gives as stored but the one the walk reads for the model (the latest
        assistant message); reading message i then decodes message i alone, and gives
        the message its line holds."""
        path = dumped(tree)
        messages = build_context(load_with(path, reader)).messages
        lazy = {i for i, s in enumerate(messages.sources()) if isinstance(s, LazyMessageEntry)}
        before = undecoded(messages)
        assert len(lazy - before) <= 1
        if not messages:
            return
        i = data.draw(st.integers(0, len(messages) - 1))
        got = messages[i]
        assert undecoded(messages) == before - {i}
        assert got == expected_tuple(messages, path)[i]


class TestThreads:
    @pytest.mark.parametrize("reader", ["C", "msgspec"])
    def test_concurrent_readers_get_the_same_objects(self, tmp_path: Path, reader: str) -> None:
        """Eight threads reading every message of one undecoded context at once each get
        the very same objects, equal to the lines' messages."""
        raws = [
            json.dumps({"role": "user", "content": [{"type": "text", "text": f"t{i}" * 50}]})
            for i in range(300)
        ]
        path = session_file(tmp_path, raws)
        messages = build_context(load_with(path, reader)).messages
        assert len(undecoded(messages)) == 300
        start = threading.Barrier(8)
        seen: list[list[Any]] = []

        def read() -> None:
            start.wait()
            got = [messages[i] for i in range(len(messages))]
            seen.append(got)

        threads = [threading.Thread(target=read) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(seen) == 8
        for got in seen[1:]:
            assert all(a is b for a, b in zip(got, seen[0], strict=True))
        assert tuple(seen[0]) == expected_tuple(messages, path)
        assert undecoded(messages) == set()


# ----------------------------------------------------------------- made by hand


class TestMadeByHand:
    def test_any_iterable_kept_as_given(self) -> None:
        """A list, a generator, a tuple: the very objects given, in order."""
        a, b = {"role": "user", "content": "a"}, {"role": "assistant", "content": []}
        makers: list[Callable[[], Any]] = [
            lambda: [a, b],
            lambda: (a, b),
            lambda: (m for m in (a, b)),
            lambda: Messages([a, b]),
        ]
        for make in makers:
            for messages in (Messages(make()), Context(messages=make()).messages):
                assert type(messages) is Messages
                assert messages == (a, b)
                assert messages[0] is a
                assert messages[1] is b

    def test_an_entry_is_not_a_message(self) -> None:
        """A MessageEntry among the messages is refused, naming its place."""
        leaf = SessionTree().append({"role": "user", "content": "x"}).leaf
        assert type(leaf) is MessageEntry
        entry: Any = leaf  # what a caller might pass by mistake
        with pytest.raises(ptree.InvalidMessageError) as caught:
            Messages([{"role": "user"}, entry])
        assert caught.value.where == "messages[1]"
        with pytest.raises(ptree.InvalidMessageError):
            Context(messages=(entry,))
        with pytest.raises(ptree.InvalidMessageError):
            build_context(SessionTree()).messages + (entry,)  # noqa: RUF005 - the operator

    def test_immutable(self) -> None:
        """No attribute can be set or deleted; a copy is the value itself; a deep copy
        of plain dicts copies them, as a tuple's does."""
        plain = {"role": "user", "content": ["x"]}
        messages = Messages([plain])
        with pytest.raises(AttributeError):
            messages._items = ()
        with pytest.raises(AttributeError):
            del messages._items
        with pytest.raises(AttributeError):
            messages.extra = 1
        assert copy.copy(messages) is messages
        deep = copy.deepcopy(messages)
        assert deep == (plain,)
        assert deep[0] is not plain

    def test_not_hashable_when_a_message_is_not(self) -> None:
        """As for a tuple: a plain dict inside makes it unhashable."""
        with pytest.raises(TypeError):
            hash(Messages([{"role": "user"}]))
        with pytest.raises(TypeError):
            hash(({"role": "user"},))

    def test_json_wants_a_list(self) -> None:
        """``json.dumps`` takes ``list(messages)`` (or ``default=list``), not the
        sequence itself: it is no tuple."""
        t = SessionTree().append({"role": "user", "content": "é"})
        messages = build_context(t).messages
        want = '[{"role": "user", "content": "\\u00e9"}]'
        assert json.dumps(list(messages)) == want
        assert json.dumps(messages, default=list) == want
        with pytest.raises(TypeError):
            json.dumps(messages)
