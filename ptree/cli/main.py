"""The ``ptree`` command (also ``python -m ptree``).

Each subcommand is a function ``(args, out, err) -> exit status`` registered in
:data:`COMMANDS`.  Errors a user can cause (a missing file, a bad file, an unknown
id) print one line on stderr and give a non-zero status, never a traceback.

Subcommands: ``demo``, ``show``, ``path``, ``check``, ``fork``, ``export`` (html,
markdown, dot, mermaid, jsonl; ``--redact``), ``import`` (``claude-code``, ``codex``,
``librechat``, ``chatgpt``, ``openwebui``, or detected), and for stores ``sessions``,
``copy``, ``search``, ``prune`` and ``migrate`` (:mod:`~ptree.cli.store_commands`);
``ptree COMMAND --help`` explains each.  Wherever a command takes a session file,
``STORE_URL#SESSION_ID`` names a stored session.
"""

from __future__ import annotations

import argparse
import gc
import io
import os
import re
import shutil
import sys
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from ..errors import SessionError, UnknownEntryError
from .commands import COMMANDS, SETUPS, UsageError, register
from .progress import Progress

if TYPE_CHECKING:  # the commands import what they use when run: ``--help`` loads no tree
    from ..context import Context
    from ..tree import SessionTree

__all__ = ["COMMANDS", "main"]


def _isatty(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def _load(path: str, err: TextIO, command: str, *, strict: bool = True) -> SessionTree:
    """The session file at ``path`` (or ``STORE_URL#SESSION_ID``: the stored session);
    in lenient mode each warning is one line on stderr."""
    from ..pi import load
    from .store_commands import load_ref
    from .text import one_line

    stored = load_ref(path)
    if stored is not None:
        return stored
    if not Path(path).exists():
        raise FileNotFoundError(2, "no such file", path)
    size = Path(path).stat().st_size
    bar = Progress(
        f"loading {Path(path).name} ({size / 1e6:.0f} MB)",
        None,
        stream=err,
        enabled=None if size > 4_000_000 else False,
    )
    # load reports no progress on its way, so a big file shows the time it takes.
    with bar.ticking(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tree: SessionTree = load(path, strict=strict)
    for w in caught:
        print(f"ptree {command}: warning: {one_line(str(w.message))}", file=err)
    return tree


def _output_file(path: str, *, force: bool) -> Path:
    """The file a command is to write: refused when its folder is not there, or it exists.

    Anything at the path counts, a dangling link too: without ``--force`` nothing is
    replaced and no link is followed.  (The write itself checks again, atomically.)
    Writing would fail anyway, but naming the temporary file the writer was making.
    """
    target = Path(path)
    if target.is_dir():
        raise UsageError(f"{target}: is a directory, not a file")
    if not target.parent.is_dir():
        raise UsageError(f"{target}: no folder {str(target.parent)!r} to write into")
    if os.path.lexists(target) and not force:
        raise _exists(target)
    return target


def _exists(target: Path) -> UsageError:
    return UsageError(f"{target} exists (use --force to overwrite it)")


def _write_output(target: Path, data: bytes, *, force: bool) -> None:
    """Write a command's output file atomically (a temporary file, then a link or a
    rename): never half a file, never over an existing one without ``force``, and a
    link at ``target`` is replaced, never written through."""
    from ..pi.files import replace_file, write_new

    if force:
        replace_file(target, data)
    else:
        try:
            write_new(target, data)
        except FileExistsError:
            raise _exists(target) from None


def _dump_output(tree: SessionTree, target: Path, *, force: bool) -> None:
    """Write a session to a command's output file (checked by :func:`_output_file`):
    never over a file made since the check without ``force``."""
    from ..pi import dump

    try:
        dump(tree, target, overwrite=force)
    except FileExistsError:
        raise _exists(target) from None


def _file_argument(p: argparse.ArgumentParser) -> None:
    """The session a command reads (see :func:`_load`)."""
    p.add_argument("file", help="a Pi session file (.jsonl), or STORE_URL#SESSION_ID")


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def _lines(out: TextIO, lines: Iterable[str]) -> None:
    """Write lines as they come, a few hundred at a time (one write per line costs
    more than making the line)."""
    write = out.write
    batch: list[str] = []
    for line in lines:
        batch.append(line)
        if len(batch) >= 256:
            batch.append("")
            write("\n".join(batch))
            batch.clear()
    if batch:
        batch.append("")
        write("\n".join(batch))


def _json(
    out: TextIO, value: dict[str, Any], listed: str, encode: Callable[[Any], str] | None = None
) -> None:
    """Write an object as JSON: one key per line, each item of ``listed`` on one line
    (made by ``encode``, by default :data:`~ptree.cli.message_json.compact`).

    Readable, and fast for 100,000 items: ``json.dump(indent=...)`` falls back to
    the pure-Python encoder, about ten times slower than this.  Written as it is
    made, a few hundred lines at a time.
    """
    from .message_json import compact

    _lines(out, _json_lines(value, listed, compact if encode is None else encode))


def _json_lines(value: dict[str, Any], listed: str, encode: Callable[[Any], str]) -> Iterator[str]:
    from .message_json import compact

    yield "{"
    keys = [k for k in value if k != listed] + [listed]
    for n, key in enumerate(keys):
        comma = "," if n < len(keys) - 1 else ""
        if key != listed:
            yield f"  {compact(key)}: {compact(value[key])}{comma}"
            continue
        items = value[key]
        if not items:
            yield f"  {compact(key)}: []{comma}"
            continue
        yield f"  {compact(key)}: ["
        last = len(items) - 1
        for i, item in enumerate(items):
            yield f"    {encode(item)}{',' if i < last else ''}"
        yield f"  ]{comma}"
    yield "}"


# ------------------------------------------------------------------ demo


@register("demo")
def _demo(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """show branching on persistent values (the seed scenario)"""
    from .demo import run_demo

    run_demo(out)
    return 0


# ------------------------------------------------------------------ show


def _setup_show(p: argparse.ArgumentParser) -> None:
    _file_argument(p)
    p.add_argument(
        "--json",
        action="store_true",
        help="print the tree as JSON (flat entries with children and depth)",
    )
    p.add_argument("--ascii", action="store_true", help="draw with ASCII only")
    p.add_argument(
        "--fold", type=_positive, metavar="N", help="show at most N entries of each long linear run"
    )
    p.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="colour the drawing (auto: only on a terminal, and not with NO_COLOR)",
    )
    p.add_argument(
        "--lenient",
        action="store_true",
        help="skip bad lines (with a warning each) instead of refusing the file",
    )


def _summary(tree: SessionTree) -> str:
    from .text import one_line

    leaves = len(tree.leaves())
    parts = [
        f"{len(tree)} entr{'y' if len(tree) == 1 else 'ies'}",
        f"{leaves} branch{'' if leaves == 1 else 'es'}",
        f"leaf {one_line(tree.leaf_id) if tree.leaf_id is not None else '(none)'}",
    ]
    name = tree.session_name
    if name:
        parts.insert(0, f"session {one_line(repr(name))}")
    return " · ".join(parts)


@register("show", _setup_show)
def _show(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """draw the tree: branches, current path (*), labels, previews

    Draw a session file as an indented tree.  A chain of single children stays in one
    column; indentation grows only where the conversation branches.  '*' marks the
    current path; the leaf says so.
    """
    from .render import render_text, tree_to_json

    tree = _load(args.file, err, "show", strict=not args.lenient)
    if args.json:
        _json(out, tree_to_json(tree), "entries")
        return 0
    color = args.color == "always" or (
        args.color == "auto" and _isatty(out) and not os.environ.get("NO_COLOR")
    )
    width = shutil.get_terminal_size().columns if _isatty(out) else None
    out.write(_summary(tree) + "\n")
    _lines(out, render_text(tree, color=color, ascii_only=args.ascii, width=width, fold=args.fold))
    return 0


# ------------------------------------------------------------------ path


def _setup_path(p: argparse.ArgumentParser) -> None:
    _file_argument(p)
    p.add_argument("--leaf", metavar="ID", help="build the context at this entry instead")
    p.add_argument(
        "--provider",
        action="store_true",
        help="give the provider-level messages (ptree.context.to_provider_messages)",
    )


def context_json(context: Context, *, provider: bool = False) -> dict[str, Any]:
    """A :class:`~ptree.Context` as plain JSON (what ``ptree path`` prints)."""
    from ..context import to_provider_messages

    messages: Sequence[dict[str, Any]] = context.messages
    if provider:
        messages = to_provider_messages(messages)
    return {
        **_state_json(context),
        "messages": list(messages),  # frozen values: json takes them as they are
    }


def _state_json(context: Context) -> dict[str, Any]:
    model = context.model
    return {
        "leafId": context.leaf_id,
        "model": None if model is None else {"provider": model.provider, "modelId": model.model_id},
        "thinkingLevel": context.thinking_level,
        "activeTools": None if context.active_tools is None else list(context.active_tools),
    }


@register("path", _setup_path)
def _path(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """the context a model gets at the leaf (or at --leaf ID), as JSON

    Print ptree.build_context at the leaf as JSON: messages, model, thinking level,
    active tools.
    """
    from ..context import build_context
    from .message_json import message_json

    tree = _load(args.file, err, "path")
    context = build_context(tree, args.leaf)
    if args.provider:
        _json(out, context_json(context, provider=True), "messages")
        return 0
    # The same text as context_json's, but a message the context gives as stored
    # goes out from its raw bytes while it has them: nothing decoded, frozen or kept.
    sources = context.messages.sources()
    _json(out, {**_state_json(context), "messages": sources}, "messages", message_json)
    return 0


# ------------------------------------------------------------------ check


def _setup_check(p: argparse.ArgumentParser) -> None:
    _file_argument(p)


def file_problems(
    path: str, notes: list[str] | None = None
) -> tuple[list[str], SessionTree | None]:
    """Every problem of a session file, one line each (``FILE:LINE: reason``), in line order.

    Strict loading refuses a file at its first problem; a lenient load reports each
    line it skips or repairs (a malformed line, an invalid entry, a duplicate id, a
    missing parent, a cycle, a torn last line) as a warning and goes on.  So the
    warnings of one lenient load are all the problems, and with no warning the
    lenient and strict loads agree.  A missing or invalid header, which even a
    lenient load refuses, is the one problem then.

    What a strict load recovers too (a torn line a crash left, a second header) is
    no problem: it goes to ``notes`` (when given), so that ``check`` and ``load``
    agree on every file.

    Returns:
        The problems (none: a strict load accepts the file) and the tree the lenient
        load read (``None`` when it refused the file).

    Cost: one read of the file, O(its size).
    """
    from ..pi import SessionFileError, SessionFileWarning, load

    problems: list[tuple[int, str]] = []
    tree: SessionTree | None = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            tree = load(path, strict=False)
        except SessionFileError as exc:
            problems.append((exc.line or 0, str(exc)))
    for w in caught:
        if issubclass(w.category, SessionFileWarning):
            if getattr(w.message, "strict_too", False):
                if notes is not None:
                    notes.append(str(w.message))
                continue
            # Say what is wrong, not what the lenient load did about it.
            text = str(w.message).replace(": skipped: ", ": ", 1).removesuffix(": made a root")
            found = _LINE.match(text[len(path) :]) if text.startswith(path) else None
            problems.append((int(found.group(1)) if found else 0, text))
    problems.sort(key=lambda p: p[0])  # stable: one line's problems keep their order
    return [text for _, text in problems], tree


_LINE = re.compile(r":(\d+):")


@register("check", _setup_check)
def _check(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """validate a session file strictly; report every problem with its line

    Read a session file strictly and report every problem, one line each, as FILE:LINE:
    reason.  Exit status 0 when the file is valid, 1 otherwise.
    """
    from ..pi import SessionFileError
    from .store_commands import load_ref
    from .text import one_line

    try:
        stored = load_ref(args.file)
    except (SessionFileError, SessionError) as exc:
        if isinstance(exc, KeyError):
            raise
        out.write(f"{_one_line(exc)}\n")
        print(f"ptree check: {args.file}: 1 problem", file=err)
        return 1
    if stored is not None:  # a store holds only sessions that load strictly
        out.write(f"{args.file}: ok, {_summary(stored)}\n")
        return 0
    if not Path(args.file).exists():
        raise FileNotFoundError(2, "no such file", args.file)
    size = Path(args.file).stat().st_size
    with Progress(
        f"checking {Path(args.file).name} ({size / 1e6:.0f} MB)",
        None,
        stream=err,
        enabled=None if size > 4_000_000 else False,
    ).ticking():
        notes: list[str] = []
        problems, tree = file_problems(args.file, notes)
    for note in notes:
        print(f"ptree check: warning: {one_line(note)}", file=err)
    for problem in problems:
        out.write(f"{one_line(problem)}\n")
    if problems or tree is None:
        print(
            f"ptree check: {args.file}: {len(problems)} problem{'' if len(problems) == 1 else 's'}",
            file=err,
        )
        return 1
    out.write(f"{one_line(args.file)}: ok, {_summary(tree)}\n")
    return 0


# ------------------------------------------------------------------ fork


def _setup_fork(p: argparse.ArgumentParser) -> None:
    _file_argument(p)
    p.add_argument("--at", metavar="ID", required=True, help="the entry the new path ends at")
    p.add_argument(
        "--before",
        action="store_true",
        help="end just before --at (which must be a user message), as Pi does to edit a question",
    )
    p.add_argument("-o", "--output", metavar="OUT", required=True, help="the new file")
    p.add_argument("--force", action="store_true", help="overwrite OUT if it exists")


@register("fork", _setup_fork)
def _fork(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """a new session file with only the path to one entry

    Copy the path from the root to --at ID into a new session file (labels on it kept,
    parentSession naming the source).
    """
    from ..branching import fork
    from ..entries import MessageEntry
    from .text import one_line

    target = _output_file(args.output, force=args.force)
    tree = _load(args.file, err, "fork")
    entry = tree[args.at]
    if args.before and not (
        isinstance(entry, MessageEntry) and entry.message.get("role") == "user"
    ):
        kind = one_line(
            f"{entry.message.get('role')} message"
            if isinstance(entry, MessageEntry)
            else f"{entry.type} entry"
        )
        article = "an" if kind[0] in "aeiou" else "a"
        raise UsageError(
            f"{args.file}: --before needs a user message, and {args.at!r} is "
            f"{article} {kind} (fork --at it to keep it)"
        )
    forked = fork(
        tree,
        args.at,
        position="before" if args.before else "at",
        parent_session=args.file if "://" in args.file else str(Path(args.file).resolve()),
    )
    _dump_output(forked, target, force=args.force)
    leaf = "(none)" if forked.leaf_id is None else one_line(forked.leaf_id)
    out.write(f"wrote {one_line(str(target))}: {len(forked)} entries, leaf {leaf}\n")
    return 0


# ------------------------------------------------------------------ export


_EXPORT_FORMATS = ("dot", "mermaid", "html", "markdown", "jsonl")


def _setup_export(p: argparse.ArgumentParser) -> None:
    _file_argument(p)
    p.add_argument("--format", choices=_EXPORT_FORMATS, required=True)
    p.add_argument(
        "-o", "--output", metavar="OUT", help="write here instead of stdout (required for jsonl)"
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="replace OUT if it exists (a link itself, not its target)",
    )
    p.add_argument(
        "--leaf",
        metavar="ID",
        help="html: open on the path to this entry; markdown: write the path to this entry",
    )
    p.add_argument(
        "--all-branches",
        action="store_true",
        help="markdown: every branch as its own section, saying where it forks",
    )
    p.add_argument(
        "--redact",
        action="store_true",
        help="replace well-known secret shapes (provider API keys, bearer tokens, private "
        "keys, password= assignments) with [redacted: what]",
    )
    p.add_argument(
        "--redact-pattern",
        metavar="REGEX",
        action="append",
        default=[],
        help="also redact what this regular expression matches (repeatable)",
    )


@register("export", _setup_export)
def _export(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """the session for people: HTML viewer, Markdown, Graphviz DOT, Mermaid, Pi JSONL

    Write the session in another form.  html: one self-contained page with the
    conversation and the whole tree (branch switching, search), opens offline.
    markdown: the current path (or --all-branches) as GitHub-flavoured Markdown.  dot /
    mermaid: a picture of the tree (the current path bold and blue, the leaf filled).
    jsonl: a Pi session file (with --redact, a scrubbed copy).  An existing OUT is never
    replaced without --force.
    """
    from .render import render_dot, render_mermaid

    fmt = args.format
    if args.all_branches and fmt != "markdown":
        raise UsageError("--all-branches applies to --format markdown only")
    if args.leaf is not None and fmt not in ("html", "markdown"):
        raise UsageError("--leaf applies to --format html and markdown only")
    if fmt == "jsonl" and args.output is None:
        raise UsageError("--format jsonl writes a session file: give it with -o OUT")
    target = None if args.output is None else _output_file(args.output, force=args.force)
    redactor = None
    if args.redact or args.redact_pattern:
        from ..formats.redaction import Redactor

        redactor = Redactor(builtin=args.redact, patterns=args.redact_pattern)
    tree = _load(args.file, err, "export")
    if args.leaf is not None and args.leaf not in tree:
        raise UnknownEntryError(args.leaf, f"no entry {args.leaf!r} in {args.file}")
    if redactor is not None:
        from ..formats.redaction import redact

        tree = redact(tree, redactor=redactor)
        n = redactor.count
        print(f"ptree export: redacted {n:,} secret{'' if n == 1 else 's'}", file=err)
    if fmt == "jsonl":
        assert target is not None
        _dump_output(tree, target, force=args.force)
        return 0
    text: Iterable[str]
    if fmt == "dot":
        text = _with_newlines(render_dot(tree))
    elif fmt == "mermaid":
        text = _with_newlines(render_mermaid(tree))
    elif fmt == "html":
        from ..formats.html import to_html

        text = [to_html(tree, show=args.leaf)]
    else:
        from ..formats.markdown import to_markdown

        text = [to_markdown(tree, leaf=args.leaf, all_branches=args.all_branches)]
    if target is None:
        for part in text:
            out.write(part)
    else:
        # All of it first: the output appears whole (temporary file, then a link or,
        # with --force, a rename that replaces a link itself), or not at all.
        data = "".join(text).encode("utf-8", "backslashreplace")
        _write_output(target, data, force=args.force)
    edges = len(tree) - len(tree.roots())
    if fmt == "mermaid" and edges > _MERMAID_MAX_EDGES:
        print(
            f"ptree export: warning: {edges:,} edges; Mermaid draws at most "
            f"{_MERMAID_MAX_EDGES} unless its maxEdges setting is raised (use --format dot "
            "for big trees)",
            file=err,
        )
    return 0


def _with_newlines(lines: Iterable[str]) -> Iterator[str]:
    for line in lines:
        yield line
        yield "\n"


# Mermaid's default maxEdges: a bigger flowchart fails to render ("Edge limit
# exceeded") where people paste it (GitHub, editors), and the setting cannot be
# raised from inside the diagram.
_MERMAID_MAX_EDGES = 500


# ------------------------------------------------------------------ import


def _setup_import(p: argparse.ArgumentParser) -> None:
    from ..formats.detect import FORMATS

    # The description names the formats, which only the formats package knows.
    known = "; ".join(f"{name}: {what}" for name, what in FORMATS.items())
    p.description = (
        "Convert another tool's files to Pi session files, keeping every "
        "branch.  claude-code, codex and librechat read one session into one file "
        "(OUT, default ./<source name>.pi.jsonl); chatgpt and openwebui write one file per "
        "conversation into a folder (OUT, default ./<source name>/).  Without FORMAT the "
        f"format is detected and named on stderr.  Formats: {known}.  A malformed source "
        "fails with FILE:LINE: reason and writes nothing; no file is overwritten "
        "without --force."
    )
    p.add_argument(
        "what",
        nargs="+",
        metavar="[FORMAT] SRC",
        help=f"the format ({', '.join(FORMATS)}; detected when left out) and the file to read",
    )
    p.add_argument(
        "-o",
        "--output",
        metavar="OUT",
        help="the session file (claude-code, codex, librechat) or the folder "
        "(chatgpt, openwebui) to write",
    )
    p.add_argument("--force", action="store_true", help="overwrite files that exist")
    p.add_argument(
        "--include-hidden",
        action="store_true",
        help="chatgpt: keep hidden nodes (custom instructions, …) as custom "
        "entries with their text",
    )
    p.add_argument(
        "--strict",
        action="store_true",
        help="chatgpt, openwebui: a broken conversation stops the import (default: it "
        "is skipped with a warning)",
    )
    p.add_argument(
        "--skip-progress",
        action="store_true",
        help="claude-code: leave out progress records (their number is reported)",
    )


@register("import", _setup_import)
def _import(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """convert another tool's sessions or exports to Pi session files"""
    from ..formats import IMPORTERS, ImportedSession, write_sessions
    from ..formats.detect import FORMATS, detect
    from .text import one_line

    if len(args.what) > 2:
        raise UsageError(f"import takes [FORMAT] SRC, not {len(args.what)} arguments")
    if len(args.what) == 2:
        fmt, source = args.what
        if fmt not in FORMATS:
            raise UsageError(f"unknown format {fmt!r}; the formats are: {', '.join(FORMATS)}")
    else:
        [source] = args.what
        if not Path(source).exists():
            raise FileNotFoundError(2, "no such file", source)
        if Path(source).is_dir():
            raise UsageError(f"{source}: is a folder; name the session file to import")
        found = detect(source)
        if found is None:
            raise UsageError(
                f"{source}: not a format ptree recognises; name one of: "
                + "; ".join(f"{name} ({what})" for name, what in FORMATS.items())
            )
        fmt = found
        print(f"ptree import: {source}: read as {fmt} (detected)", file=err)
    if not Path(source).exists():
        raise FileNotFoundError(2, "no such file", source)
    importer = IMPORTERS[fmt]
    options: dict[str, Any] = {}
    for flag, option, value, what in (
        ("skip_progress", "keep_progress", False, "claude-code sessions"),
        ("strict", "strict", True, "chatgpt and openwebui exports"),
        ("include_hidden", "include_hidden", True, "chatgpt exports"),
    ):
        if getattr(args, flag):
            if option not in importer.options:
                raise UsageError(f"--{flag.replace('_', '-')} applies to {what} only")
            options[option] = value
    target: Path | None = None
    if importer.one_file:
        target = _output_file(args.output or f"{Path(source).stem}.pi.jsonl", force=args.force)
        if target.exists() and target.resolve() == Path(source).resolve():
            raise UsageError(f"{target}: is the file being imported; write somewhere else")

    def report(line: str) -> None:
        print(f"ptree import: {one_line(source)}: {one_line(line)}", file=err)

    size = Path(source).stat().st_size
    bar = Progress(
        f"importing {Path(source).name} ({size / 1e6:.0f} MB)",
        None,
        stream=err,
        enabled=None if size > 4_000_000 or not importer.one_file else False,
        unit="" if importer.one_file else "conversations",
    )
    sessions: list[ImportedSession] = []
    with bar.ticking():
        # Every session is converted before a file is written: a bad source writes nothing.
        for session in importer.sessions(source, on_report=report, **options):
            sessions.append(session)
            bar.update(len(sessions))
    if target is not None:
        [session] = sessions
        tree = session.tree
        _dump_output(tree, target, force=args.force)
        kinds: dict[str, int] = {}
        for entry in tree.entries():
            kinds[entry.type] = kinds.get(entry.type, 0) + 1
        counts = ", ".join(f"{n:,} {k}" for k, n in sorted(kinds.items()))
        out.write(f"{one_line(str(target))}\n")
        print(
            f"ptree import: wrote {one_line(str(target))}: {len(tree):,} entries ({counts}), "
            f"leaf {one_line(str(tree.leaf_id))}",
            file=err,
        )
        return 0
    folder = args.output or Path(source).stem
    paths = write_sessions(sessions, folder, force=args.force)
    for path in paths:
        out.write(f"{one_line(str(path))}\n")
    print(
        f"ptree import: wrote {len(paths)} session file{'' if len(paths) == 1 else 's'} "
        f"to {folder}",
        file=err,
    )
    return 0


# ------------------------------------------------------------------ main


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every registered subcommand."""
    parser = argparse.ArgumentParser(
        prog="ptree",
        description="Persistent conversation trees: see, check and convert them.",
        epilog="Your files: no command replaces an existing file unless given --force "
        "(fork, export -o, import); outputs are written whole, through a temporary file, "
        "and a symbolic link at an output path is never followed.  Untrusted files: only "
        "regular files are read, a bad or hostile file costs one error line and time in "
        "proportion to its size, and text output shows control characters, escape "
        "sequences and bidirectional overrides from a file as U+FFFD (JSON output keeps "
        "them, escaped as JSON escapes them).",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for setup in SETUPS:
        setup(sub)
    return parser


def _one_line(exc: BaseException) -> str:
    # Error texts quote the file (ids, roles, paths): one_line keeps escape sequences
    # and bidi controls in them from reaching the terminal.
    from .text import one_line

    if isinstance(exc, OSError) and exc.filename is not None:
        return one_line(f"{exc.filename}: {exc.strerror or exc}")
    return one_line(str(exc)) or type(exc).__name__


def main(
    argv: Sequence[str] | None = None, *, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    """Run the ``ptree`` command line; return its exit status.

    A user's mistake (a missing or bad file, an unknown id) is one line on ``err``
    and status 1, never a traceback.  Cost: that of the command run.

    Args:
        argv: the arguments (default: ``sys.argv[1:]``).
        out: where the output goes (default: stdout).
        err: where errors, warnings and progress go (default: stderr).
    """
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    args = build_parser().parse_args(argv)
    if out is sys.stdout and isinstance(out, io.TextIOWrapper):
        # A lone surrogate is valid JSON ("\\ud800") and Pi keeps it; written as
        # \\ud800 it stays valid JSON in `path` and `show --json`, where strict
        # UTF-8 would fail halfway through the output.  The same keeps a terminal
        # whose encoding lacks '·' or '─' readable.
        out.reconfigure(errors="backslashreplace")
    if argv is None:
        # A one-shot process that builds one big, acyclic structure: the cyclic
        # collector would only rescan it again and again (``show`` of 100,000
        # entries took twice as long with it).  Not done when called as a function.
        gc.disable()
    try:
        return COMMANDS[args.command](args, out, err)
    except BrokenPipeError:  # pragma: no cover - e.g. `ptree show big | head`
        # Python would complain again when it flushes stdout at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:  # pragma: no cover - interactive only
        print(f"ptree {args.command}: interrupted", file=err)
        return 130
    except (SessionError, OSError, ValueError) as exc:
        from .text import one_line

        text = _one_line(exc)
        if isinstance(exc, UnknownEntryError) and getattr(args, "file", None):
            text = f"{one_line(args.file)}: {text}"
        print(f"ptree {args.command}: error: {text}", file=err)
        return 1


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
