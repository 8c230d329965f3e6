"""The importers' JSON reading: msgspec first, json for whatever msgspec refuses; the
result must be what :func:`json.loads` (strict: no NaN, no infinity) reads, and a line
it refuses must be refused."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ptree.formats import ImportFormatError
from ptree.formats._common import read_json_lines

VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**80), 2**80)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)
ODD = st.sampled_from(
    ['"\\ud800"', "NaN", "1e400", "-0", "1.5e-400", '"\\u0000"', "[" * 3000 + "]" * 3000]
)


def reference(line: str) -> Any:
    """What strict JSON reading gives: json.loads without NaN or infinity."""

    def refuse(name: str) -> Any:
        raise ValueError(name)

    value = json.loads(line, parse_constant=refuse)
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, float) and math.isinf(v):
            raise ValueError("infinity")
        stack.extend(v.values() if isinstance(v, dict) else v if isinstance(v, list) else ())
    return value


LINES = st.lists(
    st.one_of(VALUES.map(lambda v: json.dumps(v, ensure_ascii=False)), ODD).map(
        lambda value: f'{{"k": {value}}}'
    ),
    max_size=3,
)


@settings(max_examples=150)
@given(LINES)
def test_records_read_as_json_reads_them(lines: list[str]) -> None:
    """Every record comes back equal to what json reads from its line, and a file with
    a line json refuses is refused."""
    data = "".join(line + "\n" for line in lines).encode("utf-8", "surrogatepass")
    path = Path(f"/tmp/ptree-json-{abs(hash(data))}.jsonl")
    try:
        path.write_bytes(data)
        got = [value for _, value in read_json_lines(path)]
    except ImportFormatError:
        got = None
    finally:
        path.unlink(missing_ok=True)
    try:
        expected: Any = [reference(line) for line in lines]
    except (ValueError, RecursionError):
        expected = None
    assert got == expected


@pytest.mark.parametrize(
    ("line", "refused"),
    [
        ('{"a": NaN}', True),
        ('{"a": 1e400}', True),
        ('{"a": -1e400}', True),
        ('{"a": "\\ud800"}', False),
        ('{"a": 123456789012345678901234567890}', False),
        ('{"a": 1} x', True),
        ('{"a": 1, "a": 2}', False),
    ],
)
def test_odd_lines(tmp_path: Path, line: str, refused: bool) -> None:
    """Each odd line is read or refused as strict json reads or refuses it."""
    path = tmp_path / "s.jsonl"
    path.write_text(line + "\n", encoding="utf-8")
    if refused:
        with pytest.raises(ImportFormatError):
            read_json_lines(path)
    else:
        assert read_json_lines(path) == [(1, json.loads(line))]
