"""The registry every ``ptree`` subcommand joins, and the error a user's request can cause.

A subcommand is a function ``(args, out, err) -> exit status`` whose docstring is its
help, and a setup that adds its arguments; :func:`register` records both.  Kept apart
from :mod:`~ptree.cli.main` so that each module of commands imports it, and ``main``
imports them: no import cycle.
"""

from __future__ import annotations

import argparse
import inspect
from collections.abc import Callable
from typing import TextIO

from ..errors import SessionError

__all__ = ["COMMANDS", "SETUPS", "Command", "Setup", "UsageError", "register"]

Command = Callable[[argparse.Namespace, TextIO, TextIO], int]
Setup = Callable[[argparse.ArgumentParser], None]

COMMANDS: dict[str, Command] = {}
"""Each subcommand's function, by name, in the order they were registered."""

SETUPS: list[Callable[[argparse._SubParsersAction[argparse.ArgumentParser]], None]] = []
"""Each subcommand's parser, added to ``ptree``'s subparsers, in the order ``ptree --help``
lists them."""


class UsageError(SessionError, ValueError):
    """A request the command cannot carry out as given (an output file that exists, …)."""


def register(name: str, setup: Setup | None = None) -> Callable[[Command], Command]:
    """A decorator adding a subcommand ``name``, with the arguments ``setup`` adds.  O(1).

    The command's docstring is its help, the one place its text is written: the first
    paragraph is the line ``ptree --help`` lists, the rest the description ``ptree NAME
    --help`` shows (``setup`` may change it).

    >>> @register("hello-doc")
    ... def hello(args, out, err):
    ...     '''say hello'''
    ...     return 0
    >>> COMMANDS.pop("hello-doc") is hello, SETUPS.pop() is not None
    (True, True)
    """

    def add(fn: Command) -> Command:
        summary, _, rest = inspect.cleandoc(fn.__doc__ or "").partition("\n\n")

        def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
            p = sub.add_parser(
                name,
                help=" ".join(summary.split()) or None,
                description=" ".join(rest.split()) or None,
            )
            if setup is not None:
                setup(p)

        COMMANDS[name] = fn
        SETUPS.append(add_parser)
        return fn

    return add
