"""The registry every ``ptree`` subcommand joins, and the error a user's request can cause.

A subcommand is a function ``(args, out, err) -> exit status`` and a setup that adds its
parser; :func:`register` records both.  Kept apart from :mod:`~ptree.cli.main` so that
each module of commands imports it, and ``main`` imports them: no import cycle.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TextIO

from ..errors import SessionError

__all__ = ["COMMANDS", "SETUPS", "Command", "Setup", "UsageError", "register"]

Command = Callable[[argparse.Namespace, TextIO, TextIO], int]
Setup = Callable[["argparse._SubParsersAction[argparse.ArgumentParser]"], None]

COMMANDS: dict[str, Command] = {}
"""Each subcommand's function, by name, in the order they were registered."""

SETUPS: list[Setup] = []
"""Each subcommand's parser setup, in the order ``ptree --help`` lists them."""


class UsageError(SessionError, ValueError):
    """A request the command cannot carry out as given (an output file that exists, …)."""


def register(name: str, setup: Setup) -> Callable[[Command], Command]:
    """A decorator adding a subcommand ``name`` whose parser ``setup`` builds.  O(1).

    >>> @register("hello-doc", lambda sub: None)
    ... def hello(args, out, err):
    ...     return 0
    >>> COMMANDS.pop("hello-doc") is hello, SETUPS.pop() is not None
    (True, True)
    """

    def add(fn: Command) -> Command:
        COMMANDS[name] = fn
        SETUPS.append(setup)
        return fn

    return add
