"""Fuzzing search: any query — every byte, SQL and FTS5 and tsquery operators, quotes,
NULs, lone surrogates, long words — gives the hits a naive model expects or
:class:`~ptree.stores.SearchQueryError`, never another exception, on every store.

Sized for CI by ``PTREE_FUZZ_EXAMPLES`` (default 150 queries per store).
"""

from __future__ import annotations

import os
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ptree import SessionHeader, SessionTree, stores
from ptree.stores import SearchQueryError

EXAMPLES = int(os.environ.get("PTREE_FUZZ_EXAMPLES", "150"))
TS = "2026-01-01T00:00:00.000Z"

TEXTS = [
    "deploy the kettle near the teapot",
    "NEAR AND OR NOT and or not",
    "kettle: port=8042; x*y & z | !w <-> 'q' \\ \"quoted\"",
    "naïve café ΣΊΣΥΦΟΣ 東京 ½ ² x_y",
    "select * from ptree_entries where 1=1 --",
]
OPERATORS = [
    '"', "*", "NEAR(", "NEAR", ")", "(", ":", "&", "!", "|", "<->", "<2>", "'", "\\", "-",
    "+", "^", "AND", "OR", "NOT", "{", "}", "\x00", ";", "--", "%", "_", "?", "$1", ",",
    "/*", "*/", "col:", "^kettle", "kettle*", "@@", "::tsquery", " ", "\t", "\n",
]  # fmt: skip
WORDS = ["kettle", "deploy", "teapot", "near", "and", "8042", "café", "東京", "x", "y"]

queries = (
    st.lists(st.sampled_from(OPERATORS + WORDS), max_size=8).map("".join)
    | st.lists(st.sampled_from(OPERATORS + WORDS), max_size=8).map(" ".join)
    | st.text(st.characters(codec=None, categories=None), max_size=30)
    | st.binary(max_size=30).map(lambda b: b.decode("latin-1"))
    | st.text(max_size=3).map(lambda t: "k" * 60 + t)  # longer than any indexed word
)


def model(query: str) -> set[str] | None:
    """The entry ids whose words hold the query's (in a row, when quoted), or None
    when the query has no word."""
    q = query.strip()
    words = re.findall(r"[^\W_]+", q.lower())
    if not words:
        return None
    phrase = len(q) >= 2 and q[0] == q[-1] == '"' and len(words) > 1
    out = set()
    for n, text in enumerate(TEXTS, 1):
        said = re.findall(r"[^\W_]+", text.lower())
        if phrase:
            hit = any(said[i : i + len(words)] == words for i in range(len(said)))
        else:
            hit = set(words) <= set(said)
        if hit:
            out.add(f"e{n}")
    return out


def test_any_query_gives_hits_or_a_typed_error(store_url: str) -> None:
    with stores.open(store_url) as store:
        t = SessionTree(header=SessionHeader(id="s", timestamp=TS, cwd="/"))
        for text in TEXTS:
            t = t.append({"role": "user", "content": text})
        store.save(t)

        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            suppress_health_check=[HealthCheck.function_scoped_fixture],
        )
        @given(queries)
        def check(query: str) -> None:
            expected = model(query)
            if expected is None:
                with pytest.raises(SearchQueryError) as info:
                    store.search(query, limit=50)
                assert info.value.query == query
                return
            hits = store.search(query, limit=50)
            assert {h.entry_id for h in hits} == expected, query

        check()
        assert store.load("s") == t  # nothing a query did changed the store
