"""Scrub secrets from a session before it is shared: a pure function over the tree.

:func:`redact` returns a new :class:`~ptree.SessionTree` in which every string an
entry carries (message text, tool arguments and results, thinking, summaries, labels,
the session name, custom data, unknown fields) has each secret replaced by a marker
that says what was removed, such as ``[redacted: openai key]``.  Ids, parent links,
timestamps and entry kinds are kept, so the redacted tree has the same shape and can
be written as a Pi file (``ptree export --format jsonl --redact``), HTML or Markdown.

The built-in shapes (:data:`SECRET_SHAPES`): API keys of the major providers
(OpenAI, Anthropic, Google, AWS, GitHub, Slack, Stripe, Hugging Face, Groq, xAI),
JSON web tokens, ``Bearer`` tokens, PEM private-key blocks, and ``password=``-style
assignments (the value goes, the name stays).  A mapping key that names a secret
(``"password"``, ``"api_key"``, ``"token"``, …) has its string value removed whatever
it looks like.  Callers add their own regular expressions.

Redaction errs towards removing too much: ``token = compute()`` loses ``compute()``.

Imports: the core only.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from ..entries import Entry, entry_from_json
from ..header import SessionHeader
from ..tree import SessionTree
from .errors import RedactPatternError

__all__ = [
    "SECRET_SHAPES",
    "RedactPatternError",
    "Redactor",
    "redact",
]


_KEY_CHARS = r"[A-Za-z0-9_\-]"
# The names an assignment or a mapping key gives a secret.  ``key`` alone is too
# common (dict keys, sort keys) to take.
_SECRET_NAME = (
    r"(?:password|passwd|passphrase|pwd|secret|client[_-]?secret|api[_-]?key|apikey"
    r"|access[_-]?key|secret[_-]?key|private[_-]?key|auth[_-]?token|access[_-]?token"
    r"|refresh[_-]?token|token)"
)

# name = value, name: value, "name": "value": the name and the quotes stay, the
# value goes.
_ASSIGNMENT = (
    r"(?i)(" + _SECRET_NAME + r")([\"']?[ \t]*[:=][ \t]*)"
    r"(?!\[redacted: )(\"[^\"\n]*\"|'[^'\n]*'"
    # Unquoted: not code that computes the value (``apiKey = await f()``,
    # ``pwd = process.cwd()``): neither a well-known word nor a call or an index.
    r"|(?!(?:await|undefined|null|none|nil|true|false|new|this|self|process|os|env"
    r"|args|input|getpass|config|options|opts|req|request)\b)"
    r"(?>[^\s,;}\]\"'()\[]+)(?![(\[]))"
)

SECRET_SHAPES: tuple[tuple[str, str], ...] = (
    # (what it is, regular expression).  Tried in this order, each over the text the
    # ones before it left; the more specific shapes come first.
    (
        "private key",
        r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
        r"(?:.*?-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|.*\Z)",
    ),
    ("anthropic key", r"sk-ant-[A-Za-z0-9]+-" + _KEY_CHARS + r"{20,}"),
    ("openai key", r"sk-(?:proj-|svcacct-|admin-|None-)?" + _KEY_CHARS + r"{20,}"),
    ("stripe key", r"(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}"),
    ("aws access key", r"(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}"),
    ("google api key", r"AIza[0-9A-Za-z_\-]{35}"),
    ("github token", r"(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})"),
    ("slack token", r"xox[abposr]-[A-Za-z0-9\-]{10,}"),
    ("hugging face token", r"hf_[A-Za-z0-9]{30,}"),
    ("groq key", r"gsk_[A-Za-z0-9]{40,}"),
    ("xai key", r"xai-[A-Za-z0-9]{40,}"),
    ("jwt", r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
    # The word stays: "Authorization: Bearer [redacted: bearer token]".
    ("bearer token", r"(?<=[Bb]earer )[ \t]*[A-Za-z0-9._~+/=\-]{12,}"),
    ("password", _ASSIGNMENT),
)
"""The built-in secret shapes: ``(name, regular expression)`` pairs, in the order tried."""

_NAME_KEY = re.compile(r"(?i)^[\"']?(?:[A-Za-z0-9]+[_-])*" + _SECRET_NAME + r"[\"']?$")

# Fields that address entries or say what they are: never text, never scrubbed.
_STRUCTURAL = frozenset(
    {"type", "id", "parentId", "timestamp", "targetId", "fromId", "firstKeptEntryId"}
)


class Redactor:
    """A compiled set of secret shapes, applied to strings, JSON values and trees.

    Args:
        builtin: include :data:`SECRET_SHAPES` (default ``True``).
        patterns: further regular expressions, or ``(name, regex)`` pairs; what
            one matches becomes ``[redacted: name]``, or ``[redacted: pattern N]``
            for a bare regex (N counts from 1, in the order given).

    Raises:
        RedactPatternError: a pattern does not compile, or matches the empty string
            (it would "redact" between every two characters).

    >>> r = Redactor()
    >>> r.text("key sk-proj-abcdefghijklmnopqrstuvwx, password=hunter2")
    'key [redacted: openai key], password=[redacted: password]'
    >>> Redactor(builtin=False, patterns=[r"ACME-\\d+"]).text("ticket ACME-42")
    'ticket [redacted: pattern 1]'
    """

    __slots__ = ("_rules", "count")

    def __init__(
        self, *, builtin: bool = True, patterns: Iterable[str | tuple[str, str]] = ()
    ) -> None:
        rules: list[tuple[str, re.Pattern[str]]] = []
        if builtin:
            for name, regex in SECRET_SHAPES:
                rules.append((name, re.compile(regex, re.DOTALL)))
        for n, item in enumerate(patterns, 1):
            name, regex = item if isinstance(item, tuple) else (f"pattern {n}", item)
            try:
                compiled = re.compile(regex)
            except re.error as exc:
                raise RedactPatternError(regex, str(exc)) from None
            if compiled.search("") is not None:
                raise RedactPatternError(regex, "it matches the empty text")
            rules.append((name, compiled))
        self._rules = tuple(rules)
        self.count = 0
        """How many secrets this redactor has replaced so far."""

    def text(self, value: str) -> str:
        """``value`` with every secret replaced.  O(len(value)) per shape."""
        for name, rule in self._rules:
            if rule.pattern == _ASSIGNMENT:
                value, n = rule.subn(_assignment_marker, value)
            else:
                value, n = rule.subn(f"[redacted: {name}]", value)
            self.count += n
        return value

    def value(self, value: Any) -> Any:
        """A JSON value with every string in it scrubbed (mapping keys stay).

        A string under a key that names a secret (``"password"``, ``"apiKey"``, …) is
        replaced whole.  Iterative: nesting depth is not limited by recursion.
        Cost: O(size of the value).
        """
        return self._walk(value, top=False)

    def entry(self, entry: Entry) -> Entry:
        """A copy of ``entry`` with its text scrubbed; ids and links kept.  O(size)."""
        return entry_from_json(self._walk(entry.to_json(), top=True))

    def _walk(self, root: Any, *, top: bool) -> Any:
        # Containers are rebuilt bottom-up with an explicit stack of
        # (copy, items still to visit, whether it is the entry's top level) frames.
        text = self.text
        if isinstance(root, str):
            return text(root)
        if not isinstance(root, (Mapping, list, tuple)):
            return root
        out_root, frame = _frame(root, top)
        stack = [frame]
        while stack:
            dst, it, is_top = stack[-1]
            for item in it:
                if isinstance(dst, dict):
                    key, val = item
                    if is_top and key in _STRUCTURAL:
                        dst[key] = val
                        continue
                    if isinstance(val, str) and isinstance(key, str) and _NAME_KEY.match(key):
                        if val:
                            dst[key] = "[redacted: password]"
                            self.count += 1
                        else:
                            dst[key] = val
                        continue
                else:  # a list's value: its slot, filled below as a mapping's is
                    key, val = len(dst), item
                    dst.append(None)
                if isinstance(val, str):
                    dst[key] = text(val)
                elif isinstance(val, (Mapping, list, tuple)):
                    dst[key], frame = _frame(val, False)
                    stack.append(frame)
                    break
                else:
                    dst[key] = val
            else:
                stack.pop()
        return out_root


def _frame(src: Any, top: bool) -> tuple[Any, tuple[Any, Any, bool]]:
    """An empty copy of a container and the frame that fills it: a mapping's items, or a
    list's values."""
    copy: Any = {} if isinstance(src, Mapping) else []
    return copy, (copy, iter(list(src.items()) if isinstance(src, Mapping) else src), top)


def _assignment_marker(match: re.Match[str]) -> str:
    value = match.group(3)
    quote = value[0] if value[:1] in ("'", '"') and len(value) >= 2 else ""
    return f"{match.group(1)}{match.group(2)}{quote}[redacted: password]{quote}"


def redact(
    tree: SessionTree,
    *,
    builtin: bool = True,
    patterns: Iterable[str | tuple[str, str]] = (),
    redactor: Redactor | None = None,
) -> SessionTree:
    """A copy of ``tree`` with every secret in every entry's text replaced by a marker.

    The copy has the same entries (ids, parents, kinds, timestamps), the same leaf and
    the same header; only strings inside entries change.  The original is untouched.

    Cost: O(size of the tree) per shape.

    Args:
        tree: the session to scrub.
        builtin: scrub the shapes in :data:`SECRET_SHAPES` (default ``True``).
        patterns: further regular expressions (or ``(name, regex)`` pairs).
        redactor: a :class:`Redactor` to use instead of making one from the two
            arguments above (its ``count`` then tells how much was removed).

    Returns:
        the scrubbed tree.

    Raises:
        RedactPatternError: a pattern is not a valid regular expression.

    >>> t = SessionTree().append({"role": "user", "content": "my key is AKIAABCDEFGHIJKLMNOP"})
    >>> redact(t).leaf.message["content"]
    'my key is [redacted: aws access key]'
    >>> t.leaf.message["content"]
    'my key is AKIAABCDEFGHIJKLMNOP'
    """
    r = redactor if redactor is not None else Redactor(builtin=builtin, patterns=patterns)
    entries = [r.entry(e) for e in tree.entries()]
    header = tree.header
    if header is not None:
        header = SessionHeader.from_json(
            {k: (v if k in _STRUCTURAL else r.value(v)) for k, v in header.to_json().items()}
        )
    return SessionTree.from_entries(
        entries,
        leaf_id=tree.leaf_id,
        header=header,
        id_factory=tree.id_factory,
        clock=tree.clock,
    )
