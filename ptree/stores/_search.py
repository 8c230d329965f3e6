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

**Best first** means the highest :func:`score`: how often the query's words (or its
phrase) occur in the entry, for the entry's length in words; among equal scores, the
newer entry first.  The ``jsonl:`` store, which reads every session anyway, ranks
every match (equal scores in the order of the session ids, then of the entries).  The
SQL stores rank only the **newest** :data:`NEWEST` (200) matches, or ``limit`` of them
if more are asked for: "newest" is the order entries were indexed, that is saved; a
hit is the best of those, and an older entry, however good, is not found once 200
newer entries hold the query.  When 200 or fewer entries match, that is every match.
This bounds a search's work by 200 matches instead of all of them: the two commonest
words of a million messages, which occur together in most of them, are answered as
fast as rare ones.

**The indexes**, kept current by every save in its transaction:

- SQLite: an FTS5 table ``ptree_search`` of the words, its rowid (the order rows were
  indexed) pointing into ``ptree_search_rows (session, entry, role)``.  FTS5 gives the
  matches newest first (``ORDER BY rowid DESC``) and stops after 200: O(200 log n)
  for any words.  The table is *contentless* (schema 4): FTS5 keeps no copy of the
  words (it was a sixth of a LangGraph thread's file).  The words are recomputed from
  the stored entry (:func:`payload_words`) where they are needed: to score the 200
  candidates, and to remove a row (FTS5's ``'delete'`` is given the exact words the
  row was indexed with, so it is run while the entries are still stored).  Hence the
  word rule (:func:`entry_words`, and the readable text it reads) is part of the
  schema: changing what an entry's words are needs a schema version whose upgrade
  rebuilds the SQLite index, or removing a row indexed under the old rule corrupts
  FTS5's lists.
- PostgreSQL: ``ptree_search (session, entry, role, words tsvector, n)`` with a GIN
  index on the words and a B-tree on ``n``, the order rows were indexed (schema 3);
  the ``tsvector`` is built from the words directly (a ``tsvector`` literal, not
  ``to_tsvector``), so PostgreSQL's parser and dictionaries never split or stem a word
  differently from SQLite.  GIN finds matches in no useful order, so each row's
  ``tsvector`` also holds its *block marker*, ``_b`` and ``n // 4096`` (a lexeme with
  no position, set by a trigger as the row is inserted; no word has a ``_``, so no
  query or entry spells one, and it is not a word of the score).  A search first
  walks the newest 2,000 rows (B-tree on ``n``), testing each; the share of them
  matching says what is left to do: walk on (common words), ask GIN for the query AND
  one block's marker, a block at a time from the newest, as many blocks as the share
  says hold the matches still needed (words of middling frequency: only those matches
  are read, however many there are in all), or read every match through GIN and keep
  the newest (rare words, or more than 32 blocks to ask).
- The ``jsonl:`` store has no index: it reads every session (O(size of the store)).

Snippets are made here from the entry's text, for every store alike.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from ..entries import Entry, entry_from_json
from ..pi.lines import parse_line
from ..pi.readable import entry_text
from ._plan import Plan, Read, Sql
from .errors import SearchQueryError

if TYPE_CHECKING:
    from ._sql import Cursor

__all__ = [
    "MAX_WORD",
    "MAX_WORDS",
    "NEWEST",
    "Candidate",
    "Query",
    "SearchHit",
    "best",
    "entry_words",
    "parse_query",
    "payload_words",
    "score",
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
        # list.count per query word: a search scores hundreds of entries.
        counts = [indexed.count(w) for w in set(self.words)]
        return sum(counts) if all(counts) else 0


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


def payload_words(payload: str) -> list[str]:
    """The indexed words of a stored entry (its JSON line): those :func:`entry_words`
    gave it when it was saved.  O(size of the entry).

    >>> payload_words('{"type":"message","id":"a","parentId":null,"timestamp":"t",'
    ...               '"message":{"role":"user","content":"Boil the kettle!"}}')
    ['boil', 'the', 'kettle']
    """
    said = entry_words(entry_from_json(parse_line(payload)))
    return [] if said is None else said[1]


BLOCK_MARKER = "_b"
"""How PostgreSQL's block markers begin (``_b0``, ``_b1``, ...): no word has a ``_``
(see :func:`words`), so no query matches one, and no entry's words hold one."""


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


def score(query: Query, indexed: Sequence[str]) -> float:
    """How well an entry's indexed words match: the query's occurrences for the
    entry's length (0.0: no match).  Every store ranks by it.  O(len(indexed)).

    >>> score(parse_query("x", "kettle"), ["the", "kettle", "and", "kettle"])
    0.5
    """
    found = query.matches(indexed)
    return found / len(indexed) if found else 0.0


# ----------------------------------------------------------------- the SQL indexes

NEWEST = 200
"""How many of the newest matches a SQL store ranks (``limit`` of them, if more)."""


@attrs.frozen
class Candidate:
    """A match a SQL index found: its place in the order entries were indexed (higher
    is newer), where it is (ids in their column form), and its indexed words."""

    order: int
    session: str
    entry: str
    role: str
    words: list[str]


def best(query: Query, candidates: Iterable[Candidate], limit: int) -> list[Candidate]:
    """The best ``limit`` candidates: highest :func:`score` first, the newer first
    among equal scores.  O(c log c) for c candidates.

    >>> q = parse_query("x", "tea")
    >>> found = [Candidate(1, "s", "a", "user", ["tea", "now"]),
    ...          Candidate(2, "s", "b", "user", ["tea"]), Candidate(3, "s", "c", "user", ["tea"])]
    >>> [c.entry for c in best(q, found, 2)]
    ['c', 'b']
    """
    ranked = sorted(candidates, key=lambda c: (-score(query, c.words), -c.order))
    return ranked[:limit]


def tsvector_words(text: str) -> list[str]:
    """The indexed words of a ``tsvector`` as :func:`tsvector` wrote it, in order (the
    inverse of :func:`tsvector`).  O(len(text)).

    >>> tsvector_words(tsvector(["tea", "for", "tea"]))
    ['tea', 'for', 'tea']
    """
    # 'word':1,5 'other':2 ...: a word is letters and digits (no quote, colon or
    # space), and the positions are 1 to the number of words, each once.
    # A block marker (PostgreSQL, schema 3) has no position: it is not a word.
    items = [item for item in text.split(" ") if item[-1] != "'"]
    out = [""] * (text.count(",") + len(items))
    for item in items:
        quoted, _, positions = item.rpartition(":")
        word = quoted[1:-1]
        for p in positions.split(","):
            out[int(p) - 1] = word
    return out


class SqlIndex:
    """The search index of one SQL dialect.  ``create``, ``add`` and ``remove`` run
    inside the caller's transaction, on its cursor (see
    :class:`~ptree.stores._sql.Cursor`); session and entry ids are in their column form
    (:func:`~ptree.stores._sql.db_key`)."""

    def create(self, cur: Cursor) -> None:
        raise NotImplementedError

    def add(self, cur: Cursor, session: str, rows: Sequence[tuple[str, str, list[str]]]) -> None:
        """Index ``(entry id, role, words)`` rows of a session."""
        raise NotImplementedError

    def remove(self, session: str, entries: Sequence[str] | None = None) -> Plan[None]:
        """Drop a session's rows (only those of ``entries``, if given): a plan of
        :class:`~ptree.stores._plan.Sql` steps, run while the entries are still stored."""
        raise NotImplementedError

    def number_rows(self, cur: Cursor) -> None:
        """Schema version 3: give every row its place in the order entries were
        indexed (a no-op where the index has it already)."""

    def drop_words(self, cur: Cursor) -> None:
        """Schema version 4: keep no copy of the indexed words (a no-op where the
        index has none to drop)."""

    def newest(self, query: Query, n: int, session: str | None) -> Plan[list[Candidate]]:
        """The newest ``n`` matches of ``query`` (in ``session`` only, if given), newest
        first: the ``n`` highest :attr:`Candidate.order` of the entries holding it."""
        raise NotImplementedError


class SqliteIndex(SqlIndex):
    """FTS5 over the words, contentless (see the module doc)."""

    #: The FTS5 table's words column and tokenizer.  Words are cut and lower-cased
    #: before FTS5 sees them; unicode61 then only splits at the spaces between them.
    #: No table of each row's length in words (columnsize=0): the score counts the
    #: words it reads.
    FTS5 = "words, tokenize = 'unicode61 remove_diacritics 0', columnsize = 0"

    def create(self, cur: Cursor) -> None:
        """Schema version 2's tables (the words kept by FTS5: :meth:`drop_words`
        makes it contentless)."""
        cur.execute(
            "CREATE TABLE ptree_search_rows (rowid INTEGER PRIMARY KEY,"
            " session TEXT NOT NULL, entry TEXT NOT NULL, role TEXT NOT NULL)"
        )
        cur.execute("CREATE INDEX ptree_search_rows_entry ON ptree_search_rows (session, entry)")
        cur.execute(f"CREATE VIRTUAL TABLE ptree_search USING fts5({self.FTS5})")

    def drop_words(self, cur: Cursor) -> None:
        """Schema version 4: the same index, contentless, from the words FTS5 kept
        (the exact words each row was indexed with): O(rows)."""
        cur.execute(f"CREATE VIRTUAL TABLE ptree_search_4 USING fts5({self.FTS5}, content = '')")
        cur.execute(
            "INSERT INTO ptree_search_4 (rowid, words) SELECT rowid, words FROM ptree_search"
        )
        cur.execute("DROP TABLE ptree_search")
        cur.execute("ALTER TABLE ptree_search_4 RENAME TO ptree_search")

    def add(self, cur: Cursor, session: str, rows: Sequence[tuple[str, str, list[str]]]) -> None:
        # A new row's rowid is one more than the largest: the order entries were indexed.
        for entry, role, indexed in rows:
            cur.execute(
                "INSERT INTO ptree_search_rows (session, entry, role) VALUES (?, ?, ?)",
                (session, entry, role),
            )
            cur.execute(
                "INSERT INTO ptree_search (rowid, words) VALUES (last_insert_rowid(), ?)",
                (" ".join(indexed),),
            )

    def remove(self, session: str, entries: Sequence[str] | None = None) -> Plan[None]:
        where, params = "r.session = ?", [session]
        if entries is not None:
            # All in one statement: the ids as a JSON array (no id column value holds
            # a NUL or a lone surrogate: see db_key).
            where += " AND r.entry IN (SELECT value FROM json_each(?))"
            params.append(json.dumps(list(entries)))
        # A contentless FTS5 row is removed by giving FTS5 its exact words again:
        # recomputed from the entries, still stored.  O(size of the entries removed).
        rows = yield Sql(
            "SELECT r.rowid, e.payload FROM ptree_search_rows r JOIN ptree_entries e"
            f" ON e.session = r.session AND e.id = r.entry WHERE {where}",
            params,
        )
        if rows:
            yield Sql(
                "INSERT INTO ptree_search (ptree_search, rowid, words) VALUES ('delete', ?, ?)",
                [(rowid, " ".join(payload_words(payload))) for rowid, payload in rows],
                many=True,
            )
        yield Sql(
            "DELETE FROM ptree_search_rows WHERE rowid IN"
            f" (SELECT r.rowid FROM ptree_search_rows r WHERE {where})",
            params,
        )

    def newest(self, query: Query, n: int, session: str | None) -> Plan[list[Candidate]]:
        if session is None:
            # FTS5 walks its lists of rows newest first and stops after n: O(n log size),
            # whatever the number of matches.
            sql = (
                "SELECT s.rowid, r.session, r.entry, r.role, e.payload FROM ("
                "SELECT rowid FROM ptree_search WHERE ptree_search MATCH ?"
                " ORDER BY rowid DESC LIMIT ?) s"
                " JOIN ptree_search_rows r ON r.rowid = s.rowid"
                " JOIN ptree_entries e ON e.session = r.session AND e.id = r.entry"
            )
            params: list[object] = [query.fts5(), n]
        else:
            # The session's rows, each looked up in FTS5 by rowid: O(session's entries).
            sql = (
                "SELECT r.rowid, r.session, r.entry, r.role, e.payload"
                " FROM ptree_search_rows r JOIN ptree_search s ON s.rowid = r.rowid"
                " JOIN ptree_entries e ON e.session = r.session AND e.id = r.entry"
                " WHERE r.session = ? AND ptree_search MATCH ? ORDER BY r.rowid DESC LIMIT ?"
            )
            params = [session, query.fts5(), n]
        rows = yield Read(sql, params, planned=True)
        # The words of the candidates only, recomputed (FTS5 keeps none).
        return [Candidate(o, s, e, r, payload_words(p)) for o, s, e, r, p in rows]


class PostgresIndex(SqlIndex):
    """A ``tsvector`` per entry with a GIN index, and its place in the order entries
    were indexed (``n``, schema version 3) with a B-tree (see the module doc)."""

    #: Rows per block: each row's words hold its block's marker (schema 3), set when
    #: the tables are made (the database keeps it: ``ptree_search_block()``).
    BLOCK = 4096
    #: Find the newest matches by the blocks' markers (else by the walk or the GIN
    #: read alone, as before schema 3's markers: the benchmark's baseline).
    MARKED = True
    #: The most markers one statement asks for; beyond, every match left is read.
    MAX_MARKERS = 32
    #: Rows walked newest first before deciding how to find the rest.
    WINDOW = 2000
    #: A match found through the GIN index costs about as much as this many rows
    #: walked (each is a random heap read; measured on 10^6 rows: 20-40 us, 1-2 us).
    GIN_COST = 20

    def create(self, cur: Cursor) -> None:
        cur.execute(
            "CREATE TABLE ptree_search (session text NOT NULL, entry text NOT NULL,"
            " role text NOT NULL, words tsvector NOT NULL, PRIMARY KEY (session, entry))"
        )
        cur.execute("CREATE INDEX ptree_search_words ON ptree_search USING gin (words)")

    def number_rows(self, cur: Cursor) -> None:
        """Schema version 3: ``n``, the order rows were indexed (existing rows get
        theirs in the order they are stored), and its index."""
        cur.execute("ALTER TABLE ptree_search ADD COLUMN n bigint GENERATED ALWAYS AS IDENTITY")
        cur.execute("CREATE UNIQUE INDEX ptree_search_n ON ptree_search (n)")
        # Each row's block marker, in its words: set by a trigger as a row is
        # inserted (n is known only then), and now for the rows there are.
        cur.execute(
            "CREATE OR REPLACE FUNCTION ptree_search_block() RETURNS bigint"
            f" LANGUAGE sql IMMUTABLE AS 'SELECT {int(self.BLOCK)}::bigint'"
        )
        cur.execute(
            "CREATE OR REPLACE FUNCTION ptree_search_marker(n bigint) RETURNS tsvector"
            f" LANGUAGE sql IMMUTABLE AS $$SELECT array_to_tsvector(ARRAY['{BLOCK_MARKER}'"
            " || (n / ptree_search_block())::text])$$"
        )
        cur.execute(
            "CREATE OR REPLACE FUNCTION ptree_search_mark() RETURNS trigger LANGUAGE plpgsql"
            " AS $$BEGIN NEW.words := NEW.words || ptree_search_marker(NEW.n);"
            " RETURN NEW; END$$"
        )
        cur.execute(
            "CREATE OR REPLACE TRIGGER ptree_search_mark BEFORE INSERT ON ptree_search"
            " FOR EACH ROW EXECUTE FUNCTION ptree_search_mark()"
        )
        cur.execute("UPDATE ptree_search SET words = words || ptree_search_marker(n)")
        # Every GIN scan reads the whole pending list of rows not yet merged (up to
        # 4 MB by default: 270 pages cost a block's scan 2.9 ms instead of 0.5 ms at
        # 10^6 rows); a search makes a scan per block, so keep the list short.
        cur.execute("ALTER INDEX ptree_search_words SET (gin_pending_list_limit = 64)")

    def add(self, cur: Cursor, session: str, rows: Sequence[tuple[str, str, list[str]]]) -> None:
        if rows:
            cur.executemany(
                "INSERT INTO ptree_search (session, entry, role, words)"
                " VALUES (?, ?, ?, ?::tsvector)",
                [(session, entry, role, tsvector(indexed)) for entry, role, indexed in rows],
            )

    def remove(self, session: str, entries: Sequence[str] | None = None) -> Plan[None]:
        if entries is None:
            yield Sql("DELETE FROM ptree_search WHERE session = ?", (session,))
        elif entries:
            yield Sql(
                "DELETE FROM ptree_search WHERE session = ? AND entry = ANY(?)",
                (session, list(entries)),
            )

    def newest(self, query: Query, n: int, session: str | None) -> Plan[list[Candidate]]:
        # Every statement is planned as written (never a prepared statement's generic
        # plan): whether a search walks the rows or reads the GIN index depends on the
        # words.
        columns = "n, session, entry, role, words::text"
        tsq = query.tsquery()
        if session is not None:
            rows = yield Read(
                f"SELECT {columns} FROM ptree_search WHERE session = ?"
                " AND words @@ CAST(? AS tsquery) ORDER BY n DESC LIMIT ?",
                [session, tsq, n],
                planned=True,
            )
            return _candidates(rows)
        return (yield from self._newest_walked(tsq, n))

    def _newest_by_blocks(
        self, tsq: str, n: int, below: int, asked: int, found: list[Candidate]
    ) -> Plan[list[Candidate]]:
        # Each row's words hold its block's marker ('_b<n // block>', schema 3), so
        # GIN itself narrows by age: the query AND a block's marker reads only the
        # matches in that block, however common the words.  Blocks below the rows
        # walked are asked for newest first, as many as the density so far says
        # hold the rest (and a quarter more), until n matches are found.
        columns = "n, session, entry, role, words::text"
        ((bottom, block),) = yield Read(
            "SELECT min(n), ptree_search_block() FROM ptree_search", [], planned=True
        )
        high, lowest = (below - 1) // block, bottom // block
        while high >= lowest:
            need = (n - len(found)) * asked / len(found) / block
            low = max(lowest, high - int(need * 1.25))
            if high - low >= self.MAX_MARKERS:
                break  # too many blocks: every match left is read (the caller)
            # One GIN scan per block (a UNION ALL), not one of the query AND an OR
            # of markers: GIN tests every item of the ORed markers' lists against
            # the whole query (measured: 20 markers 38 ms, 73 markers 283 ms; one
            # 0.3 ms).  ptree_search_block() is parallel unsafe: no parallel plan,
            # whose workers took 34 ms to start for 7 blocks of 2 ms each.  "n + 0"
            # is no B-tree range for the planner to AND with GIN.
            blocks = range(high, low - 1, -1)
            one = f"SELECT {columns} FROM ptree_search WHERE words @@ CAST(? AS tsquery)"
            rows = yield Read(
                "SELECT * FROM (" + " UNION ALL ".join([one] * len(blocks)) + ") m"
                " WHERE ptree_search_block() > 0 AND n + 0 < ? ORDER BY n DESC LIMIT ?",
                [*(f"({tsq}) & '{BLOCK_MARKER}{b}'" for b in blocks), below, n - len(found)],
                planned=True,
            )
            found += _candidates(rows)
            if len(found) >= n:
                return found
            asked += below - low * block
            below = low * block
            high = low - 1
            if not rows and high >= lowest:
                break  # the density was wrong: read every match left
        rows = yield Read(
            f"SELECT {columns} FROM ptree_search WHERE words @@ CAST(? AS tsquery)"
            " AND n + 0 < ? ORDER BY n + 0 DESC LIMIT ?",
            [tsq, below, n - len(found)],
            planned=True,
        )
        return found + _candidates(rows)

    def _newest_walked(self, tsq: str, n: int) -> Plan[list[Candidate]]:
        # GIN gives matches in no useful order, so there are two ways to the newest:
        # walk the rows newest first (B-tree on n) testing each, which costs
        # n / density rows, or read every match through GIN and keep the newest n,
        # which costs (matches x GIN_COST).  The first window's density decides.
        # Each statement is planned as written: the inner LIMIT forces the walk,
        # "n + 0" keeps the GIN read from walking.
        columns = "n, session, entry, role, words::text"
        found: list[Candidate] = []
        below: int | None = None  # walked every row from here up
        walked = 0
        window = self.WINDOW
        while True:
            where, above = ("", []) if below is None else (" WHERE n < ?", [below])
            rows = yield Read(
                f"(SELECT {columns} FROM (SELECT * FROM ptree_search{where}"
                " ORDER BY n DESC LIMIT ?) w"
                " WHERE words @@ CAST(? AS tsquery) ORDER BY n DESC LIMIT ?)"
                f" UNION ALL SELECT min(n), NULL, NULL, NULL, NULL FROM (SELECT n"
                f" FROM ptree_search{where} ORDER BY n DESC LIMIT ?) b"
                " UNION ALL SELECT min(n), NULL, NULL, NULL, NULL FROM ptree_search",
                [*above, window, tsq, n - len(found), *above, window],
                planned=True,
            )
            *matched, (lo, *_), (first, *_) = rows
            found += _candidates(matched)
            walked += window
            if len(found) >= n or lo is None or lo <= first:
                return found  # enough, or every row walked
            below = lo
            density = len(found) / walked
            to_walk = (n - len(found)) / density if density else float("inf")
            if self.MARKED and found and self.GIN_COST * (n - len(found)) < to_walk:
                # Schema 3's block markers: only the matches needed are read.
                return (yield from self._newest_by_blocks(tsq, n, below, walked, found))
            if to_walk > self.GIN_COST * density * (lo - first):
                break
            # What the density so far says is left, and a half more (not a multiple
            # of the last window: a walk that overshoots costs more than a step).
            window = min(max(self.WINDOW, int(to_walk * 1.5)), 1 << 30)
        # Every match again, the window's too: a bound on n would have the planner
        # AND GIN's matches with a B-tree range over most of the table.
        rows = yield Read(
            f"SELECT {columns} FROM ptree_search WHERE words @@ CAST(? AS tsquery)"
            " ORDER BY n + 0 DESC LIMIT ?",
            [tsq, n],
            planned=True,
        )
        return _candidates(rows)


def _candidates(rows: Iterable[Sequence[Any]]) -> list[Candidate]:
    return [Candidate(o, s, e, r, tsvector_words(w)) for o, s, e, r, w in rows]
