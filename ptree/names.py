"""Session names as Pi writes and reads them: JavaScript's ``trim``, not Python's ``strip``.

Pi reads the name of a session from its latest ``session_info`` entry, trimmed with
JavaScript's ``String.prototype.trim`` (:func:`ptree.js.trim`, which differs from
Python's ``strip`` on a few characters); Pi 1.6 also turns every run of ``\\r`` and
``\\n`` into one space when it writes a name.
"""

from __future__ import annotations

import re

from .js import trim

__all__ = ["sanitize_session_name"]

_LINE_BREAKS = re.compile(r"[\r\n]+")


def sanitize_session_name(name: str) -> str:
    """A name as Pi 1.6 writes it: runs of ``\\r``/``\\n`` become one space, then trimmed.

    O(n).

    Args:
        name: the name as given.

    >>> sanitize_session_name("  My\\r\\n\\nsession \\n")
    'My session'
    """
    return trim(_LINE_BREAKS.sub(" ", name))
