"""Which Pi a session needs: the features only Pi 1.6 (and the releases before it since
0.73.1) writes, since a file's ``"version": 3`` does not tell.

Pi 0.73.1 (``@mariozechner/pi-coding-agent``) and Pi 1.6 (``@earendil-works/pi-coding-agent``)
both write version 3 files.  :func:`pi16_features` lists what in a tree only the newer
Pi writes or reads differently, so that a tool can warn before handing a file to an
old Pi (which would ignore context edits, keep system messages a compaction replaced,
and so on), or tell a user which Pi wrote a file, as far as that can be known.
"""

from __future__ import annotations

from ..entries import BranchSummary, Compaction, ContextEdit, MessageEntry, Usage
from ..tree import SessionTree

__all__ = ["pi16_features"]


def pi16_features(tree: SessionTree) -> tuple[str, ...]:
    """What in ``tree`` only Pi 1.6 writes or reads differently from Pi 0.73.1.

    Each feature is named once, in this order: ``"usage entries"``, ``"context
    edits"``, ``"system messages"``, ``"compaction checkpoints"`` (a compaction's
    ``systemMessage``), ``"summary usage"`` (``usage`` on a compaction or branch
    summary), ``"retain-none compactions"`` (a compaction keeping from itself),
    ``"abandoned-leaf fromId"`` (a branch summary whose ``fromId`` is neither its
    parent nor ``"root"``: Pi since 0.84.3, or ptree).  An empty tuple: nothing tells
    the file from one Pi 0.73.1 wrote, and both read it alike except for contentless
    messages (see :func:`ptree.build_context`).  Cost: O(number of entries).

    Args:
        tree: the session.

    >>> t = SessionTree().append({"role": "user", "content": "hi"}, id="u")
    >>> pi16_features(t), pi16_features(t.append_context_edit("u", None))
    ((), ('context edits',))
    """
    found: set[str] = set()
    for e in tree.entries():
        if isinstance(e, Usage):
            found.add("usage entries")
        elif isinstance(e, ContextEdit):
            found.add("context edits")
        elif isinstance(e, MessageEntry):
            if e.message.get("role") == "system":
                found.add("system messages")
        elif isinstance(e, Compaction):
            if e.system_message is not None:
                found.add("compaction checkpoints")
            if e.usage is not None:
                found.add("summary usage")
            if e.first_kept_entry_id == e.id:
                found.add("retain-none compactions")
        elif isinstance(e, BranchSummary):
            if e.usage is not None:
                found.add("summary usage")
            if e.from_id != ("root" if e.parent_id is None else e.parent_id):
                found.add("abandoned-leaf fromId")
    order = (
        "usage entries",
        "context edits",
        "system messages",
        "compaction checkpoints",
        "summary usage",
        "retain-none compactions",
        "abandoned-leaf fromId",
    )
    return tuple(name for name in order if name in found)
