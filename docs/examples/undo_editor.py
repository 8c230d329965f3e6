"""An editor-like loop over a conversation, with undo and redo: each line read is a
command, and every change is committed to a History of SessionTree values.

    python docs/examples/undo_editor.py < commands.txt

Commands: ``say TEXT`` (a user message), ``reply TEXT`` (an assistant message),
``go ID`` (move the leaf to an entry: the next message starts a branch there),
``undo``, ``redo``, ``show`` (the current path), ``branches`` (one line per leaf).
"""

import sys
from collections.abc import Iterable

from ptree import History, NothingToRedo, NothingToUndo, SessionTree, UnknownEntryError


def text_of(tree: SessionTree, entry_id: str) -> str:
    content = tree.message(entry_id)["content"]
    return content if isinstance(content, str) else str(content)


def step(history: History[SessionTree], command: str) -> tuple[History[SessionTree], str]:
    """Apply one command; return the new history and what to print."""
    verb, _, arg = command.strip().partition(" ")
    tree = history.present
    try:
        if verb == "say":
            return history.commit(tree.append({"role": "user", "content": arg})), ""
        if verb == "reply":
            return history.commit(tree.append({"role": "assistant", "content": arg})), ""
        if verb == "go":
            return history.commit(tree.move_to(arg)), f"at {arg}"
        if verb == "undo":
            return history.undo(), f"undone ({history.undo_count - 1} more)"
        if verb == "redo":
            return history.redo(), f"redone ({history.redo_count - 1} more)"
    except (NothingToUndo, NothingToRedo, UnknownEntryError) as e:
        return history, f"error: {e}"
    if verb == "show":
        return history, " / ".join(text_of(tree, e.id) for e in tree.path())
    if verb == "branches":
        lines = [
            " / ".join(text_of(tree, e.id) for e in tree.path(leaf.id)) for leaf in tree.leaves()
        ]
        return history, "\n".join(lines)
    return history, f"error: unknown command {verb!r}"


def main(commands: Iterable[str]) -> History[SessionTree]:
    history = History(SessionTree())
    for command in commands:
        if command.strip():
            history, said = step(history, command)
            if said:
                print(said)
    return history


if __name__ == "__main__":
    main(sys.stdin)
