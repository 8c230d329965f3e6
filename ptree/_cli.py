"""The ``ptree`` command (also ``python -m ptree``).

Each subcommand is a function ``(args, out, err) -> exit status`` registered in
:data:`COMMANDS`.  Errors a user can cause (a missing file, a bad file, an unknown
id) print one line on stderr and give a non-zero status, never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import TextIO

from ._demo import run_demo
from ._errors import SessionError

__all__ = ["COMMANDS", "main"]

Command = Callable[[argparse.Namespace, TextIO, TextIO], int]
Setup = Callable[["argparse._SubParsersAction[argparse.ArgumentParser]"], None]

COMMANDS: dict[str, Command] = {}
_SETUPS: list[Setup] = []


def _demo(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    run_demo(out)
    return 0


def _setup_demo(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    sub.add_parser("demo", help="show branching on persistent values (the seed scenario)")


COMMANDS["demo"] = _demo
_SETUPS.append(_setup_demo)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every registered subcommand."""
    parser = argparse.ArgumentParser(
        prog="ptree", description="Persistent conversation trees: see, check and convert them."
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for setup in _SETUPS:
        setup(sub)
    return parser


def main(argv: Sequence[str] | None = None, *, out: TextIO | None = None,
         err: TextIO | None = None) -> int:
    """Run the ``ptree`` command line; return its exit status."""
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    args = build_parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args, out, err)
    except BrokenPipeError:  # pragma: no cover - e.g. `ptree show big | head`
        return 0
    except (SessionError, OSError) as exc:
        print(f"ptree {args.command}: error: {exc}", file=err)
        return 1


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
