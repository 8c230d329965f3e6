"""Continue a Claude Code or Codex session with another provider's model.

    python docs/examples/continue_session.py SESSION.jsonl "Now write the tests." OUT.jsonl

Reads the session (its format is detected), builds what the model would be given at its
leaf, sends it with the new question to OpenAI's Responses API (``OPENAI_API_KEY`` in
the environment), appends the question and the reply, and writes the whole tree, every
branch kept, as a Pi session file: ``ptree show OUT.jsonl`` draws it, Pi opens it.
"""

import sys
from pathlib import Path

import openai

import ptree
from ptree.formats import claude_code, codex
from ptree.formats.detect import detect
from ptree.providers import assistant_message, payload

READERS = {"claude-code": claude_code.read, "codex": codex.read}
MODEL = "gpt-5"


def read_session(path: Path) -> ptree.SessionTree:
    """The session at ``path`` as a tree, whichever of the two tools wrote it."""
    found = detect(path)
    if found not in READERS:
        raise SystemExit(f"{path}: not a Claude Code or Codex session (detected {found})")
    return READERS[found](path).tree


def continue_with(
    tree: ptree.SessionTree, question: str, client: openai.OpenAI
) -> ptree.SessionTree:
    """The tree with ``question`` and the model's answer appended at its leaf."""
    tree = tree.append({"role": "user", "content": question})
    body = payload(
        ptree.build_context(tree),  # compactions applied, tool results paired
        api="openai-responses",
        provider="openai",
        model=MODEL,
        reasoning=True,
    )
    reply = client.responses.create(model=MODEL, **body)
    message = assistant_message(reply, api="openai-responses", provider="openai", model=MODEL)
    return tree.append(message)


def main(session: Path, question: str, out: Path, client: openai.OpenAI) -> ptree.SessionTree:
    tree = continue_with(read_session(session), question, client)
    ptree.dump(tree, out)  # never replaces an existing file
    return tree


if __name__ == "__main__":
    answered = main(Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3]), openai.OpenAI())
    print(ptree.build_context(answered).messages[-1]["content"])
