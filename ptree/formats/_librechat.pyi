"""Types of the LibreChat reader's common case in C (ptree/formats/_librechat.c)."""

from typing import Any, Literal

def setup(
    cls: type,
    descriptors: tuple[Any, ...],
    freeze: Any,
    ms: Any,
    zero_usage: Any,
    frozen_dict: type,
    frozen_list: type,
    call_arguments: Any,
    output_text: Any,
    text_blocks: Any,
    tool_result: Any,
    /,
) -> None: ...
def entries(
    messages: list[Any], parents: list[str | None] | None, endpoint: str | None, titled: bool, /
) -> tuple[list[Any], list[Any], str | None] | Literal[False] | None: ...
def ms_fixed(text: str, /) -> int | None: ...
