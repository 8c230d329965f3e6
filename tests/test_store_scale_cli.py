"""``ptree sessions --limit --after``, ``ptree search``, ``ptree prune`` and
``ptree migrate``, on a SQLite store (the stores' own suite covers every kind)."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest

from ptree import SessionHeader, SessionTree, stores
from ptree.cli.main import main

TS = "2026-01-01T00:00:00.000Z"


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), out=out, err=err)
    return status, out.getvalue(), err.getvalue()


@pytest.fixture
def url(tmp_path: Path) -> str:
    """Three sessions; s1 has a dead branch (e3, e4) off e1."""
    url = f"sqlite://{tmp_path}/s.db"
    with stores.open(url) as store:
        for n in range(3):
            header = SessionHeader(id=f"s{n}", timestamp=TS, cwd="/")
            t = SessionTree(header=header, clock=lambda: TS)  # older than 30 days
            t = t.append({"role": "user", "content": f"boil the kettle {n}"})
            t = t.append({"role": "assistant", "content": "done"})
            if n == 1:
                t = t.move_to("e1").append({"role": "user", "content": "dead end"})
                t = t.append({"role": "assistant", "content": "x"}).move_to("e2")
            store.save(t)
    return url


class TestSessionsPages:
    def test_a_page_and_the_command_for_the_next(self, url: str) -> None:
        status, out, err = run("sessions", url, "--limit", "2", "--order", "id")
        assert status == 0
        assert [line.split()[0] for line in out.splitlines()] == ["s0", "s1"]
        first, hint = err.splitlines()
        assert first == "2 sessions"
        assert hint.startswith(f"next page: ptree sessions {url} --limit 2 --order id --after ")
        cursor = hint.rsplit(" ", 1)[1]
        status, out, err = run("sessions", url, "--limit", "2", "--order", "id", "--after", cursor)
        assert [line.split()[0] for line in out.splitlines()] == ["s2"]
        assert err == "1 session\n"

    def test_a_bad_cursor(self, url: str) -> None:
        status, _out, err = run("sessions", url, "--limit", "2", "--after", "nonsense")
        assert status == 1
        assert "not a page cursor" in err


class TestSearch:
    def test_hits_as_text_and_json(self, url: str) -> None:
        status, out, err = run("search", url, "KETTLE 1")
        assert (status, out, err) == (0, "s1  e1  user  boil the «kettle» «1»\n", "1 hit\n")
        status, out, _err = run("search", url, "kettle", "--json", "--limit", "2")
        hits = [json.loads(line) for line in out.splitlines()]
        assert len(hits) == 2
        assert set(hits[0]) == {"session", "entry", "role", "snippet"}

    def test_in_one_session(self, url: str) -> None:
        _status, out, _err = run("search", f"{url}#s2", "kettle")
        assert out == "s2  e1  user  boil the «kettle» 2\n"

    def test_a_query_without_words(self, url: str) -> None:
        status, _out, err = run("search", url, "*&!")
        assert status == 1
        assert "has no word" in err


class TestPrune:
    def test_dry_run_then_prune(self, url: str) -> None:
        status, out, _err = run("prune", f"{url}#s1", "--dry-run")
        assert (status, out) == (0, "would remove 2 of 4 entries; 2 kept\n")
        assert len(stores.open(url).load("s1")) == 4
        status, out, _err = run("prune", f"{url}#s1", "--keep-labelled", "--newer-than", "30d")
        assert (status, out) == (0, "removed 2 of 4 entries; 2 kept\n")
        assert stores.open(url).load("s1").ids() == ("e1", "e2")

    def test_keep_leaves_keeps_all(self, url: str) -> None:
        assert run("prune", f"{url}#s1", "--keep-leaves")[1] == "removed 0 of 4 entries; 4 kept\n"

    def test_an_unknown_keep_or_session(self, url: str) -> None:
        status, _out, err = run("prune", f"{url}#s1", "--keep", "nope")
        assert status == 1
        assert "no entry 'nope'" in err
        status, _out, err = run("prune", f"{url}#zz")
        assert status == 1
        assert "no session with id 'zz'" in err
        status, _out, err = run("prune", url)
        assert status == 1
        assert "URL#SESSION_ID" in err

    def test_a_bad_age(self, url: str) -> None:
        with pytest.raises(SystemExit):
            run("prune", f"{url}#s1", "--newer-than", "soon")


class TestMigrate:
    def test_upgrades_the_version_1_fixture(self, tmp_path: Path) -> None:
        db = tmp_path / "old.db"
        shutil.copyfile(Path(__file__).parent / "store_v1" / "store.db", db)
        assert run("migrate", f"sqlite://{db}") == (0, "schema version 1 -> 4: upgraded\n", "")
        assert run("migrate", f"sqlite://{db}") == (0, "schema version 4: up to date\n", "")
        assert run("search", f"sqlite://{db}", "teapot")[2] == "4 hits\n"

    def test_a_jsonl_store(self, tmp_path: Path) -> None:
        status, out, _err = run("migrate", f"jsonl://{tmp_path}")
        assert status == 0
        assert "no schema" in out
