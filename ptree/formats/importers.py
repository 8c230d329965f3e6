"""Every importer by name, each driven the same way: what ``ptree import`` uses.

>>> sorted(IMPORTERS)
['chatgpt', 'claude-code', 'codex', 'librechat', 'openwebui']
>>> IMPORTERS["codex"].one_file, IMPORTERS["chatgpt"].one_file
(True, False)
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import attrs

if TYPE_CHECKING:  # the table loads no importer: ``ptree --help`` lists the formats
    from ._common import ImportedSession, Report

__all__ = ["IMPORTERS", "Importer"]


@attrs.frozen
class Importer:
    """One importer: its name, what it reads, and how to run it.

    Attributes:
        name: the format's name (``ptree import NAME SRC``).
        description: what files it reads, for people.
        module: the module under :mod:`ptree.formats` with ``read`` and ``sessions``.
        one_file: whether a source holds one session (a session file, written to one
            Pi file) rather than a list of conversations (written to a folder).
        options: the keyword options its ``sessions`` takes beyond ``on_report``.
    """

    name: str
    description: str
    module: str
    one_file: bool
    options: frozenset[str] = frozenset()

    def sessions(
        self, src: str | os.PathLike[str], *, on_report: Report | None = None, **options: Any
    ) -> Iterator[ImportedSession]:
        """The sessions of ``src``: ``ptree.formats.<module>.sessions(src, ...)``.

        Cost: the importer's (O(size of ``src``) for each of them), plus importing its
        module the first time.

        Args:
            src: what the importer reads (a file).
            on_report: called with one line of text for each thing left out or kept
                only as text (default: a :class:`~ptree.pi.SessionFileWarning`).
            **options: the importer's own keyword options, those in :attr:`options`.

        Raises:
            TypeError: an option this importer does not take.
            ImportFormatError: as the importer raises it.
            OSError: ``src`` cannot be read.

        >>> from ptree.formats.importers import IMPORTERS
        >>> IMPORTERS["codex"].sessions("rollout.jsonl", strict=True)
        Traceback (most recent call last):
        TypeError: codex takes no option strict
        """
        unknown = set(options) - self.options
        if unknown:
            raise TypeError(f"{self.name} takes no option {', '.join(sorted(unknown))}")
        found: Iterator[ImportedSession] = importlib.import_module(
            f"ptree.formats.{self.module}"
        ).sessions(src, on_report=on_report, **options)
        return found


IMPORTERS: dict[str, Importer] = {
    i.name: i
    for i in (
        Importer(
            "claude-code",
            "a Claude Code session (~/.claude/projects/*/<id>.jsonl)",
            "claude_code",
            True,
            frozenset({"keep_progress"}),
        ),
        Importer(
            "codex",
            "an OpenAI Codex CLI rollout (~/.codex/sessions/**/rollout-*.jsonl)",
            "codex",
            True,
        ),
        Importer("librechat", "a LibreChat conversation export (.json)", "librechat", True),
        Importer(
            "chatgpt",
            "a ChatGPT export (conversations.json)",
            "chatgpt",
            False,
            frozenset({"include_hidden", "strict", "cwd"}),
        ),
        Importer(
            "openwebui",
            "an Open WebUI chat export (.json)",
            "openwebui",
            False,
            frozenset({"strict", "cwd"}),
        ),
    )
}
"""The importers, in the order ``ptree import --help`` lists them."""
