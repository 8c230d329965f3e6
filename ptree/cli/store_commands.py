"""The ``ptree`` subcommands for stores: ``sessions``, ``copy``, ``search``, ``prune``
and ``migrate``, and how the other commands read ``STORE_URL#SESSION_ID`` where they
take a file."""

from __future__ import annotations

import argparse
import json
import re
import warnings
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, TextIO
from urllib.parse import unquote, urlsplit

from .commands import UsageError, register
from .progress import Progress

if TYPE_CHECKING:
    from ..tree import SessionTree

__all__ = ["load_ref", "store_ref"]


def store_ref(text: str) -> tuple[str, str | None] | None:
    """``(url, session id or None)`` if ``text`` is a store URL (``URL`` or
    ``URL#SESSION_ID``, the id percent-decoded), else ``None`` (a file path).  O(len(text)).

    Args:
        text: a command-line argument: a store URL or a file path.

    >>> store_ref("sqlite:///srv/s.db#chat%201"), store_ref("notes.jsonl")
    (('sqlite:///srv/s.db', 'chat 1'), None)
    """
    if "://" not in text:
        return None  # a file path: the stores (and asyncio, ssl, ...) stay unimported
    from .. import stores

    scheme = urlsplit(text).scheme.lower()
    if scheme not in stores.SCHEMES:
        return None
    url, sep, fragment = text.partition("#")
    return url, (unquote(fragment) if sep else None)


def load_ref(text: str) -> SessionTree | None:
    """The session ``URL#SESSION_ID`` names, or ``None`` if ``text`` is no store URL.

    A Claude Agent SDK transcript (:mod:`ptree.integrations.claude_agent`) is given as
    the Claude Code mapping makes it, with its subagents' transcripts.

    Cost: opening the store and one :meth:`~ptree.stores.Store.load`.

    Args:
        text: a command-line argument: a store URL or a file path.

    Raises:
        UsageError: a store URL without ``#SESSION_ID``.
        SessionNotFoundError: no such session.
    """
    ref = store_ref(text)
    if ref is None:
        return None
    from .. import stores

    url, sid = ref
    if sid is None:
        raise UsageError(f"{text}: name the session: {url}#SESSION_ID (ptree sessions {url})")
    with stores.open(url) as store:
        tree = store.load(sid)
        from ..integrations import claude_agent  # imports the importers: only when used

        if tree.header is not None and claude_agent.HEADER_FIELD in tree.header.extra:
            # A Claude Agent SDK transcript: its entries are the SDK's records, read
            # (with its subagents') through the Claude Code mapping.
            return claude_agent.transcript_tree(store, sid)
        return tree


# ------------------------------------------------------------------ sessions


def _setup_sessions(p: argparse.ArgumentParser) -> None:
    p.add_argument("store", metavar="STORE_URL", help="the store")
    p.add_argument("--limit", type=int, metavar="N", help="list N sessions (one page)")
    p.add_argument(
        "--after", metavar="CURSOR", help="the page after this one (the cursor a page printed)"
    )
    p.add_argument(
        "--order",
        choices=["updated", "id"],
        default="updated",
        help="newest first (default) or by id",
    )


@register("sessions", _setup_sessions)
def _sessions(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """list the sessions of a store, newest first

    List a store's sessions, newest first: id, entries, last saved (UTC), name.
    STORE_URL is sqlite:///ABS/PATH.db, postgresql://... or jsonl:///ABS/DIR.
    """
    from .. import stores
    from .text import one_line

    with stores.open(args.store) as store:
        listed = store.sessions(limit=args.limit, after=args.after, order=args.order)
    for s in listed:
        when = s.updated.strftime("%Y-%m-%d %H:%M:%S")
        name = f"  {one_line(s.name)}" if s.name else ""
        out.write(f"{one_line(s.id)}  {s.entry_count} entries  {when}{name}\n")
    print(f"{len(listed)} session{'' if len(listed) == 1 else 's'}", file=err)
    if listed.next_cursor is not None:
        order = "" if args.order == "updated" else f" --order {args.order}"
        print(
            f"next page: ptree sessions {args.store} --limit {args.limit}{order}"
            f" --after {listed.next_cursor}",
            file=err,
        )
    return 0


# ------------------------------------------------------------------ search


def _setup_search(p: argparse.ArgumentParser) -> None:
    p.add_argument("store", metavar="STORE_URL", help="the store (or URL#SESSION_ID)")
    p.add_argument("query", metavar="QUERY", help="words, or a phrase in double quotes")
    p.add_argument("--limit", type=int, default=20, metavar="N", help="at most N hits (20)")
    p.add_argument("--json", action="store_true", help="one JSON object per hit")


@register("search", _setup_search)
def _search(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """find messages across a store's sessions

    Find the entries whose text holds every word of QUERY (any order, any case), or a
    "quoted phrase"; best first.  Punctuation and operators are not syntax.  SQL stores
    answer from their index; a jsonl store reads every session.  Prints SESSION_ID
    ENTRY_ID ROLE SNIPPET per hit.
    """
    from .. import stores
    from .text import one_line

    ref = store_ref(args.store)
    if ref is None:
        raise UsageError(f"{args.store}: search takes a store URL (sqlite://, postgresql://...)")
    url, sid = ref
    with stores.open(url) as store:
        hits = store.search(args.query, limit=args.limit, session=sid)
    for h in hits:
        if args.json:
            record = {
                "session": h.session_id,
                "entry": h.entry_id,
                "role": h.role,
                "snippet": h.snippet,
            }
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
        else:
            out.write(
                f"{one_line(h.session_id)}  {one_line(h.entry_id)}  {h.role}  "
                f"{one_line(h.snippet)}\n"
            )
    print(f"{len(hits)} hit{'' if len(hits) == 1 else 's'}", file=err)
    return 0


# ------------------------------------------------------------------ prune

_AGE = re.compile(r"(\d+)([smhdw])")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def _age(text: str) -> timedelta:
    m = _AGE.fullmatch(text.strip())
    if m is None:
        raise argparse.ArgumentTypeError(f"{text!r}: an age is a number and s, m, h, d or w: 30d")
    return timedelta(seconds=int(m.group(1)) * _UNITS[m.group(2)])


def _setup_prune(p: argparse.ArgumentParser) -> None:
    p.add_argument("ref", metavar="URL#SESSION_ID", help="the stored session")
    p.add_argument("--keep-leaves", action="store_true", help="keep every branch's tip")
    p.add_argument("--keep-labelled", action="store_true", help="keep labelled entries")
    p.add_argument(
        "--newer-than", type=_age, metavar="AGE", help="keep entries younger than AGE (30d, 12h)"
    )
    p.add_argument(
        "--keep", action="append", default=[], metavar="ENTRY_ID", help="keep this entry"
    )
    p.add_argument("--dry-run", action="store_true", help="say what would go; change nothing")


@register("prune", _setup_prune)
def _prune(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """remove the branches of a stored session that nothing kept hangs from

    Remove the branches of URL#SESSION_ID that no kept entry hangs from.  The current
    leaf always stays, and with every kept entry its path, its tool calls' results, a
    compaction's kept range, a branch summary's source and its labels.  Say what to keep
    with the options (combined: any of them keeps).
    """
    from .. import stores

    ref = store_ref(args.ref)
    sid = None if ref is None else ref[1]
    if ref is None or sid is None:
        raise UsageError(f"{args.ref}: name a stored session: URL#SESSION_ID")
    url = ref[0]
    keep = stores.Keep.ids(args.keep)
    if args.keep_leaves:
        keep |= stores.Keep.leaves()
    if args.keep_labelled:
        keep |= stores.Keep.labelled()
    if args.newer_than is not None:
        keep |= stores.Keep.newer(args.newer_than)
    with stores.open(url) as store:
        report = store.prune(sid, keep=keep, dry_run=args.dry_run)
    verb = "would remove" if report.dry_run else "removed"
    out.write(
        f"{verb} {len(report.removed)} of {len(report.kept) + len(report.removed)} entries;"
        f" {len(report.kept)} kept\n"
    )
    return 0


# ------------------------------------------------------------------ migrate


def _setup_migrate(p: argparse.ArgumentParser) -> None:
    p.add_argument("store", metavar="STORE_URL", help="the store")


@register("migrate", _setup_migrate)
def _migrate(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """upgrade a store's schema to this ptree's

    Upgrade a SQL store's tables to this ptree's schema version, in one transaction
    (opening a store does it too; this says what it did).  A SQLite file is then
    compacted (VACUUM) so that prunes give space back.  A store made by a newer ptree is
    refused, untouched.
    """
    from .. import stores

    with stores.open(args.store) as store:
        versions = store.schema_version
        if versions is None:
            out.write("a jsonl store has no schema: its files are Pi's, nothing to upgrade\n")
            return 0
        was, now = versions
        if isinstance(store, stores.SqliteStore):
            store.vacuum()
    if was == now:
        out.write(f"schema version {now}: up to date\n")
    else:
        out.write(f"schema version {was} -> {now}: upgraded\n")
    return 0


# ------------------------------------------------------------------ copy


def _setup_copy(p: argparse.ArgumentParser) -> None:
    p.add_argument("src", metavar="SRC", help="where the sessions are")
    p.add_argument("dst", metavar="DST", help="where they go")


def _sources(src: str, err: TextIO) -> tuple[int, int, Iterator[SessionTree]]:
    """How many sessions ``src`` has, how many it could not list (each reported on
    ``err``), and the sessions one by one."""
    from .. import stores
    from ..pi import load

    ref = store_ref(src)
    if ref is None:
        if not Path(src).is_file():
            raise FileNotFoundError(2, "no such file", src)
        return 1, 0, iter([load(src)])
    url, sid = ref
    store = stores.open(url)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ids = [sid] if sid is not None else [s.id for s in store.sessions()]
    for w in caught:
        print(f"ptree copy: warning: {w.message}", file=err)

    def each() -> Iterator[SessionTree]:
        try:
            for one in ids:
                yield store.load(one)
        finally:
            store.close()

    return len(ids), len(caught), each()


@register("copy", _setup_copy)
def _copy(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """copy every session from one store (or a Pi file) to another

    Copy sessions: SRC and DST are store URLs (sqlite:///ABS/PATH.db, postgresql://...,
    jsonl:///ABS/DIR), URL#SESSION_ID for one session, or a Pi session file.  Only what
    DST lacks is written: copying twice changes nothing.  SRC is only read.  A session
    DST holds with other entries is reported and left as it is (exit status 1).
    """
    from .. import stores
    from ..pi import dump, load

    dst_ref = store_ref(args.dst)
    if dst_ref is not None and dst_ref[1] is not None:
        raise UsageError(f"{args.dst}: copy into a store URL, without #SESSION_ID")
    total, unreadable, trees = _sources(args.src, err)
    copied = unchanged = conflicts = 0
    if dst_ref is None:
        # A Pi file as the destination: one session, never replacing another file.
        if total != 1:
            raise UsageError(
                f"{args.src} has {total} sessions: copy into a store, or name one (URL#ID)"
            )
        tree = next(trees)
        target = Path(args.dst)
        if target.exists():
            if load(target) != tree:
                raise UsageError(f"{target} exists and holds something else; not replaced")
            unchanged = 1
        else:
            try:  # never replaces a file (or a dangling link) made meanwhile
                dump(tree, target)
            except FileExistsError:
                raise UsageError(
                    f"{target} exists and holds something else; not replaced"
                ) from None
            copied = 1
    else:
        with (
            stores.open(dst_ref[0]) as dst,
            Progress("copying", total, stream=err, unit=" sessions") as bar,
        ):
            for n, tree in enumerate(trees, 1):
                assert tree.header is not None
                sid = tree.header.id
                existing = dst.load(sid) if sid in dst else None
                try:
                    # Saving what DST has already writes nothing (a file's old header
                    # version aside, the same value).
                    saved = dst.save(tree)
                except stores.ConflictError as exc:
                    conflicts += 1
                    print(f"ptree copy: {exc}", file=err)
                else:
                    if saved == existing:
                        unchanged += 1
                    else:
                        copied += 1
                bar.update(n)
    plural = "" if copied == 1 else "s"
    out.write(f"copied {copied} session{plural}; {unchanged} already there")
    if conflicts:
        out.write(f"; {conflicts} conflicting, left as they were")
    if unreadable:
        out.write(f"; {unreadable} unreadable in SRC, not copied")
    out.write("\n")
    return 1 if conflicts or unreadable else 0
