"""Search across sessions: what is indexed, what a query means, and the index of each
SQL database, written once for every store.

**What is indexed** is the text a person reads in an entry
(:func:`ptree.pi.readable.entry_text`: user and assistant text, thinking, tool names and
results, shell commands and output, compaction and branch summaries, custom message
content, session names), never JSON keys, ids, arguments or base64 data.  That text is
cut into *words*: runs of letters and digits (``_`` and every other character
separate them), lower-cased.  A word longer than :data:`MAX_WORD` characters (a hash, a
base64 blob) is not indexed; an entry's first :data:`MAX_WORDS` words are.

**A query** is words, all of which must occur in one entry (in any order), or a
quoted phrase (``"deploy the kettle"``), whose words must occur one after the other.
The query is cut into words by the same rule, so punctuation, quotes inside, ``*``,
``NEAR(``, ``:``, ``&``, ``!`` or ``)`` are separators, never syntax: the databases only
ever see words of letters and digits, bound as parameters.  A query with no word in it
is refused (:class:`~ptree.stores.SearchQueryError`).

**The indexes**, kept current by every save in its transaction:

- SQLite: an FTS5 table ``ptree_search`` of the words, its rowid pointing into
  ``ptree_search_rows (session, entry, role)``; best first is FTS5's BM25 rank.
- PostgreSQL: ``ptree_search (session, entry, role, words tsvector)`` with a GIN index;
  the ``tsvector`` is built from the words directly (a ``tsvector`` literal, not
  ``to_tsvector``), so PostgreSQL's parser and dictionaries never split or stem a word
  differently from SQLite; best first is ``ts_rank`` for the entry's length.
- The ``jsonl:`` store has no index: it reads every session (O(size of the store))
  and ranks by how often the query's words occur for the entry's length.

Snippets are made here from the entry's text, for every store alike.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import attrs

from ..entries import Entry
from ..pi.readable import entry_text
from .errors import SearchQueryError

if TYPE_CHECKING:
    from ._sql import Cursor

__all__ = [
    "MAX_WORD",
    "MAX_WORDS",
    "Query",
    "SearchHit",
    "entry_words",
    "parse_query",
    "snippet",
    "words",
]

MAX_WORD = 50
"""Longer words are not indexed (and a query word this long finds nothing)."""

MAX_WORDS = 16383
"""How many words of an entry are indexed (PostgreSQL's limit on positions)."""

MAX_LIMIT = 1000
"""The most hits one search returns."""

_WORD = re.compile(r"[^\W_]+")

MARK = ("«", "»")
"""What a snippet puts around each word of the query it shows."""


@attrs.frozen
class SearchHit:
    """One entry a search found.

    Attributes:
        session_id: the session it is in.
        entry_id: the entry.
        role: the message's role (``user``, ``assistant``, ``toolResult``...), or the
            entry's type (``compaction``, ``branch_summary``, ``custom_message``,
            ``session_info``).
        snippet: a short piece of the entry's text around the match, on one line, the
            query's words marked ``«like this»``.
    """

    session_id: str
    entry_id: str
    role: str
    snippet: str


@attrs.frozen
class Query:
    """A parsed query: its words, and whether they are a phrase."""

    words: tuple[str, ...]
    phrase: bool

    def fts5(self) -> str:
        """The FTS5 MATCH expression: each word a quoted string (it holds only letters
        and digits), a phrase one quoted string."""
        if self.phrase:
            return '"' + " ".join(self.words) + '"'
        return " AND ".join(f'"{w}"' for w in self.words)

    def tsquery(self) -> str:
        """The ``tsquery`` literal: ``'a' & 'b'``, or ``'a' <-> 'b'`` for a phrase."""
        return (" <-> " if self.phrase else " & ").join(f"'{w}'" for w in self.words)

    def matches(self, indexed: Sequence[str]) -> int:
        """How often the query occurs in these indexed words (0: it does not match).
        O(len(indexed))."""
        if not indexed:
            return 0
        if self.phrase:
            n = len(self.words)
            first = self.words[0]
            return sum(
                1
                for i, w in enumerate(indexed)
                if w == first and tuple(indexed[i : i + n]) == self.words
            )
        counts = Counter(indexed)
        if all(counts[w] for w in self.words):
            return sum(counts[w] for w in set(self.words))
        return 0


def words(text: str) -> list[str]:
    """The words of a text, as indexed and queried (see the module doc).  O(len(text)).

    >>> words("Deploy the kettle_service: port=8000, naïve CAFÉ!")
    ['deploy', 'the', 'kettle', 'service', 'port', '8000', 'naïve', 'café']
    """
    return _WORD.findall(text.lower())


def entry_words(entry: Entry) -> tuple[str, list[str]] | None:
    """``(role, indexed words)`` of an entry, or ``None`` if it has none to index.
    O(size of the entry)."""
    said = entry_text(entry)
    if said is None:
        return None
    role, text = said
    out: list[str] = []
    for w in words(text):
        if len(w) <= MAX_WORD:
            out.append(w)
            if len(out) >= MAX_WORDS:
                break
    return (role, out) if out else None


def tsvector(indexed: Iterable[str]) -> str:
    """The ``tsvector`` literal of indexed words, with their positions (1, 2, ...)."""
    positions: dict[str, list[str]] = {}
    for i, w in enumerate(indexed, 1):
        positions.setdefault(w, []).append(str(i))
    return " ".join(f"'{w}':{','.join(p)}" for w, p in positions.items())


def parse_query(url: str, query: object) -> Query:
    """The words of a query, and whether it is a phrase (it is in double quotes).

    Raises:
        SearchQueryError: not a ``str``, or no word in it.

    >>> parse_query("x", 'kettle AND "port"*')
    Query(words=('kettle', 'and', 'port'), phrase=False)
    >>> parse_query("x", '"deploy the  Kettle"')
    Query(words=('deploy', 'the', 'kettle'), phrase=True)
    """
    if not isinstance(query, str):
        raise SearchQueryError(url, query, f"a query is a str, not {type(query).__name__}")
    stripped = query.strip()
    phrase = len(stripped) >= 2 and stripped[0] == '"' and stripped[-1] == '"'
    found = tuple(words(stripped))
    if not found:
        raise SearchQueryError(
            url, query, f"the query {query[:100]!r} has no word (letters or digits) to search"
        )
    return Query(found, phrase and len(found) > 1)


def check_limit(url: str, query: object, limit: object) -> int:
    """``limit`` as a number of hits, 1 to :data:`MAX_LIMIT`."""
    if type(limit) is not int or not 1 <= limit <= MAX_LIMIT:
        raise SearchQueryError(url, query, f"limit must be an int from 1 to {MAX_LIMIT}")
    return limit


def snippet(text: str, query: Query, width: int = 160) -> str:
    """A piece of ``text`` around the first match, on one line, the query's words
    marked.  O(len(text)).

    >>> q = parse_query("x", "kettle port")
    >>> snippet("The kettle\\nlistens on its PORT.", q)
    'The «kettle» listens on its «PORT».'
    """
    wanted = set(query.words)
    spans = [
        m.span() for m in _WORD.finditer(text) if m.group().lower() in wanted
    ]  # the same words as words() finds, in the original text
    if not spans:
        start = 0
    else:
        start = max(0, spans[0][0] - width // 3)
        while start > 0 and not text[start - 1].isspace() and spans[0][0] - start < width // 2:
            start -= 1
    end = min(len(text), start + width)
    parts: list[str] = []
    at = start
    for a, b in spans:
        if a < start:
            continue
        if b > end:
            break
        parts += [text[at:a], MARK[0], text[a:b], MARK[1]]
        at = b
    parts.append(text[at:end])
    out = " ".join("".join(parts).split())
    return ("…" if start > 0 else "") + out + ("…" if end < len(text) else "")


# ----------------------------------------------------------------- the SQL indexes


class SqlIndex:
    """The search index of one SQL dialect.  Every method runs inside the caller's
    transaction, on its cursor (see :class:`~ptree.stores._sql.Cursor`); session and
    entry ids are in their column form (:func:`~ptree.stores._sql.db_key`)."""

    def create(self, cur: Cursor) -> None:
        raise NotImplementedError

    def add(self, cur: Cursor, session: str, rows: Sequence[tuple[str, str, list[str]]]) -> None:
        """Index ``(entry id, role, words)`` rows of a session."""
        raise NotImplementedError

    def remove(self, cur: Cursor, session: str, entries: Sequence[str] | None = None) -> None:
        """Drop a session's rows (only those of ``entries``, if given)."""
        raise NotImplementedError

    def find(self, query: Query, limit: int, session: str | None) -> tuple[str, list[object]]:
        """The one query (and its parameters) giving ``(session, entry, role, payload)``
        of the best ``limit`` matches, best first."""
        raise NotImplementedError


class SqliteIndex(SqlIndex):
    """FTS5 over the words (see the module doc)."""

    def create(self, cur: Cursor) -> None:
        cur.execute(
            "CREATE TABLE ptree_search_rows (rowid INTEGER PRIMARY KEY,"
            " session TEXT NOT NULL, entry TEXT NOT NULL, role TEXT NOT NULL)"
        )
        cur.execute("CREATE INDEX ptree_search_rows_entry ON ptree_search_rows (session, entry)")
        # Words are cut and lower-cased before FTS5 sees them; unicode61 then only
        # splits at the spaces between them.
        cur.execute(
            "CREATE VIRTUAL TABLE ptree_search USING fts5(words,"
            " tokenize = 'unicode61 remove_diacritics 0')"
        )

    def add(self, cur: Cursor, session: str, rows: Sequence[tuple[str, str, list[str]]]) -> None:
        for entry, role, indexed in rows:
            cur.execute(
                "INSERT INTO ptree_search_rows (session, entry, role) VALUES (?, ?, ?)",
                (session, entry, role),
            )
            cur.execute(
                "INSERT INTO ptree_search (rowid, words) VALUES (last_insert_rowid(), ?)",
                (" ".join(indexed),),
            )

    def remove(self, cur: Cursor, session: str, entries: Sequence[str] | None = None) -> None:
        where, params = "session = ?", [session]
        if entries is not None:
            # All in one statement: the ids as a JSON array (no id column value holds
            # a NUL or a lone surrogate: see db_key).
            where += " AND entry IN (SELECT value FROM json_each(?))"
            params.append(json.dumps(list(entries)))
        cur.execute(
            f"DELETE FROM ptree_search WHERE rowid IN"
            f" (SELECT rowid FROM ptree_search_rows WHERE {where})",
            params,
        )
        cur.execute(f"DELETE FROM ptree_search_rows WHERE {where}", params)

    def find(self, query: Query, limit: int, session: str | None) -> tuple[str, list[object]]:
        sql = (
            "SELECT r.session, r.entry, r.role, e.payload FROM ("
            "SELECT rowid, rank FROM ptree_search WHERE ptree_search MATCH ?"
        )
        params: list[object] = [query.fts5()]
        if session is not None:
            sql += " AND rowid IN (SELECT rowid FROM ptree_search_rows WHERE session = ?)"
            params.append(session)
        # The payloads (for snippets) of the best only.
        sql += (
            " ORDER BY rank, rowid LIMIT ?) s"
            " JOIN ptree_search_rows r ON r.rowid = s.rowid"
            " JOIN ptree_entries e ON e.session = r.session AND e.id = r.entry"
            " ORDER BY s.rank, s.rowid"
        )
        params.append(limit)
        return sql, params


class PostgresIndex(SqlIndex):
    """A ``tsvector`` per entry with a GIN index (see the module doc)."""

    def create(self, cur: Cursor) -> None:
        cur.execute(
            "CREATE TABLE ptree_search (session text NOT NULL, entry text NOT NULL,"
            " role text NOT NULL, words tsvector NOT NULL, PRIMARY KEY (session, entry))"
        )
        cur.execute("CREATE INDEX ptree_search_words ON ptree_search USING gin (words)")

    def add(self, cur: Cursor, session: str, rows: Sequence[tuple[str, str, list[str]]]) -> None:
        if rows:
            cur.executemany(
                "INSERT INTO ptree_search (session, entry, role, words)"
                " VALUES (?, ?, ?, ?::tsvector)",
                [(session, entry, role, tsvector(indexed)) for entry, role, indexed in rows],
            )

    def remove(self, cur: Cursor, session: str, entries: Sequence[str] | None = None) -> None:
        if entries is None:
            cur.execute("DELETE FROM ptree_search WHERE session = ?", (session,))
        elif entries:
            cur.execute(
                "DELETE FROM ptree_search WHERE session = ? AND entry = ANY(?)",
                (session, list(entries)),
            )

    def find(self, query: Query, limit: int, session: str | None) -> tuple[str, list[object]]:
        sql = (
            "SELECT s.session, s.entry, s.role, e.payload FROM ("
            "SELECT session, entry, role, ts_rank(words, q, 2) AS rank"
            " FROM ptree_search, CAST(? AS tsquery) q WHERE words @@ q"
        )
        params: list[object] = [query.tsquery()]
        if session is not None:
            sql += " AND session = ?"
            params.append(session)
        # Normalisation 2: the rank divided by the entry's length, as BM25 weighs it.
        # The payloads (for snippets) of the best only.
        sql += (
            " ORDER BY rank DESC, session, entry LIMIT ?) s"
            " JOIN ptree_entries e ON e.session = s.session AND e.id = s.entry"
            " ORDER BY s.rank DESC, s.session, s.entry"
        )
        params.append(limit)
        return sql, params
