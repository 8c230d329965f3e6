"""Session names as Pi writes and reads them: JavaScript's ``trim``, not Python's ``strip``.

Pi reads the name of a session from its latest ``session_info`` entry, trimmed with
JavaScript's ``String.prototype.trim``; Pi 1.6 also turns every run of ``\\r`` and
``\\n`` into one space when it writes a name.  The two trims differ on a few
characters (the byte-order mark U+FEFF is white space to JavaScript, U+001C..U+001F
and U+0085 are white space to Python only), so ptree does it JavaScript's way.
"""

from __future__ import annotations

import re

__all__ = ["js_trim", "sanitize_session_name"]

# ECMA-262 WhiteSpace and LineTerminator: what String.prototype.trim removes.
_JS_SPACE = (
    "\t\n\u000b\u000c\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)
_LINE_BREAKS = re.compile(r"[\r\n]+")


def js_trim(text: str) -> str:
    """``text`` without leading and trailing white space, as JavaScript's ``trim``.  O(n).

    >>> js_trim("\\ufeff name \\u3000"), js_trim(" \\u001c "), " \\u001c ".strip()
    ('name', '\\x1c', '')
    """
    return text.strip(_JS_SPACE)


def sanitize_session_name(name: str) -> str:
    """A name as Pi 1.6 writes it: runs of ``\\r``/``\\n`` become one space, then trimmed.

    O(n).

    >>> sanitize_session_name("  My\\r\\n\\nsession \\n")
    'My session'
    """
    return js_trim(_LINE_BREAKS.sub(" ", name))
