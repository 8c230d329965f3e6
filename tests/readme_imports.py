from pathlib import Path

import ptree
from ptree.formats import claude_code, codex, librechat


def import_sessions(claude: Path, rollout: Path, export: Path, out: Path) -> list[str]:
    """Read one session of each kind, say what the model saw last, save them for Pi."""
    said = []
    for session in [claude_code.read(claude), codex.read(rollout), librechat.read(export)]:
        tree = session.tree
        context = ptree.build_context(tree)  # what goes to the model at the leaf
        branches = len(tree.leaves())
        said.append(
            f"{session.format}: {len(context.messages)} messages in context, "
            f"{branches} branches, leaf {tree.leaf_id}"
        )
        ptree.dump(tree, out / f"{session.format}.jsonl")  # a Pi session file
    return said
