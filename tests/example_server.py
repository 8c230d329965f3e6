"""A chat server's storage: many sessions, several worker processes, one database."""

import multiprocessing
import sys

from ptree import SessionHeader, SessionTree, build_context, stores


def handle_turn(store: stores.Store, session_id: str, text: str) -> SessionTree:
    """One request: the user's message and the reply, appended atomically."""

    def turn(tree: SessionTree) -> SessionTree:  # pure: may run again on a conflict
        tree = tree.append({"role": "user", "content": text})
        return tree.append({"role": "assistant", "content": f"echo: {text}"})

    return store.update(session_id, turn)


def worker(url: str, worker_id: int, session_ids: list[str]) -> None:
    with stores.open(url) as store:  # each process opens its own
        for session_id in session_ids:
            handle_turn(store, session_id, f"hello from worker {worker_id}")


def main(url: str) -> None:
    with stores.open(url) as store:
        for _ in range(10):
            store.save(SessionTree(header=SessionHeader.new(cwd="/srv/chat")))
        ids = [s.id for s in store.sessions()]
    fork = multiprocessing.get_context("fork")
    procs = [fork.Process(target=worker, args=(url, w, ids)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    with stores.open(url) as store:
        counts = {s.entry_count for s in store.sessions()}
        path = store.load_path(ids[0])  # per request: only the path to the leaf
        messages = build_context(path).messages
    print(counts, len(messages))  # {8} 8: 4 workers x 2 entries each, none lost


if __name__ == "__main__":
    main(sys.argv[1])  # sqlite:///srv/chat/sessions.db, postgresql://chat@db/chat, ...
