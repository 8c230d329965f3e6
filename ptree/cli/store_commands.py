"""The ``ptree`` subcommands for stores: ``sessions`` and ``copy``, and how the other
commands read ``STORE_URL#SESSION_ID`` where they take a file."""

from __future__ import annotations

import argparse
import warnings
from collections.abc import Iterator
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

    >>> store_ref("sqlite:///srv/s.db#chat%201"), store_ref("notes.jsonl")
    (('sqlite:///srv/s.db', 'chat 1'), None)
    """
    from .. import stores

    scheme = urlsplit(text).scheme.lower() if "://" in text else ""
    if scheme not in stores.SCHEMES:
        return None
    url, sep, fragment = text.partition("#")
    return url, (unquote(fragment) if sep else None)


def load_ref(text: str) -> SessionTree | None:
    """The session ``URL#SESSION_ID`` names, or ``None`` if ``text`` is no store URL.

    A Claude Agent SDK transcript (:mod:`ptree.integrations.claude_agent`) is given as
    the Claude Code mapping makes it, with its subagents' transcripts.

    Cost: opening the store and one :meth:`~ptree.stores.Store.load`.

    Raises:
        UsageError: a store URL without ``#SESSION_ID``.
        SessionNotFoundError: no such session.
    """
    from .. import stores

    ref = store_ref(text)
    if ref is None:
        return None
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


def _setup_sessions(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "sessions",
        help="list the sessions of a store, newest first",
        description="List a store's sessions, newest first: id, entries, last saved (UTC), "
        "name.  STORE_URL is sqlite:///ABS/PATH.db, postgresql://... or jsonl:///ABS/DIR.",
    )
    p.add_argument("store", metavar="STORE_URL", help="the store")


@register("sessions", _setup_sessions)
def _sessions(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from .. import stores

    with stores.open(args.store) as store:
        listed = store.sessions()
    for s in listed:
        when = s.updated.strftime("%Y-%m-%d %H:%M:%S")
        name = f"  {s.name}" if s.name else ""
        out.write(f"{s.id}  {s.entry_count} entries  {when}{name}\n")
    print(f"{len(listed)} session{'' if len(listed) == 1 else 's'}", file=err)
    return 0


# ------------------------------------------------------------------ copy


def _setup_copy(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "copy",
        help="copy every session from one store (or a Pi file) to another",
        description="Copy sessions: SRC and DST are store URLs (sqlite:///ABS/PATH.db, "
        "postgresql://..., jsonl:///ABS/DIR), URL#SESSION_ID for one session, or a Pi "
        "session file.  Only what DST lacks is written: copying twice changes nothing.  "
        "SRC is only read.  A session DST holds with other entries is reported and "
        "left as it is (exit status 1).",
    )
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
