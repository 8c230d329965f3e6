"""Fuzzing the loader: corrupted session files give a tree or a SessionFileError.

Valid files are corrupted by Hypothesis (truncations, flipped bytes, reordered,
duplicated and deleted lines, inserted junk); loading them, strictly and leniently,
must give a tree (whose invariants hold) or a :class:`~ptree.SessionFileError` — never
another exception, a hang, or a RecursionError.  Warnings are expected and collected.
"""

from __future__ import annotations

import os
import tempfile
import warnings
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from ptree import SessionFileError, SessionFileWarning, SessionTree, dump, load

from .strategies import trees

JUNK = [
    b"",
    b"{",
    b"}",
    b"[" * 5000,
    b'{"type":"leaf","id":"x","targetId":"e1"}',
    b"\xff\xfe",
    b'{"type":"session","id":"s","timestamp":"t","cwd":"/"}',
    b"null",
    b"NaN",
    b'{"type":"message","id":"e1","parentId":"e1","timestamp":"t","message":{}}',
    b'{"a":' * 3000,
    b"\r",
    b'{"type":"label","id":"q","parentId":null,"timestamp":"t","targetId":"nope"}',
    b'{"type":"custom","id":"z","parentId":null,"timestamp":"t","customType":"c","data":[1e400]}',
]


@st.composite
def corrupted(draw: st.DrawFn) -> bytes:
    """The bytes of a valid file (a random tree, dumped), then corrupted."""
    tree: SessionTree = draw(trees(max_steps=12))
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "s.jsonl"
        dump(tree, p)
        data = p.read_bytes()
    for _ in range(draw(st.integers(1, 4))):
        lines = data.split(b"\n")
        how = draw(
            st.sampled_from(
                ["truncate", "flip", "reorder", "duplicate", "delete", "junk", "splice"]
            )
        )
        if how == "truncate" and data:
            data = data[: draw(st.integers(0, len(data) - 1))]
        elif how == "flip" and data:
            i = draw(st.integers(0, len(data) - 1))
            data = data[:i] + bytes([data[i] ^ draw(st.integers(1, 255))]) + data[i + 1 :]
        elif how == "reorder" and len(lines) > 1:
            lines = draw(st.permutations(lines))
            data = b"\n".join(lines)
        elif how == "duplicate" and lines:
            i = draw(st.integers(0, len(lines) - 1))
            lines.insert(draw(st.integers(0, len(lines))), lines[i])
            data = b"\n".join(lines)
        elif how == "delete" and lines:
            del lines[draw(st.integers(0, len(lines) - 1))]
            data = b"\n".join(lines)
        elif how == "junk":
            lines.insert(draw(st.integers(0, len(lines))), draw(st.sampled_from(JUNK)))
            data = b"\n".join(lines)
        elif how == "splice" and data:
            i = draw(st.integers(0, len(data)))
            data = data[:i] + draw(st.binary(max_size=20)) + data[i:]
    return data


class TestFuzzLoad:
    @settings(max_examples=int(os.environ.get("FUZZ_EXAMPLES", "300")))
    @given(data=corrupted(), strict=st.booleans())
    def test_a_tree_or_a_session_file_error(self, data: bytes, strict: bool) -> None:
        """Whatever the corruption: a valid tree, or SessionFileError; nothing else."""
        with tempfile.TemporaryDirectory() as d:
            p = Path(d) / "s.jsonl"
            p.write_bytes(data)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                error: SessionFileError | None = None
                try:
                    tree = load(p, strict=strict)
                except SessionFileError as exc:
                    error = exc
            if error is not None:
                assert error.path == str(p)
                assert error.line is None or 1 <= error.line <= data.count(b"\n") + 1
                assert p.read_bytes() == data
                return
            assert all(issubclass(w.category, SessionFileWarning) for w in caught)
            assert p.read_bytes() == data  # reading never changes the file
        tree._check()
        if not strict:
            return
        # A strict load that succeeded can be written and read back unchanged.
        with tempfile.TemporaryDirectory() as d:
            q = Path(d) / "again.jsonl"
            saved = dump(tree, q)
            assert load(q) == saved
