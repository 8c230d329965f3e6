"""SQLite's search index keeps no copy of the words (schema 4): its FTS5 table is
contentless, and a row is removed by giving FTS5 the row's words again.  Saves,
deletes and prunes in any order leave FTS5 answering every word and phrase exactly as
an index built from scratch over what is stored (a removal given other words than
the row's would leave stale matches behind: FTS5's integrity-check cannot see that in
a contentless table, so the matches are compared); a schema-3 store, whose FTS5 table
kept the words, searches the same once upgraded.

Sized for CI by ``PTREE_FUZZ_EXAMPLES`` (default 150 examples; 30 for the machine of
operations).
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import tempfile
from itertools import product
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ptree import SessionHeader, SessionTree, stores
from ptree.stores import Keep

EXAMPLES = int(os.environ.get("PTREE_FUZZ_EXAMPLES", "150"))
TS = "2026-01-01T00:00:00.000Z"
VOCAB = ["kettle", "teapot", "deploy", "port", "tea", "boil", "naïve", "東京"]
QUERIES = [[w] for w in VOCAB] + [[a, b] for a, b in product(VOCAB, VOCAB)]


def said(text: str) -> list[str]:
    """The words a person would find in a text (hand-written rule, not ptree's)."""
    return re.findall(r"[^\W_]+", text.lower())


def expected(path: Path, query: list[str]) -> set[tuple[str, str]]:
    """(session, entry) of the stored user messages holding the query's words in a
    row: an index built from scratch over what is stored."""
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute("SELECT session, id, payload FROM ptree_entries").fetchall()
    finally:
        conn.close()
    out = set()
    for session, entry, payload in rows:
        line = json.loads(payload)
        if line.get("type") != "message":
            continue
        found = said(line["message"]["content"])
        n = len(query)
        if any(found[i : i + n] == query for i in range(len(found))):
            out.add((session, entry))
    return out


def fts5(path: Path, query: list[str]) -> set[tuple[str, str]]:
    """What the FTS5 table itself answers for the phrase (no ranking, no limit)."""
    conn = sqlite3.connect(path)
    try:
        conn.execute("INSERT INTO ptree_search (ptree_search) VALUES ('integrity-check')")
        rows = conn.execute(
            "SELECT r.session, r.entry FROM ptree_search s"
            " JOIN ptree_search_rows r ON r.rowid = s.rowid WHERE ptree_search MATCH ?",
            ['"' + " ".join(query) + '"'],
        ).fetchall()
        # Every FTS5 match has its row (no row left behind by a removal).
        (count,) = conn.execute(
            "SELECT count(*) FROM ptree_search WHERE ptree_search MATCH ?",
            ['"' + " ".join(query) + '"'],
        ).fetchone()
        assert count == len(rows)
    finally:
        conn.close()
    return set(rows)


def check_index(path: Path) -> None:
    for query in QUERIES:
        assert fts5(path, query) == expected(path, query), query


def tables(path: Path) -> dict[str, str]:
    conn = sqlite3.connect(path)
    try:
        return dict(conn.execute("SELECT name, sql FROM sqlite_master WHERE sql IS NOT NULL"))
    finally:
        conn.close()


texts = st.lists(st.sampled_from(VOCAB), min_size=1, max_size=6).map(" ".join)
operations = st.lists(
    st.one_of(
        st.tuples(st.just("say"), st.integers(0, 2), texts),
        st.tuples(st.just("branch"), st.integers(0, 2), texts),
        st.tuples(st.just("prune"), st.integers(0, 2), st.just("")),
        st.tuples(st.just("delete"), st.integers(0, 2), st.just("")),
    ),
    max_size=12,
)


def test_fts5_keeps_no_copy_of_the_words(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    tree = SessionTree(header=SessionHeader(id="s", timestamp=TS, cwd="/"))
    tree = tree.append({"role": "user", "content": "boil the kettle"})
    with stores.open(f"sqlite://{path}") as store:
        store.save(tree)
        assert [(h.entry_id, h.snippet) for h in store.search("kettle")] == [
            (tree.leaf_id, "boil the «kettle»")
        ]
    found = tables(path)
    assert "content=''" in found["ptree_search"].replace(" ", "")
    assert "ptree_search_content" not in found


@settings(
    max_examples=max(1, EXAMPLES // 5),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(ops=operations)
def test_saves_deletes_and_prunes_leave_fts5_as_built_from_scratch(
    ops: list[tuple[str, int, str]],
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "s.db"
        with stores.open(f"sqlite://{path}") as store:
            trees: dict[str, SessionTree] = {}
            for op, n, text in ops:
                sid = f"s{n}"
                tree = trees.get(sid) or SessionTree(
                    header=SessionHeader(id=sid, timestamp=TS, cwd="/")
                )
                if op == "branch" and tree.ids():
                    tree = tree.move_to(tree.ids()[len(tree.ids()) // 2])
                if op in ("say", "branch"):
                    tree = tree.append({"role": "user", "content": text})
                    store.save(tree)
                    trees[sid] = tree
                elif sid in trees and op == "prune":
                    store.prune(sid, keep=Keep.leaves())
                    trees[sid] = store.load(sid)
                elif sid in trees:
                    store.delete(sid)
                    del trees[sid]
            check_index(path)
            for query in QUERIES[: len(VOCAB)]:
                hits = {(h.session_id, h.entry_id) for h in store.search(query[0], limit=1000)}
                assert hits == expected(path, query)


def downgrade_to_3(path: Path) -> None:
    """Make the store what schema 3 left: FTS5 keeping the words (filled here from
    the stored messages by the hand-written rule), version 3."""
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute(
            "SELECT r.rowid, e.payload FROM ptree_search_rows r JOIN ptree_entries e"
            " ON e.session = r.session AND e.id = r.entry"
        ).fetchall()
        conn.execute("DROP TABLE ptree_search")
        conn.execute(
            "CREATE VIRTUAL TABLE ptree_search USING fts5(words,"
            " tokenize = 'unicode61 remove_diacritics 0', columnsize = 0)"
        )
        conn.executemany(
            "INSERT INTO ptree_search (rowid, words) VALUES (?, ?)",
            [(r, " ".join(said(json.loads(p)["message"]["content"]))) for r, p in rows],
        )
        conn.execute("UPDATE ptree_schema SET version = 3")
        conn.commit()
    finally:
        conn.close()


def test_a_schema_3_store_searches_the_same_once_upgraded(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    url = f"sqlite://{path}"
    sessions = {
        "s1": ["boil the kettle", "the teapot on port 8042", "kettle kettle tea"],
        "s2": ["deploy the kettle", "naïve 東京 tea", "boil tea"],
    }
    queries = ["kettle", "tea", "boil kettle", '"the kettle"', "東京", "8042"]
    with stores.open(url) as store:
        for sid, said_ in sessions.items():
            tree = SessionTree(header=SessionHeader(id=sid, timestamp=TS, cwd="/"))
            for text in said_:
                tree = tree.append({"role": "user", "content": text})
            # A branch from the first message: what a prune removes.
            tree = tree.move_to(tree.ids()[0]).append({"role": "user", "content": "tea"})
            store.save(tree)
        before = {q: store.search(q) for q in queries}
    downgrade_to_3(path)
    assert "ptree_search_content" in tables(path)
    with stores.open(url) as store:
        assert store.schema_version == (3, 4)
        assert "ptree_search_content" not in tables(path)
        assert {q: store.search(q) for q in queries} == before
        check_index(path)
        # Rows indexed before the upgrade are removed exactly.
        tree = store.load("s1")
        assert store.prune("s1", keep=[]).removed == tuple(tree.ids()[1:3])
        store.delete("s2")
        check_index(path)
        assert [h.entry_id for h in store.search("kettle")] == [tree.ids()[0]]
        assert [h.entry_id for h in store.search("tea")] == [tree.ids()[3]]
