"""Pi's JSON Lines session files: read, write, append.

Holds the line codec (:mod:`~ptree.pi.lines`), the reader with its strict and lenient
modes, migrations of versions 1 and 2 and torn-tail recovery
(:mod:`~ptree.pi.reader`, :mod:`~ptree.pi.migrate`), whole-file :func:`dump`
(:mod:`~ptree.pi.whole_file`), the append-only :class:`SessionWriter` with its lock
(:mod:`~ptree.pi.writer`) and the durable-file primitives they share
(:mod:`~ptree.pi.files`), and what tells Pi 1.6's files from 0.73.1's
(:mod:`~ptree.pi.versions`).  The format itself is described in
``docs/pi-session-format.md`` of the shared folder.

Imports: the core (modules directly in :mod:`ptree`) only.
"""

from ..errors import name_public
from . import errors
from .errors import *  # noqa: F403 - every error of the layer (errors.__all__, below)
from .lines import is_torn
from .reader import load
from .versions import pi16_features
from .whole_file import dump
from .writer import CommitError, SessionWriter

__all__ = ["CommitError", "SessionWriter", "dump", "is_torn", "load", "pi16_features"]
__all__ += errors.__all__

# The front door exports these errors too (loaded from here on first use): they read
# ``ptree.SessionFileError`` wherever they are raised.
name_public(globals(), "ptree")
