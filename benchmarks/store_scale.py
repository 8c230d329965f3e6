"""Stores at scale (issue 25): a page of sessions, search, the search index's cost on
save, and what a prune gives back to the disk.

    python benchmarks/store_scale.py           # full sizes; prints the table
    python benchmarks/store_scale.py --smoke   # small sizes, seconds (CI, via stores.py)

PostgreSQL is measured when ``PTREE_BENCH_POSTGRES_URL`` (or ``PTREE_TEST_POSTGRES_URL``)
names a server (its ptree tables are dropped first).  Figures are medians of several
runs, in wall time; each case is timed beside its baseline in the same run.

- Paging: ``sessions(limit=50)`` (the first page, and a page from a cursor halfway)
  at 10^3, 10^4 and 10^5 sessions, beside the unpaged ``sessions()``.  The session
  rows are inserted in one SQL transaction (the listing reads only that table; 10^5
  saves one by one would only time the disk).
- Search: 10^6 messages in 10^4 sessions, inserted in bulk in the form saves write
  (entry rows and index rows; saving them one session at a time would take most of an
  hour here, and the save's own cost is measured below), words drawn from a
  Zipf-like vocabulary of 5,000; two-word
  queries of a rare, a middling, two frequent and the two commonest words (a search
  ranks the newest 200 matches: the frequent ones cost most in PostgreSQL, where
  neither a walk of the newest rows nor the GIN index finds those quickly), each
  beside the same question asked without the index
  (``payload LIKE '%w1%' AND payload LIKE '%w2%'``).
- Index cost: a save of one more entry, and of a new 100-entry session, with the
  index beside the same store with indexing switched off.
- Prune: a session of 10^4 entries, 90% of them on branches nothing keeps: the size of
  the SQLite file (or PostgreSQL's tables) before, after the prune, and after VACUUM.
"""

from __future__ import annotations

import argparse
import itertools
import os
import random
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ptree import SessionHeader, SessionTree, stores

sys.path.insert(0, str(Path(__file__).resolve().parent))
from stores import median_time

TS = "2026-01-01T00:00:00.000Z"
TABLES = "ptree_entries, ptree_sessions, ptree_schema, ptree_search, ptree_pruned"


def clock() -> str:
    return TS


def pg_url() -> str | None:
    return os.environ.get("PTREE_BENCH_POSTGRES_URL") or os.environ.get("PTREE_TEST_POSTGRES_URL")


def pg_reset(url: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as pconn:
        pconn.execute(f"DROP TABLE IF EXISTS {TABLES}")


STORES = ["SQLite", "PostgreSQL"]
"""Which stores to measure (``--store`` narrows it)."""


def urls(tmp: Path, name: str) -> dict[str, str]:
    out = {"SQLite": f"sqlite://{tmp}/{name}.db"} if "SQLite" in STORES else {}
    pg = pg_url() if "PostgreSQL" in STORES else None
    if pg:
        pg_reset(pg)
        out["PostgreSQL"] = pg
    return out


# ------------------------------------------------------------------ paging


def fill_sessions(url: str, n: int) -> None:
    """n session rows, as saves leave them, inserted in one transaction."""
    now = datetime(2026, 1, 1, tzinfo=UTC)
    rows = []
    for i in range(n):
        sid = str(uuid.UUID(int=random.getrandbits(128)))
        when = now + timedelta(seconds=random.random() * 3e7)
        head = f'{{"type":"session","version":3,"id":"{sid}","timestamp":"{TS}","cwd":"/"}}'
        rows.append((sid, head, f"name {i}", when, uuid.uuid4().hex))
    if url.startswith("sqlite"):
        conn = sqlite3.connect(url.removeprefix("sqlite://"))
        with conn:
            conn.executemany(
                "INSERT INTO ptree_sessions (id, header, leaf, name, updated, entry_count,"
                " incarnation) VALUES (?, ?, NULL, ?, ?, 0, ?)",
                [
                    (s, h, nm, w.isoformat(timespec="microseconds"), inc)
                    for s, h, nm, w, inc in rows
                ],
            )
        conn.close()
    else:
        import psycopg

        with psycopg.connect(url, autocommit=True) as pconn, pconn.cursor() as cur:
            with cur.copy(
                "COPY ptree_sessions (id, header, leaf, name, updated, entry_count,"
                " incarnation) FROM STDIN"
            ) as copy:
                for s, h, nm, w, inc in rows:
                    copy.write_row((s, h, None, nm, w, 0, inc))
            cur.execute("ANALYZE ptree_sessions")


def paging(url: str, sizes: Sequence[int], repeat: int) -> dict[int, tuple[float, float, float]]:
    """Per size: seconds for the first page of 50, a page from a cursor halfway, and
    the whole unpaged list."""
    out = {}
    total = 0
    for n in sizes:
        with stores.open(url):
            pass
        fill_sessions(url, n - total)
        total = n
        with stores.open(url) as store:
            ids = store.sessions(order="updated")
            assert len(ids) == n
            cursor = store.sessions(limit=n // 2).next_cursor
            assert cursor is not None
            first = median_time(lambda: store.sessions(limit=50), repeat * 10)
            deep = median_time(
                lambda c=cursor: store.sessions(limit=50, after=c),  # type: ignore[misc]
                repeat * 10,
            )
            fastest = min_time(lambda c=cursor: store.sessions(limit=50, after=c), repeat * 10)  # type: ignore[misc]
            whole = median_time(lambda: store.sessions(), repeat)
        out[n] = (first, deep, whole)
        server = ""
        if not url.startswith("sqlite"):
            nothing, nothing_best = round_trip(url, repeat * 10)
            server = (
                f"; the server's own {server_ms(url):.2f} ms; a round trip of SELECT 1"
                f" {nothing * 1e3:.2f} ms (at best {nothing_best * 1e3:.2f} ms)"
            )
        print(f"  {n:,} sessions: page from a cursor at best {fastest * 1e3:.2f} ms{server}")
    return out


def min_time(fn: Callable[[], object], repeat: int) -> float:
    """The fastest of ``repeat`` runs: the cost without a busy machine's waits."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def round_trip(url: str, repeat: int) -> tuple[float, float]:
    """Median and fastest seconds of ``SELECT 1`` on one connection: what a round trip
    to the server costs with nothing to do, on this machine as loaded now."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as pconn:
        fn = lambda: pconn.execute("SELECT 1").fetchall()  # noqa: E731
        return median_time(fn, repeat), min_time(fn, repeat)


def server_ms(url: str) -> float:
    """PostgreSQL's execution time of the page query from a cursor (EXPLAIN ANALYZE,
    median of 20): the page's cost without the client's round trip."""
    import psycopg

    sql = (
        "EXPLAIN (ANALYZE, FORMAT JSON) SELECT id, name, entry_count,"
        " (extract(epoch FROM updated) * 1000000)::bigint"
        ' FROM ptree_sessions WHERE (updated, id COLLATE "C") < (%s, %s)'
        ' ORDER BY updated DESC, id COLLATE "C" DESC LIMIT 51'
    )
    with psycopg.connect(url, autocommit=True) as pconn:
        row = pconn.execute(
            'SELECT updated, id FROM ptree_sessions ORDER BY updated DESC, id COLLATE "C" DESC'
            " OFFSET (SELECT count(*) / 2 FROM ptree_sessions) LIMIT 1"
        ).fetchone()
        assert row is not None
        times = []
        for _ in range(20):
            plan = pconn.execute(sql, row).fetchone()
            assert plan is not None
            times.append(float(plan[0][0]["Execution Time"]))
    return statistics.median(times)


# ------------------------------------------------------------------ search


def vocabulary(size: int) -> tuple[list[str], list[float]]:
    rng = random.Random(7)
    words: set[str] = set()
    while len(words) < size:
        words.add(
            "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(3, 9)))
        )
    ordered = sorted(words)
    rng.shuffle(ordered)
    # Zipf: word k is 1/k as common.  Cumulative, so that each draw does not add up
    # 5,000 weights again (random.choices with weights= does).
    cumulative = list(itertools.accumulate(1 / (rank + 1) for rank in range(size)))
    return ordered, cumulative


def fill_messages(url: str, sessions: int, per: int) -> tuple[list[str], float]:
    """sessions x per messages, inserted in bulk in the form saves write them: the
    entries' JSON lines, and the search index's rows (the text is lower-case words
    and spaces, so its indexed words are ``text.split()``).  The vocabulary by rank,
    and the seconds it took."""
    vocab, weights = vocabulary(5000)
    rng = random.Random(11)
    with stores.open(url):
        pass  # the tables
    start = time.perf_counter()
    heads: list[tuple[str, str, str, datetime, int, str]] = []
    entries: list[tuple[str, int, str, str | None, str]] = []
    search: list[tuple[str, str, str, str]] = []
    now = datetime(2026, 1, 1, tzinfo=UTC)
    for s in range(sessions):
        sid = f"s{s}"
        head = f'{{"type":"session","version":3,"id":"{sid}","timestamp":"{TS}","cwd":"/"}}'
        heads.append((sid, head, f"e{per}", now + timedelta(seconds=s), per, uuid.uuid4().hex))
        for i in range(per):
            text = " ".join(rng.choices(vocab, cum_weights=weights, k=rng.randint(10, 40)))
            role = "assistant" if i % 2 else "user"
            parent = "null" if i == 0 else f'"e{i}"'
            payload = (
                f'{{"type":"message","id":"e{i + 1}","parentId":{parent},"timestamp":"{TS}",'
                f'"message":{{"role":"{role}","content":"{text}"}}}}'
            )
            entries.append((sid, i, f"e{i + 1}", None if i == 0 else f"e{i}", payload))
            search.append((sid, f"e{i + 1}", role, text))
    if url.startswith("sqlite"):
        conn = sqlite3.connect(url.removeprefix("sqlite://"))
        with conn:
            conn.executemany(
                "INSERT INTO ptree_sessions (id, header, leaf, name, updated, entry_count,"
                " incarnation) VALUES (?, ?, ?, NULL, ?, ?, ?)",
                [
                    (a, b, c, d.isoformat(timespec="microseconds"), e, f)
                    for a, b, c, d, e, f in heads
                ],
            )
            conn.executemany(
                "INSERT INTO ptree_entries (session, seq, id, parent, type, payload)"
                " VALUES (?, ?, ?, ?, 'message', ?)",
                entries,
            )
            conn.executemany(
                "INSERT INTO ptree_search_rows (rowid, session, entry, role) VALUES (?, ?, ?, ?)",
                [(n, sid, e, role) for n, (sid, e, role, _t) in enumerate(search, 1)],
            )
            conn.executemany(
                "INSERT INTO ptree_search (rowid, words) VALUES (?, ?)",
                [(n, text) for n, (_s, _e, _r, text) in enumerate(search, 1)],
            )
        conn.close()
    else:
        import psycopg

        with psycopg.connect(url, autocommit=True) as pconn, pconn.cursor() as cur:
            with cur.copy(
                "COPY ptree_sessions (id, header, leaf, name, updated, entry_count,"
                " incarnation) FROM STDIN"
            ) as copy:
                for a, b, c, d, e, f in heads:
                    copy.write_row((a, b, c, None, d, e, f))
            with cur.copy(
                "COPY ptree_entries (session, seq, id, parent, type, payload) FROM STDIN"
            ) as copy:
                for sid, seq, eid, parent_id, payload in entries:
                    copy.write_row((sid, seq, eid, parent_id, "message", payload))
            with cur.copy("COPY ptree_search (session, entry, role, words) FROM STDIN") as copy:
                for sid, eid, role, text in search:
                    copy.write_row((sid, eid, role, tsvector(text.split())))
            cur.execute("ANALYZE")
    return vocab, time.perf_counter() - start


def tsvector(words: list[str]) -> str:
    """A tsvector literal with positions, as the store builds it."""
    positions: dict[str, list[str]] = {}
    for i, w in enumerate(words, 1):
        positions.setdefault(w, []).append(str(i))
    return " ".join(f"'{w}':{','.join(p)}" for w, p in positions.items())


def like_count(url: str, w1: str, w2: str) -> int:
    """The unindexed baseline: how many entries' JSON holds both words."""
    sql = "SELECT count(*) FROM ptree_entries WHERE payload LIKE {p} AND payload LIKE {p}"
    if url.startswith("sqlite"):
        conn = sqlite3.connect(url.removeprefix("sqlite://"))
        try:
            return int(conn.execute(sql.format(p="?"), (f"%{w1}%", f"%{w2}%")).fetchone()[0])
        finally:
            conn.close()
    import psycopg

    with psycopg.connect(url, autocommit=True) as pconn:
        row = pconn.execute(sql.format(p="%s"), (f"%{w1}%", f"%{w2}%")).fetchone()
        assert row is not None
        return int(row[0])


def searching(
    url: str, vocab: list[str], repeat: int
) -> list[tuple[str, float, float, float, int]]:
    """(query, seconds for search(limit=20): median and fastest, seconds of the LIKE
    baseline, hits)."""
    out = []
    with stores.open(url) as store:
        for label, w1, w2 in [
            ("rare words", vocab[2000], vocab[3000]),
            ("middling words", vocab[50], vocab[200]),
            ("frequent words, ranks 40 and 80", vocab[40], vocab[80]),
            ("frequent words, ranks 10 and 20", vocab[10], vocab[20]),
            ("the two commonest", vocab[0], vocab[1]),
        ]:
            query = f"{w1} {w2}"
            hits = store.search(query)
            indexed = median_time(lambda q=query: store.search(q), repeat * 5)  # type: ignore[misc]
            fastest = min_time(lambda q=query: store.search(q), repeat * 5)  # type: ignore[misc]
            base = median_time(lambda a=w1, b=w2: like_count(url, a, b), 1)  # type: ignore[misc]
            out.append((f"{label} ({query})", indexed, fastest, base, len(hits)))
            if url.startswith("postgres"):
                # The same search without the block markers (the walk or the GIN read
                # alone), in the same run: the markers' baseline.
                from ptree.stores.postgres import PostgresStore

                index = PostgresStore.SEARCH_INDEX
                index.MARKED = False
                try:
                    plain = store.search(query)
                    assert [(h.session_id, h.entry_id) for h in plain] == [
                        (h.session_id, h.entry_id) for h in hits
                    ]
                    slow = median_time(lambda q=query: store.search(q), repeat * 5)  # type: ignore[misc]
                    quick = min_time(lambda q=query: store.search(q), repeat * 5)  # type: ignore[misc]
                finally:
                    index.MARKED = True
                out.append((f"{label} ({query}), no block markers", slow, quick, base, len(plain)))
    return out


class _NoIndex:
    """A search index that indexes nothing: the baseline of the index's cost."""

    def add(self, *args: Any) -> None:
        pass

    def remove(self, *args: Any) -> None:
        pass


def index_cost(
    url: str, repeat: int, saves: int
) -> tuple[tuple[float, float], tuple[float, float]]:
    """Seconds per save of one more entry, and of a new 100-entry session: with the
    index, and without."""
    vocab, weights = vocabulary(5000)
    rng = random.Random(3)

    def text() -> str:
        return " ".join(rng.choices(vocab, cum_weights=weights, k=30))

    results: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
    with stores.open(url) as store:
        index = store.SEARCH_INDEX  # type: ignore[attr-defined]
        trees = {}
        for indexed in (True, False):
            tree = SessionTree(header=SessionHeader(id=f"cost-{indexed}", timestamp=TS, cwd="/"))
            trees[indexed] = store.save(tree.append({"role": "user", "content": text()}))
        n = 0
        for _ in range(repeat):
            for indexed in (True, False):
                store.SEARCH_INDEX = index if indexed else _NoIndex()  # type: ignore[attr-defined]
                tree = trees[indexed]
                start = time.perf_counter()
                for _ in range(saves):
                    tree = store.save(tree.append({"role": "user", "content": text()}))
                one = (time.perf_counter() - start) / saves
                trees[indexed] = tree
                big = SessionTree(header=SessionHeader(id=f"big-{n}", timestamp=TS, cwd="/"))
                n += 1
                for _ in range(100):
                    big = big.append({"role": "user", "content": text()})
                start = time.perf_counter()
                store.save(big)
                whole = time.perf_counter() - start
                results[indexed].append((one, whole))
        store.SEARCH_INDEX = index  # type: ignore[attr-defined]
    med = {
        k: (statistics.median(a for a, _ in v), statistics.median(b for _, b in v))
        for k, v in results.items()
    }
    return (med[True][0], med[False][0]), (med[True][1], med[False][1])


# ------------------------------------------------------------------ prune


def size_of(url: str) -> int:
    if url.startswith("sqlite"):
        path = url.removeprefix("sqlite://")
        return sum(os.path.getsize(p) for p in (path, path + "-wal") if os.path.exists(p))
    import psycopg

    with psycopg.connect(url, autocommit=True) as pconn:
        row = pconn.execute(
            "SELECT sum(pg_total_relation_size(c)) FROM unnest(ARRAY['ptree_entries',"
            " 'ptree_search', 'ptree_sessions', 'ptree_pruned']::regclass[]) c"
        ).fetchone()
        assert row is not None
        return int(row[0])


def pruning(url: str, n: int) -> tuple[int, int, int, float]:
    """A session of n entries, 90% on dead branches: sizes before, after the prune,
    after VACUUM; and the prune's seconds."""
    vocab, weights = vocabulary(5000)
    rng = random.Random(5)
    with stores.open(url) as store:
        t = SessionTree(header=SessionHeader(id="prune", timestamp=TS, cwd="/"), clock=clock)
        t = t.append({"role": "user", "content": "root"})
        for i in range(n - 1):
            if i % 10 == 0:
                t = t.move_to("e1")  # a new dead branch every ten entries
            t = t.append(
                {"role": "user", "content": " ".join(rng.choices(vocab, cum_weights=weights, k=40))}
            )
        t = t.move_to("e1").append({"role": "user", "content": "the leaf"})
        store.save(t)
        if url.startswith("sqlite"):
            sqlite3.connect(url.removeprefix("sqlite://")).execute(
                "PRAGMA wal_checkpoint(TRUNCATE)"
            )
        before = size_of(url)
        start = time.perf_counter()
        report = store.prune("prune", keep=[])
        took = time.perf_counter() - start
        assert len(report.kept) == 2
    if url.startswith("sqlite"):
        conn = sqlite3.connect(url.removeprefix("sqlite://"))
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        after = size_of(url)
        conn.execute("VACUUM")
        conn.close()
    else:
        after = size_of(url)
        import psycopg

        with psycopg.connect(url, autocommit=True) as pconn:
            pconn.execute("VACUUM ptree_entries, ptree_search, ptree_sessions, ptree_pruned")
            vacuumed = size_of(url)
            # What gives the space back to the file system; it locks the tables.
            pconn.execute("VACUUM FULL ptree_entries, ptree_search, ptree_sessions, ptree_pruned")
        print(f"  PostgreSQL after VACUUM FULL: {size_of(url) / 1e6:.2f} MB")
        return before, after, vacuumed, took
    return before, after, size_of(url), took


# ------------------------------------------------------------------ the table


def run(smoke: bool, rows: Any | None = None, only: str | None = None) -> None:
    if rows is None:
        print("| case | target | measured |")
        print("| --- | --- | --- |", flush=True)

        def add(row: tuple[str, str, str]) -> None:
            print("| " + " | ".join(row) + " |", flush=True)
    else:
        add = rows.append
    sizes = [100, 1_000] if smoke else [1_000, 10_000, 100_000]
    n_sessions, per = (20, 50) if smoke else (10_000, 100)
    repeat = 1 if smoke else 3
    tmp = Path(tempfile.mkdtemp(prefix="ptree-scale-"))
    try:
        for name, url in urls(tmp, "paging").items() if only in (None, "paging") else ():
            pages = paging(url, sizes, repeat)
            lo, hi = sizes[0], sizes[-1]
            for n in sizes:
                first, deep, whole = pages[n]
                add(
                    (
                        f"{name}: page of 50 of {n:,} sessions (first; from a cursor halfway)"
                        " vs the whole list",
                        "<= 10 ms, flat",
                        f"{first * 1e3:.2f} ms; {deep * 1e3:.2f} ms vs {whole * 1e3:.0f} ms",
                    )
                )
            add(
                (
                    f"{name}: page from a cursor, {hi:,} vs {lo:,} sessions",
                    "flat",
                    f"{pages[hi][1] / pages[lo][1]:.2f}x",
                )
            )
        for name, url in urls(tmp, "search").items() if only in (None, "search") else ():
            vocab, took = fill_messages(url, n_sessions, per)
            total = n_sessions * per
            add(
                (
                    f"{name}: bulk insert of {total:,} messages in {n_sessions:,} sessions",
                    "(setup)",
                    f"{took:.0f} s",
                )
            )
            for query, indexed, fastest, base, hits in searching(url, vocab, repeat):
                add(
                    (
                        f"{name}: search {query}, {total:,} messages (median; fastest)"
                        " vs LIKE without index",
                        "<= 50 ms",
                        f"{indexed * 1e3:.1f} ms; {fastest * 1e3:.1f} ms vs {base * 1e3:.0f} ms"
                        f" ({hits} hits shown)",
                    )
                )
            (one_on, one_off), (big_on, big_off) = index_cost(url, repeat, 10 if smoke else 50)
            add(
                (
                    f"{name}: save of 1 more entry, indexed vs not",
                    "report",
                    f"{one_on / one_off:.2f}x ({one_on * 1e3:.2f} ms vs {one_off * 1e3:.2f} ms)",
                )
            )
            add(
                (
                    f"{name}: save of a new 100-entry session, indexed vs not",
                    "report",
                    f"{big_on / big_off:.2f}x ({big_on * 1e3:.1f} ms vs {big_off * 1e3:.1f} ms)",
                )
            )
        for name, url in urls(tmp, "prune").items() if only in (None, "prune") else ():
            n = 1_000 if smoke else 10_000
            before, after, vacuumed, took = pruning(url, n)
            add(
                (
                    f"{name}: prune 90% of {n:,} entries: size before, after, after VACUUM",
                    "shrinks",
                    f"{before / 1e6:.2f} MB, {after / 1e6:.2f} MB, {vacuumed / 1e6:.2f} MB"
                    f" (prune {took * 1e3:.0f} ms)",
                )
            )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        pg = pg_url()
        if pg:
            pg_reset(pg)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--smoke", action="store_true", help="small sizes, for CI")
    parser.add_argument("--only", choices=["paging", "search", "prune"], help="one part")
    parser.add_argument("--store", choices=STORES, help="one kind of store")
    args = parser.parse_args()
    if args.store:
        STORES[:] = [args.store]
    run(args.smoke, only=args.only)


if __name__ == "__main__":
    main()
