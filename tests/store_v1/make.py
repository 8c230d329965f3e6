"""Made the stores of this folder with ptree's schema version 1 (the code of main at
commit ea22e29, before search, paging and pruning); kept to show how they were made.

They are fixtures: never regenerate them with a newer ptree (that would store the new
schema, and the upgrade test would test nothing).  ``sessions()`` below is also what
``tests/test_store_upgrade.py`` expects to load from them.

    python -m tests.store_v1.make                      # store.db
    python -m tests.store_v1.make postgresql://...     # then pg_dump it to postgres.sql
"""

from __future__ import annotations

import sys
from pathlib import Path

from ptree import SessionHeader, SessionTree, stores

TS = "2026-01-01T00:00:00.000Z"


def _clock() -> str:
    return TS


def sessions() -> list[SessionTree]:
    """Ten sessions: every entry kind, branches, labels, names, tool calls and their
    results, non-ASCII text, and ids a database column cannot hold as they are."""
    out = []
    for n in range(10):
        sid = ["plain-0", '"quoted', "nul\x00id", "ünï-çødé"][n] if n < 4 else f"s{n}"
        t = SessionTree(header=SessionHeader(id=sid, timestamp=TS, cwd="/work"), clock=_clock)
        t = t.append({"role": "user", "content": f"please deploy the kettle service {n}"})
        t = t.append(
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "reading the config first"},
                    {"type": "text", "text": "Reading the configuration."},
                    {
                        "type": "toolCall",
                        "id": f"call{n}",
                        "name": "read",
                        "arguments": {"path": "/etc/kettle.toml"},
                    },
                ],
            }
        )
        t = t.append(
            {
                "role": "toolResult",
                "toolCallId": f"call{n}",
                "toolName": "read",
                "content": [{"type": "text", "text": f"port = {8000 + n}\nwater = boiling"}],
                "isError": False,
            }
        )
        fork = t.leaf_id
        assert fork is not None
        t = t.append({"role": "assistant", "content": "The kettle listens on its port."})
        if n % 2:
            t = t.append_session_info(f"kettle deploy {n}")
        if n % 3 == 0:
            t = t.append_label(fork, "config read")
            t = t.move_to(fork).append({"role": "user", "content": "try the teapot instead"})
            t = t.append_branch_summary(fork, "abandoned the kettle branch")
        t = t.append_custom_message("note", f"custom note {n} — naïve café")
        t = t.append_compaction("summary of the deploy so far", t.path()[1].id, 1000 + n)
        t = t.append(
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "a picture"},
                    {
                        "type": "image",
                        "data": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB",
                        "mimeType": "image/png",
                    },
                ],
            }
        )
        out.append(t)
    return out


def main(argv: list[str]) -> None:
    url = argv[1] if len(argv) > 1 else f"sqlite://{Path(__file__).parent / 'store.db'}"
    with stores.open(url) as store:
        for tree in sessions():
            store.save(tree)


if __name__ == "__main__":
    main(sys.argv)
