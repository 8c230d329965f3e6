"""Stores at scale, one contract suite for every store (SQLite file and memory, a
directory of Pi files, a real PostgreSQL server): sessions a page at a time, search
across sessions, pruning, and the typed errors of bad input.  Expected values are
written by hand."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from ptree import SessionHeader, SessionTree, build_context, dump, load, stores
from ptree.stores import (
    ConflictError,
    CursorError,
    Keep,
    SearchQueryError,
    SessionNotFoundError,
    StoreError,
    UnknownKeepError,
)

TS = "2026-01-01T00:00:00.000Z"


def clock() -> str:
    return TS


def new_tree(session_id: str = "s1") -> SessionTree:
    return SessionTree(header=SessionHeader(id=session_id, timestamp=TS, cwd="/w"), clock=clock)


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def assistant(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": [{"type": "text", "text": text}]}


@pytest.fixture
def store(store_url: str, open_store: Callable[[str], Any]) -> Iterator[stores.Store]:
    with open_store(store_url) as s:
        yield s


def walk(store: stores.Store, limit: int, order: Any = "updated") -> list[str]:
    """Every id, a page of ``limit`` at a time."""
    seen: list[str] = []
    page = store.sessions(limit=limit, order=order)
    while True:
        assert len(page) <= limit
        seen += [s.id for s in page]
        if page.next_cursor is None:
            return seen
        page = store.sessions(limit=limit, order=order, after=page.next_cursor)


# ----------------------------------------------------------------------- paging


class TestSessionsPage:
    def test_pages_walk_the_whole_list_in_order(self, store: stores.Store) -> None:
        """Pages of 3 out of 10 sessions give the unpaged list, newest first."""
        for n in range(10):
            store.save(new_tree(f"s{n}").append(user("x")))
        whole = [s.id for s in store.sessions()]
        assert whole == [f"s{n}" for n in reversed(range(10))]
        assert walk(store, 3) == whole
        assert walk(store, 10) == whole
        assert walk(store, 50) == whole

    def test_order_by_id(self, store: stores.Store) -> None:
        for sid in ["b", "a", "d", "c", "é", "B"]:
            store.save(new_tree(sid))
        assert walk(store, 2, "id") == ["B", "a", "b", "c", "d", "é"]

    def test_last_page_has_no_cursor_and_summaries_are_whole(self, store: stores.Store) -> None:
        before = datetime.now(UTC)
        store.save(new_tree("a").append(user("x")).append_session_info("the name"))
        page = store.sessions(limit=1)
        assert page.next_cursor is None
        (s,) = page
        assert (s.id, s.name, s.entry_count) == ("a", "the name", 2)
        assert before - timedelta(seconds=5) <= s.updated <= datetime.now(UTC)

    def test_an_empty_store_has_one_empty_page(self, store: stores.Store) -> None:
        page = store.sessions(limit=5)
        assert list(page) == []
        assert page.next_cursor is None

    def test_a_walk_stays_correct_while_others_change_the_store(self, store: stores.Store) -> None:
        """Deleting, adding and saving sessions between pages: no session twice, and
        every session untouched during the walk is listed."""
        for n in range(12):
            store.save(new_tree(f"s{n:02}").append(user("x")))
        for order in ("id", "updated"):
            seen: list[str] = []
            page = store.sessions(limit=4, order=order)
            seen += [s.id for s in page]
            store.delete("s05" if order == "id" else "s06")
            store.save(new_tree(f"new-{order}"))
            store.update("s00", lambda t: t.append(user("again")))
            while page.next_cursor is not None:
                page = store.sessions(limit=4, order=order, after=page.next_cursor)
                seen += [s.id for s in page]
            assert len(seen) == len(set(seen))
            untouched = {f"s{n:02}" for n in range(1, 12)} - {"s05", "s06"}
            assert untouched <= set(seen)

    @pytest.mark.parametrize(
        "cursor", ["", "x", "!!!", "W10", "WyJ1Il0", "WyJ1IiwiMjAyNiIsMV0", "\x00", 7, None]
    )
    def test_a_cursor_it_did_not_give_is_refused(self, store: stores.Store, cursor: Any) -> None:
        """Garbage, JSON of the wrong shape, a time without zone: CursorError."""
        store.save(new_tree("a"))
        if cursor is None:
            return  # after=None is the first page
        with pytest.raises(CursorError) as info:
            store.sessions(limit=1, after=cursor)
        assert isinstance(info.value, StoreError)
        assert isinstance(info.value, ValueError)

    def test_a_cursor_of_another_order_is_refused(self, store: stores.Store) -> None:
        for sid in "abc":
            store.save(new_tree(sid))
        cursor = store.sessions(limit=1, order="id").next_cursor
        assert cursor is not None
        with pytest.raises(CursorError):
            store.sessions(limit=1, after=cursor, order="updated")

    @pytest.mark.parametrize(("limit", "order"), [(0, "id"), (-1, "id"), (1.5, "id"), (2, "x")])
    def test_bad_limit_or_order(self, store: stores.Store, limit: Any, order: Any) -> None:
        with pytest.raises(CursorError):
            store.sessions(limit=limit, order=order)


# ----------------------------------------------------------------------- search


def searchable(sid: str = "s1") -> SessionTree:
    """A session with text in every indexed place, and in places never indexed."""
    t = new_tree(sid).append(user("Please deploy the Kettle service"))
    t = t.append(
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "the configuration first"},
                {"type": "text", "text": "Reading it."},
                {
                    "type": "toolCall",
                    "id": "call-zebra",
                    "name": "read",
                    "arguments": {"path": "/etc/giraffe.toml"},
                },
            ],
        }
    )
    t = t.append(
        {
            "role": "toolResult",
            "toolCallId": "call-zebra",
            "toolName": "read",
            "content": [{"type": "text", "text": "port = 8042"}],
            "isError": False,
        }
    )
    t = t.append(
        {
            "role": "user",
            "content": [
                {"type": "image", "data": "iVBORw0KGgoAAAANSUhEUgAAAAE", "mimeType": "image/png"}
            ],
        }
    )
    t = t.append_custom_message("note", "a custom walrus note")
    t = t.append_custom("ext", {"text": "hidden custom octopus"})
    t = t.append_session_info("Teapot project")
    t = t.append_compaction("summary mentions a samovar", "e1", 100)
    t = t.move_to("e1").append_branch_summary("e2", "abandoned the percolator")
    return t


def found(store: stores.Store, query: str, **kw: Any) -> set[tuple[str, str, str]]:
    return {(h.session_id, h.entry_id, h.role) for h in store.search(query, **kw)}


class TestSearch:
    def test_what_a_person_reads_is_found(self, store: stores.Store) -> None:
        store.save(searchable())
        assert found(store, "kettle") == {("s1", "e1", "user")}
        assert found(store, "configuration") == {("s1", "e2", "assistant")}
        assert found(store, "read") == {("s1", "e2", "assistant")}  # the tool call's name
        assert found(store, "8042") == {("s1", "e3", "toolResult")}
        assert found(store, "walrus") == {("s1", "e5", "custom_message")}
        assert found(store, "teapot") == {("s1", "e7", "session_info")}
        assert found(store, "samovar") == {("s1", "e8", "compaction")}
        assert found(store, "percolator") == {("s1", "e9", "branch_summary")}

    def test_keys_ids_arguments_and_base64_are_not(self, store: stores.Store) -> None:
        store.save(searchable())
        for query in [
            "toolCallId",
            "zebra",
            "giraffe",
            "iVBORw0KGgoAAAANSUhEUgAAAAE",
            "mimeType",
            "octopus",
            "e1",
            "s1",
            "role",
            "png",
        ]:
            assert found(store, query) == set(), query

    def test_every_word_must_occur_in_any_order_and_case(self, store: stores.Store) -> None:
        store.save(searchable())
        assert found(store, "SERVICE kettle DePloY") == {("s1", "e1", "user")}
        assert found(store, "kettle walrus") == set()

    def test_a_quoted_phrase_needs_its_words_in_a_row(self, store: stores.Store) -> None:
        store.save(new_tree().append(user("deploy the kettle")).append(user("the kettle deploy")))
        assert found(store, '"deploy the kettle"') == {("s1", "e1", "user")}
        assert found(store, '"the kettle"') == {("s1", "e1", "user"), ("s1", "e2", "user")}
        assert found(store, "deploy the kettle") == {("s1", "e1", "user"), ("s1", "e2", "user")}

    def test_across_sessions_or_in_one(self, store: stores.Store) -> None:
        store.save(searchable("a"))
        store.save(searchable("b"))
        assert found(store, "kettle") == {("a", "e1", "user"), ("b", "e1", "user")}
        assert found(store, "kettle", session="b") == {("b", "e1", "user")}
        with pytest.raises(SessionNotFoundError):
            store.search("kettle", session="nobody")

    def test_best_first_and_limit(self, store: stores.Store) -> None:
        """An entry that is mostly the word ranks before one that mentions it once."""
        t = new_tree().append(user("kettle " + "lorem ipsum dolor " * 30))
        t = t.append(user("kettle kettle kettle"))
        for n in range(5):
            t = t.append(user(f"kettle and more words {n} " * 5))
        store.save(t)
        hits = store.search("kettle", limit=3)
        assert len(hits) == 3
        assert hits[0].entry_id == "e2"
        assert "e1" not in [h.entry_id for h in hits]
        assert len(store.search("kettle")) == 7

    def test_snippet_marks_the_words(self, store: stores.Store) -> None:
        store.save(new_tree().append(user("Boil\nthe  KETTLE, then pour.")))
        (hit,) = store.search("kettle pour")
        assert hit.snippet == "Boil the «KETTLE», then «pour»."

    def test_the_index_follows_saves_deletes_and_updates(self, store: stores.Store) -> None:
        t = store.save(new_tree().append(user("kettle")))
        store.save(t.append(user("second kettle")))
        assert len(store.search("kettle")) == 2
        store.delete("s1")
        assert store.search("kettle") == []
        store.save(new_tree().append(user("teapot")))
        assert found(store, "teapot") == {("s1", "e1", "user")}
        assert store.search("kettle") == []

    @pytest.mark.parametrize(
        "query",
        ['"', "*", "(", ":", "&", "!", ")", "", "   ", "\x00", "_", "'", "--", ";", "\ud800"],
    )
    def test_a_query_of_no_word_is_refused(self, store: stores.Store, query: str) -> None:
        store.save(searchable())
        with pytest.raises(SearchQueryError) as info:
            store.search(query)
        assert info.value.query == query
        assert isinstance(info.value, StoreError)

    @pytest.mark.parametrize(
        ("query", "finds"),
        [
            ('kettle"', True),
            ("kettle*", True),
            ("NEAR(kettle deploy)", False),  # "near" is a word the entry lacks
            ("kettle: deploy", True),
            ("kettle & !deploy", True),
            ("kettle) OR (x", False),
            ("'; DROP TABLE ptree_entries; --", False),
            ("kettle AND deploy", False),
            ("deploy -kettle", True),
            ("kettle\x00deploy", True),
            ('"kettle deploy', True),
            ("kettle^ {deploy}", True),
            ("kettle^2 {deploy}", False),
            ('"deploy kettle"', False),
            ('"deploy the kettle"', True),
            ("please:the*kettle", True),
        ],
    )
    def test_operators_are_words_not_syntax(
        self, store: stores.Store, query: str, finds: bool
    ) -> None:
        """Operators are separators: the query means its words."""
        store.save(searchable())
        expected = {("s1", "e1", "user")} if finds else set()
        assert found(store, query) == expected
        assert len(store.sessions()) == 1

    @pytest.mark.parametrize("limit", [0, -1, 1001, 2.0, "5"])
    def test_bad_limit(self, store: stores.Store, limit: Any) -> None:
        with pytest.raises(SearchQueryError):
            store.search("kettle", limit=limit)


def many_matches() -> tuple[SessionTree, list[tuple[str, float]]]:
    """A session of 1,040 entries, 260 of them holding "kettle" (the others only
    filler), each match's score distinct and unrelated to its age; with every match's
    entry id and score, oldest first, worked out here by hand: the times "kettle"
    occurs over the entry's number of words."""
    t = new_tree()
    matches: list[tuple[str, float]] = []
    for i in range(260):
        for _ in range(3):
            t = t.append(user("teapot filler text"))
        filler = (i * 37) % 260 + 1  # each of 1..260 once, in a scrambled order
        t = t.append(user("kettle " + "word " * filler))
        assert t.leaf_id is not None
        matches.append((t.leaf_id, 1 / (1 + filler)))
    return t, matches


def best_of(matches: list[tuple[str, float]], limit: int) -> list[str]:
    """The reference rule: the highest scores first (no two are equal here)."""
    return [eid for eid, _ in sorted(matches, key=lambda m: -m[1])[:limit]]


class TestSearchRanksTheNewestMatches:
    """The SQL stores rank the newest 200 matches (or ``limit``, if more); the
    ``jsonl:`` store, which reads everything anyway, ranks every match."""

    def expected(
        self, store: stores.Store, matches: list[tuple[str, float]], limit: int
    ) -> list[str]:
        if store.url.startswith("jsonl"):
            return best_of(matches, limit)
        return best_of(matches[-max(200, limit) :], limit)

    def test_more_matches_than_are_ranked(self, store: stores.Store) -> None:
        """The best of all 260 matches are old: the SQL stores' best come from the
        newest 200, best first."""
        tree, matches = many_matches()
        store.save(tree)
        hits = store.search("kettle", limit=20)
        assert [h.entry_id for h in hits] == self.expected(store, matches, 20)
        assert [h.entry_id for h in store.search("KETTLE", session="s1", limit=5)] == (
            self.expected(store, matches, 5)
        )
        assert {h.role for h in hits} == {"user"}
        assert all("«kettle»" in h.snippet for h in hits)

    def test_a_limit_over_200_ranks_that_many(self, store: stores.Store) -> None:
        tree, matches = many_matches()
        store.save(tree)
        hits = store.search("kettle", limit=250)
        assert [h.entry_id for h in hits] == self.expected(store, matches, 250)

    @pytest.mark.parametrize("gin_cost", [0, 10**9])
    def test_walked_or_read_through_the_index_alike(
        self, store: stores.Store, monkeypatch: pytest.MonkeyPatch, gin_cost: int
    ) -> None:
        """PostgreSQL walks the newest rows or reads its GIN index, by what a first
        window of rows shows; a window of 7 rows makes it take either way, in
        several steps, and the hits are the same."""
        from ptree.stores.postgres import PostgresStore

        monkeypatch.setattr(PostgresStore.SEARCH_INDEX, "MARKED", False)
        monkeypatch.setattr(PostgresStore.SEARCH_INDEX, "WINDOW", 7)
        monkeypatch.setattr(PostgresStore.SEARCH_INDEX, "GIN_COST", gin_cost)
        tree, matches = many_matches()
        store.save(tree)
        hits = store.search("kettle", limit=20)
        assert [h.entry_id for h in hits] == self.expected(store, matches, 20)
        assert [h.entry_id for h in store.search("teapot filler", limit=3)] == (
            ["e1039", "e1038", "e1037"]  # equal scores: the newest first
            if not store.url.startswith("jsonl")
            else ["e1", "e2", "e3"]  # equal scores: in the session's order
        )


class TestSearchByBlocks:
    """PostgreSQL narrows a search by age through each row's block marker (schema 3):
    with blocks of 8 rows, a search asks for the newest blocks step by step, and finds
    what the plain plans (the walk or the GIN read) find."""

    @pytest.fixture
    def pg(self, monkeypatch: pytest.MonkeyPatch) -> Iterator[stores.Store]:
        from ptree.stores.postgres import PostgresStore

        from .conftest import postgres_url

        index = PostgresStore.SEARCH_INDEX
        monkeypatch.setattr(index, "BLOCK", 8)
        # A first window of 7 rows, then the markers whenever a match was found.
        monkeypatch.setattr(index, "WINDOW", 7)
        monkeypatch.setattr(index, "GIN_COST", 0)
        with stores.open(postgres_url()) as s:
            yield s

    @pytest.mark.parametrize(
        "query", ["kettle", "teapot filler", '"filler text"', "word kettle", "nothing"]
    )
    @pytest.mark.parametrize("limit", [1, 20, 250])
    def test_the_marked_and_the_plain_plans_find_the_same(
        self, pg: stores.Store, monkeypatch: pytest.MonkeyPatch, query: str, limit: int
    ) -> None:
        from ptree.stores.postgres import PostgresStore

        tree, _ = many_matches()
        pg.save(tree)
        pg.save(new_tree("s2").append(user("a kettle in another session")))
        index = PostgresStore.SEARCH_INDEX
        by_blocks = index._newest_by_blocks
        asked: list[int] = []

        def counted(*args: Any) -> Any:
            asked.append(1)
            return by_blocks(*args)

        monkeypatch.setattr(index, "_newest_by_blocks", counted)
        marked = [(h.session_id, h.entry_id) for h in pg.search(query, limit=limit)]
        assert bool(asked) == (query != "nothing")  # a match in the first 7 rows
        for walk in [True, False]:
            monkeypatch.setattr(index, "MARKED", False)
            monkeypatch.setattr(index, "GIN_COST", 10**9 if walk else 0)
            plain = [(h.session_id, h.entry_id) for h in pg.search(query, limit=limit)]
            assert marked == plain
            monkeypatch.setattr(index, "MARKED", True)
            monkeypatch.setattr(index, "GIN_COST", 0)

    def test_few_markers_a_step_then_the_rest_read(
        self, pg: stores.Store, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """With at most 2 markers a statement, the matches left are read through GIN
        alone, and the hits are the same."""
        from ptree.stores.postgres import PostgresStore

        tree, matches = many_matches()
        pg.save(tree)
        monkeypatch.setattr(PostgresStore.SEARCH_INDEX, "MAX_MARKERS", 2)
        hits = pg.search("kettle", limit=20)
        assert [h.entry_id for h in hits] == best_of(matches[-200:], 20)

    def test_a_query_spelling_a_marker_finds_only_real_text(self, pg: stores.Store) -> None:
        """Every row holds a marker _b0, _b1, ...; a query "_b1" is the word b1 and
        finds the entry that says it, and "_b0" (no entry says b0) finds nothing."""
        t = new_tree()
        for i in range(30):
            t = t.append(user(f"line {i}"))
        t = t.append(user("see _b1 here"))
        pg.save(t)
        import psycopg

        with psycopg.connect(pg.url, autocommit=True) as conn:
            rows = conn.execute(
                "SELECT entry FROM ptree_search WHERE words @@ '_b1'::tsquery ORDER BY n"
            ).fetchall()
        assert [e for (e,) in rows] == [f"e{i}" for i in range(8, 16)]  # n 8..15: block 1
        assert [h.entry_id for h in pg.search("_b1")] == ["e31"]
        assert [h.entry_id for h in pg.search("b1")] == ["e31"]
        assert pg.search("_b0") == []
        assert pg.search("_b2 line") == []

    def test_a_marker_is_not_a_word_of_the_score(self, pg: stores.Store) -> None:
        """ "kettle x" scores 1/2, the newer "kettle kettle x y z" 2/5: the older is
        first.  Counting the marker as a word would make both 1/3 (newer first)."""
        t = new_tree().append(user("kettle x")).append(user("kettle kettle x y z"))
        pg.save(t)
        assert [h.entry_id for h in pg.search("kettle")] == ["e1", "e2"]


# ----------------------------------------------------------------------- prune


def branched() -> SessionTree:
    """e1 - e2 (tool call) - e3 (result) - e4 (leaf); e2 - e5 - e6 (a dead branch);
    e1 - e7 - e8 (another branch)."""
    t = new_tree().append(user("start"))
    t = t.append(
        {
            "role": "assistant",
            "content": [{"type": "toolCall", "id": "c1", "name": "read", "arguments": {}}],
        }
    )
    t = t.append({"role": "toolResult", "toolCallId": "c1", "toolName": "read", "content": "ok"})
    t = t.append(assistant("done"))
    t = t.move_to("e2").append(user("dead branch")).append(assistant("dead end"))
    t = t.move_to("e1").append(user("other")).append(assistant("other end"))
    return t.move_to("e4")


class TestPrune:
    def test_keeping_only_the_leaf_removes_other_branches(self, store: stores.Store) -> None:
        store.save(branched())
        report = store.prune("s1", keep=[])
        assert report.kept == ("e1", "e2", "e3", "e4")
        assert report.removed == ("e5", "e6", "e7", "e8")
        assert not report.dry_run
        loaded = store.load("s1")
        assert loaded.ids() == ("e1", "e2", "e3", "e4")
        assert loaded.leaf_id == "e4"

    def test_keep_leaves_keeps_every_branch(self, store: stores.Store) -> None:
        store.save(branched())
        assert store.prune("s1", keep=Keep.leaves()).removed == ()
        assert len(store.load("s1")) == 8

    def test_keep_ids_keeps_their_paths(self, store: stores.Store) -> None:
        store.save(branched())
        assert store.prune("s1", keep=["e5"]).removed == ("e6", "e7", "e8")

    def test_keep_labelled_and_predicates(self, store: stores.Store) -> None:
        store.save(branched().append_label("e7", "look here"))
        report = store.prune("s1", keep=Keep.labelled())
        assert report.removed == ("e5", "e6", "e8")
        assert store.load("s1").labels() == {"e7": "look here"}

    def test_keep_a_predicate(self, store: stores.Store) -> None:
        store.save(branched())
        report = store.prune("s1", keep=lambda e: e.id == "e8")
        assert report.removed == ("e5", "e6")

    def test_newer_than(self, store: stores.Store) -> None:
        t = branched()
        t = t.with_config(clock=lambda: "2099-01-01T00:00:00.000Z").move_to("e6")
        t = t.append(user("future")).move_to("e4")
        store.save(t)
        report = store.prune("s1", keep=Keep.newer(timedelta(days=30)))
        assert report.removed == ("e7", "e8")

    def test_a_tool_result_stays_with_its_call(self, store: stores.Store) -> None:
        """Keeping the call (not the result) keeps the result too."""
        t = branched().move_to("e1")
        store.save(t)  # the leaf is e1: only kept entries pull others in
        report = store.prune("s1", keep=["e2"])
        assert "e3" in report.kept
        assert store.load("s1").ids()[:3] == ("e1", "e2", "e3")

    def test_compaction_range_and_branch_summary_source_stay(self, store: stores.Store) -> None:
        t = branched()
        t = t.move_to("e4").append_compaction("sum", "e3", 10)  # e9, keeps from e3 on
        t = t.move_to("e1").append_branch_summary("e6", "left the dead branch")  # e10
        store.save(t.move_to("e10"))
        report = store.prune("s1", keep=["e9"])
        assert "e6" in report.kept  # the branch summary's fromId (the leaf's)
        assert "e3" in report.kept  # the compaction's first kept entry
        assert "e8" in report.removed

    def test_context_at_every_kept_entry_is_unchanged(self, store: stores.Store) -> None:
        t = store.save(branched().append_label("e3", "x").append_session_info("n"))
        report = store.prune("s1", keep=["e6"])
        after = store.load("s1")
        for eid in report.kept:
            assert build_context(after, eid) == build_context(t, eid)
            assert after.label_of(eid) == t.label_of(eid)
            assert after[eid] == t[eid]
        assert after.session_name == "n"

    def test_dry_run_changes_nothing(self, store: stores.Store) -> None:
        t = store.save(branched())
        report = store.prune("s1", keep=[], dry_run=True)
        assert report.dry_run
        assert report.removed == ("e5", "e6", "e7", "e8")
        assert store.load("s1") == t

    def test_an_older_tree_cannot_bring_pruned_entries_back(self, store: stores.Store) -> None:
        t = store.save(branched())
        store.prune("s1", keep=[])
        with pytest.raises(ConflictError):
            store.save(t)
        with pytest.raises(ConflictError):
            store.save(t.append(user("more")))
        assert store.load("s1").ids() == ("e1", "e2", "e3", "e4")

    def test_new_entries_after_a_prune_save(self, store: stores.Store) -> None:
        """The counter's next id may be a pruned one; a new entry with it saves."""
        store.save(branched().with_config(clock=lambda: "2026-02-02T00:00:00.000Z"))
        store.prune("s1", keep=[])
        t = store.load("s1").with_config(clock=clock)
        t = store.save(t.append(user("after the prune")))
        assert store.load("s1") == t
        t = store.update("s1", lambda t: t.append(user("and again")))
        assert len(store.load("s1")) == 6

    def test_pruned_entries_are_not_found(self, store: stores.Store) -> None:
        store.save(branched())
        assert found(store, "dead") == {("s1", "e5", "user"), ("s1", "e6", "assistant")}
        store.prune("s1", keep=[])
        assert found(store, "dead") == set()
        assert found(store, "done") == {("s1", "e4", "assistant")}

    def test_keeps_naming_nothing_are_refused(self, store: stores.Store) -> None:
        t = store.save(branched())
        with pytest.raises(UnknownKeepError) as info:
            store.prune("s1", keep=["e4", "nope", "e99"])
        assert info.value.entry_ids == ("e99", "nope")
        assert isinstance(info.value, KeyError)
        assert isinstance(info.value, StoreError)
        assert "'e99', 'nope'" in str(info.value)
        assert store.load("s1") == t

    def test_an_unknown_session(self, store: stores.Store) -> None:
        with pytest.raises(SessionNotFoundError):
            store.prune("nobody", keep=[])

    def test_prune_of_a_pruned_session_again(self, store: stores.Store) -> None:
        store.save(branched())
        store.prune("s1", keep=["e8"])
        assert store.prune("s1", keep=[]).removed == ("e7", "e8")
        assert store.prune("s1", keep=[]).removed == ()


def test_pi_files_stay_pi_files(tmp_path: Path) -> None:
    """A pruned jsonl session is a Pi file that loads to the pruned tree."""
    with stores.open(f"jsonl://{tmp_path}") as store:
        store.save(branched().move_to("e6"))
        store.prune("s1", keep=[])
        (path,) = tmp_path.glob("*.jsonl")
        assert load(path) == store.load("s1")
        # e3 stays: the result of e2's tool call
        assert load(path).ids() == ("e1", "e2", "e3", "e5", "e6")
        assert load(path).leaf_id == "e6"


def test_a_sqlite_file_shrinks(tmp_path: Path) -> None:
    """Pruning most of a session gives its pages back to the file system."""
    url = f"sqlite://{tmp_path}/s.db"
    with stores.open(url) as store:
        t = new_tree().append(user("root"))
        for n in range(300):
            t = t.move_to("e1").append(user(f"branch {n} " + "text " * 400))
        store.save(t.move_to("e1").append(user("leaf")))
        store.save(store.load("s1"))
        big = os.path.getsize(f"{tmp_path}/s.db") + os.path.getsize(f"{tmp_path}/s.db-wal")
        store.prune("s1", keep=[])
    small = os.path.getsize(f"{tmp_path}/s.db")
    assert small < big / 4


def test_dump_of_a_pruned_session(tmp_path: Path, store: stores.Store) -> None:
    """What a store keeps after a prune is a session ptree writes like any other."""
    store.save(branched())
    store.prune("s1", keep=[])
    dump(store.load("s1"), tmp_path / "p.jsonl")
    assert load(tmp_path / "p.jsonl") == store.load("s1")
