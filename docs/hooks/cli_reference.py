"""An MkDocs hook: the command-line reference, written from ``ptree``'s own argparse
parser at every build, so it cannot drift from the command.

A page holding the line ``<!-- ptree-cli-reference -->`` gets, in its place, one section
per subcommand: its summary, description, usage, and a table of every argument and
option (with its choices and default).
"""

from __future__ import annotations

import argparse
import importlib
from typing import Any

MARKER = "<!-- ptree-cli-reference -->"


def _subcommands(parser: argparse.ArgumentParser) -> argparse._SubParsersAction[Any]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action
    raise ValueError("the ptree parser has no subcommands")


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _names(action: argparse.Action) -> str:
    if action.option_strings:
        metavar = ""
        if action.nargs != 0:
            shown = action.metavar or (
                "{" + ",".join(map(str, action.choices)) + "}" if action.choices else None
            )
            metavar = " " + str(shown or action.dest.upper())
        return ", ".join(f"`{o}{metavar}`" for o in action.option_strings)
    return f"`{action.metavar or action.dest}`"


def _details(action: argparse.Action) -> str:
    parts = [action.help % {"default": action.default} if action.help else ""]
    if action.choices and not isinstance(action, argparse._SubParsersAction):
        parts.append("one of " + ", ".join(f"`{c}`" for c in action.choices))
    if action.required and action.option_strings:
        parts.append("required")
    if action.nargs == "*" or action.nargs == "+" or isinstance(action, argparse._AppendAction):
        parts.append("repeatable" if action.option_strings else "")
    if (
        action.option_strings
        and action.default not in (None, False, argparse.SUPPRESS, [])
        and action.nargs != 0
    ):
        parts.append(f"default `{action.default}`")
    return _cell("; ".join(p for p in parts if p))


def _usage(parser: argparse.ArgumentParser) -> str:
    return " ".join(parser.format_usage().split())[len("usage: ") :]


def cli_markdown(parser: argparse.ArgumentParser) -> str:
    """The Markdown reference of ``parser`` and each of its subcommands."""
    sub = _subcommands(parser)
    summaries = {a.dest: a.help or "" for a in sub._choices_actions}
    out = [
        "```text",
        _usage(parser),
        "```",
        "",
        _cell(parser.description or ""),
        "",
        _cell(parser.epilog or ""),
        "",
        "| command | what it does |",
        "| --- | --- |",
    ]
    out += [f"| [`ptree {n}`](#ptree-{n}) | {_cell(summaries[n])} |" for n in sub.choices]
    for name, command in sub.choices.items():
        out += ["", f"## `ptree {name}` {{#ptree-{name}}}", "", _cell(summaries[name]) + ".", ""]
        if command.description:
            out += [_cell(command.description), ""]
        out += ["```text", _usage(command), "```", ""]
        rows = [a for a in command._actions if not isinstance(a, argparse._HelpAction)]
        if rows:
            out += ["| argument or option | meaning |", "| --- | --- |"]
            out += [f"| {_names(a)} | {_details(a)} |" for a in rows]
        if command.epilog:
            out += ["", _cell(command.epilog)]
    return "\n".join(out) + "\n"


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    """MkDocs calls this for every page: fill the marker, if the page has it."""
    if MARKER not in markdown:
        return markdown
    parser = importlib.import_module("ptree.cli.main").build_parser()
    return markdown.replace(MARKER, cli_markdown(parser))
