"""Redaction (``ptree.formats.redaction``): each secret shape by example, then Hypothesis
planting a secret of every shape anywhere in any entry of a random tree and checking it
is absent from every export."""

from __future__ import annotations

import string
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import ptree
from ptree.cli.render import render_dot, render_mermaid
from ptree.formats.html import to_html
from ptree.formats.markdown import to_markdown
from ptree.formats.redaction import SECRET_SHAPES, Redactor, RedactPatternError, redact
from tests.strategies import trees

ALNUM = string.ascii_letters + string.digits
UPPER_DIGITS = string.ascii_uppercase + string.digits
KEYCHARS = ALNUM + "_-"


class TestShapes:
    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            (
                "key: sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z",
                "key: [redacted: openai key]",
            ),
            ("sk-abcdefghijklmnopqrstuvwxyz012345", "[redacted: openai key]"),
            (
                "ANTHROPIC=sk-ant-api03-abcdefghijklmnopqrstuvwxyz_-0123456789ABCDEFG",
                "ANTHROPIC=[redacted: anthropic key]",
            ),
            ("aws AKIAIOSFODNN7EXAMPLE.", "aws [redacted: aws access key]."),
            ("AIzaSyA1234567890abcdefghijklmnopqrstuv", "[redacted: google api key]"),
            ("ghp_" + "a1" * 18 + " x", "[redacted: github token] x"),
            ("github_pat_11ABCDEFG0123456789_abcdefghijklmnop", "[redacted: github token]"),
            ("xoxb-1234567890-abcdefghij", "[redacted: slack token]"),
            ("sk_live_4eC39HqLyjWDarjtT1zdp7dc", "[redacted: stripe key]"),
            ("hf_" + "x" * 34, "[redacted: hugging face token]"),
            ("gsk_" + "Q" * 52, "[redacted: groq key]"),
            ("xai-" + "z" * 80, "[redacted: xai key]"),
            (
                "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NSJ9.SflKxwRJSMeKKF2QT4fwpM",
                "jwt [redacted: jwt]",
            ),
            (
                "Authorization: Bearer abc.DEF-ghi_jkl~123+/==",
                "Authorization: Bearer [redacted: bearer token]",
            ),
            (
                "before\n-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nIBAAK\n"
                "-----END RSA PRIVATE KEY-----\nafter",
                "before\n[redacted: private key]\nafter",
            ),
            (
                "cut off: -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk",
                "cut off: [redacted: private key]",
            ),
            ("password=hunter2 and more", "password=[redacted: password] and more"),
            ('{"api_key": "abc123"}', '{"api_key": "[redacted: password]"}'),
            ("DB_PASSWORD='s3 cret'", "DB_PASSWORD='[redacted: password]'"),
            ("export GITHUB_TOKEN=abc", "export GITHUB_TOKEN=[redacted: password]"),
        ],
    )
    def test_each_shape(self, text: str, expected: str) -> None:
        """Each built-in shape is replaced by a marker naming it; what is around stays."""
        assert Redactor().text(text) == expected

    @pytest.mark.parametrize(
        "text",
        [
            "const apiKey = await getKey();",
            "pwd = process.cwd()",
            "password = getpass()",
            "token = tokens[0]",
            "the bearer of bad news",
            "max tokens: 4096",  # 'tokens', not 'token'
            "sk-short",
            "a = {'key': 'value'}",
        ],
    )
    def test_code_that_is_not_a_secret_stays(self, text: str) -> None:
        """Code computing a value, and words that merely contain a name, are kept."""
        assert Redactor().text(text) == text

    def test_idempotent(self) -> None:
        """Redacting a redacted text changes nothing more."""
        r = Redactor()
        once = r.text("password=x token: 'y' Bearer abcdefghijklmnop sk-" + "a" * 30)
        assert r.text(once) == once

    def test_mapping_keys_that_name_secrets(self) -> None:
        """A string under a key such as 'password' or 'apiKey' goes whatever it looks
        like; the key, other fields and non-strings stay."""
        value = {
            "password": "x",
            "apiKey": "short",
            "user": "bob",
            "token": 5,
            "n": [{"secret": "s"}],
        }
        assert Redactor().value(value) == {
            "password": "[redacted: password]",
            "apiKey": "[redacted: password]",
            "user": "bob",
            "token": 5,
            "n": [{"secret": "[redacted: password]"}],
        }

    def test_own_patterns(self) -> None:
        """--redact-pattern: named 'pattern N' in order, or by the name given; without
        the built-in shapes, only they apply; the count says how many went."""
        r = Redactor(builtin=False, patterns=[r"ACME-\d+", ("ticket", r"T#\d+")])
        assert (
            r.text("ACME-42 T#7 password=x")
            == "[redacted: pattern 1] [redacted: ticket] password=x"
        )
        assert r.count == 2

    @pytest.mark.parametrize(("pattern", "reason"), [("(", "missing"), ("a*", "empty text")])
    def test_bad_pattern(self, pattern: str, reason: str) -> None:
        """A pattern that does not compile, or matches nothing at all, is refused."""
        with pytest.raises(RedactPatternError, match=reason) as info:
            Redactor(patterns=[pattern])
        assert isinstance(info.value, ValueError)
        assert isinstance(info.value, ptree.SessionError)
        assert info.value.pattern == pattern

    def test_shapes_are_named(self) -> None:
        """Every built-in shape has a name the marker shows."""
        assert len({name for name, _ in SECRET_SHAPES}) == len(SECRET_SHAPES) == 14


class TestRedactTree:
    def test_structure_kept_original_untouched(self) -> None:
        """Ids, parents, leaf, header and kinds are kept; the old tree still has it."""
        header = ptree.SessionHeader(id="s", timestamp="t", cwd="/home/me/password=x")
        t = ptree.SessionTree(header=header).append({"role": "user", "content": "hi"}, id="u")
        t = t.append(
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "toolCall",
                        "id": "c",
                        "name": "login",
                        "arguments": {"password": "pw1"},
                    }
                ],
            },
            id="a",
        )
        t = t.append_label("u", "token=abc", id="l").move_to("a")
        r = redact(t)
        assert r.ids() == t.ids()
        assert [e.parent_id for e in r.entries()] == [e.parent_id for e in t.entries()]
        assert r.leaf_id == "a"
        a, old = r["a"], t["a"]
        assert isinstance(a, ptree.MessageEntry)
        assert isinstance(old, ptree.MessageEntry)
        assert a.message["content"][0]["arguments"] == {"password": "[redacted: password]"}
        assert r.labels() == {"u": "token=[redacted: password]"}
        assert r.header is not None
        assert r.header.cwd == "/home/me/password=[redacted: password]"
        assert r.header.id == "s"
        assert old.message["content"][0]["arguments"] == {"password": "pw1"}


# ---------------------------------------------------------------- the property


def chars(alphabet: str, lo: int, hi: int) -> st.SearchStrategy[str]:
    return st.text(alphabet=st.sampled_from(alphabet), min_size=lo, max_size=hi)


# Each shape: a strategy of (what is planted, the secret part that must not survive).
def _plain(prefix: str, body: st.SearchStrategy[str]) -> st.SearchStrategy[tuple[str, str]]:
    return body.map(lambda b: (prefix + b, prefix + b))


SHAPES: dict[str, st.SearchStrategy[tuple[str, str]]] = {
    "openai": st.tuples(st.sampled_from(["sk-", "sk-proj-"]), chars(KEYCHARS, 20, 60)).map(
        lambda p: (p[0] + p[1], p[0] + p[1])
    ),
    "anthropic": _plain("sk-ant-api03-", chars(KEYCHARS, 20, 90)),
    "aws": st.tuples(st.sampled_from(["AKIA", "ASIA"]), chars(UPPER_DIGITS, 16, 16)).map(
        lambda p: (p[0] + p[1], p[0] + p[1])
    ),
    "google": _plain("AIza", chars(KEYCHARS, 35, 35)),
    "github": _plain("ghp_", chars(ALNUM, 36, 40))
    | _plain("github_pat_", chars(ALNUM + "_", 22, 82)),
    "slack": _plain("xoxb-", chars(ALNUM + "-", 10, 40)),
    "stripe": _plain("sk_live_", chars(ALNUM, 16, 32)),
    "huggingface": _plain("hf_", chars(ALNUM, 30, 40)),
    "groq": _plain("gsk_", chars(ALNUM, 40, 56)),
    "xai": _plain("xai-", chars(ALNUM, 40, 80)),
    "jwt": st.tuples(chars(KEYCHARS, 8, 30), chars(KEYCHARS, 8, 30), chars(KEYCHARS, 8, 40)).map(
        lambda p: ("eyJ" + p[0] + ".eyJ" + p[1] + "." + p[2],) * 2
    ),
    "bearer": chars(ALNUM + "._~+/=-", 12, 60).map(lambda tok: ("Bearer " + tok, tok)),
    "private key": st.tuples(
        st.sampled_from(["RSA ", "EC ", "OPENSSH ", ""]), chars(ALNUM + "+/", 40, 80)
    ).map(
        lambda p: (
            f"-----BEGIN {p[0]}PRIVATE KEY-----\n{p[1]}\n-----END {p[0]}PRIVATE KEY-----",
            p[1],
        )
    ),
    "password": st.tuples(
        st.sampled_from(["password=", "PASSWORD: ", "api_key = ", "secret=", "db_password="]),
        chars(ALNUM + "!@#$%^*", 6, 20).map(lambda v: "pw" + v),
        st.sampled_from([" ", "\n", ",", ";"]),
    ).map(lambda p: (p[0] + p[1] + p[2], p[1]))
    | st.tuples(
        st.sampled_from(['"password": ', "token = ", "'apiKey': "]), chars(ALNUM, 6, 20)
    ).map(lambda p: (p[0] + '"' + p[1] + '"', p[1])),
}

# Where a secret is never planted: what addresses or classifies an entry.
_STRUCTURAL = {
    "type",
    "id",
    "parentId",
    "timestamp",
    "targetId",
    "fromId",
    "firstKeptEntryId",
    "role",
}


def string_slots(obj: Any) -> list[tuple[Any, Any]]:
    """(container, key) of every string value inside one entry's JSON, iteratively."""
    slots: list[tuple[Any, Any]] = []
    stack: list[tuple[Any, bool]] = [(obj, True)]
    while stack:
        node, top = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for k, v in items:
            if top and k in _STRUCTURAL:
                continue
            if isinstance(v, str):
                slots.append((node, k))
            elif isinstance(v, (dict, list)):
                stack.append((v, False))
    return slots


@st.composite
def planted(draw: st.DrawFn) -> tuple[ptree.SessionTree, str, str]:
    """A random tree of every entry kind with one secret put inside one of its strings
    (at a random place in it), or in a new message when the tree has no string."""
    shape = draw(st.sampled_from(sorted(SHAPES)))
    # Two digits at least: a secret that happens to be a word ("tokensBefore") is in
    # the viewer's code and the files' field names anyway.
    plant, secret = draw(SHAPES[shape].filter(lambda p: sum(c.isdigit() for c in p[1]) >= 2))
    tree = draw(trees(max_steps=8))
    entries = [e.to_json() for e in tree.entries()]
    slots = [s for e in entries for s in string_slots(e)]
    if not slots:
        tree = tree.append({"role": "user", "content": "x " + plant + " y"})
    else:
        box, key = draw(st.sampled_from(slots))
        old = box[key]
        at = draw(st.integers(0, len(old)))
        box[key] = old[:at] + plant + old[at:]
        tree = ptree.SessionTree.from_entries(
            [ptree.entries.entry_from_json(e) for e in entries], leaf_id=tree.leaf_id
        )
    return tree, shape, secret


def outputs(tree: ptree.SessionTree) -> dict[str, str]:
    """The tree in every export format: HTML, Markdown of every branch, the Pi file, DOT,
    Mermaid."""
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "s.jsonl"
        ptree.dump(tree, path)
        jsonl = path.read_text(encoding="utf-8", errors="surrogateescape")
    return {
        "html": to_html(tree),
        "markdown": to_markdown(tree, all_branches=True),
        "jsonl": jsonl,
        "dot": "\n".join(render_dot(tree)),
        "mermaid": "\n".join(render_mermaid(tree)),
    }


class TestProperties:
    @given(planted())
    def test_planted_secret_absent_from_every_output(
        self, case: tuple[ptree.SessionTree, str, str]
    ) -> None:
        """A secret of any shape planted anywhere in any entry is in no export of the
        redacted tree; the unredacted Pi file still has it (so the plant took)."""
        tree, shape, secret = case
        with tempfile.TemporaryDirectory() as d:
            ptree.dump(tree, Path(d) / "s.jsonl")
            assert secret in (Path(d) / "s.jsonl").read_text(
                encoding="utf-8", errors="surrogateescape"
            )
        clean = redact(tree)
        for fmt, text in outputs(clean).items():
            assert secret not in text, (shape, fmt)

    @given(
        st.text(
            alphabet=st.characters(blacklist_categories=["Cs"], blacklist_characters="=:-_"),
            max_size=200,
        )
    )
    def test_text_without_secrets_unchanged(self, text: str) -> None:
        """Text holding no secret shape (no '=', ':', '-' or '_', none of the key
        prefixes, no 'Bearer ') comes out exactly as it went in, in a tree too."""
        for prefix in ("AKIA", "ASIA", "ABIA", "ACCA", "AIza", "earer ", "EARER "):
            assume(prefix not in text)
        assert Redactor().text(text) == text
        t = ptree.SessionTree().append({"role": "user", "content": text}, id="u")
        assert redact(t) == t

    @given(trees(max_steps=10))
    def test_trees_without_secrets_unchanged(self, tree: ptree.SessionTree) -> None:
        """Random trees of every kind (their small alphabet holds no secret shape) are
        equal to their redacted copies."""
        assert redact(tree) == tree
