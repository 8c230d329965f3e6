"""Types of freeze's and append's common cases in C (ptree/_cfrozen.c)."""

from typing import Any

def freeze_plain(value: object, /) -> Any: ...
def setup(frozen_dict: type, frozen_list: type, max_depth: int, /) -> None: ...
def append_message(tree: Any, message: object, /) -> Any: ...
def setup_append(
    tree_type: type,
    entry_type: type,
    base_entry_type: type,
    store_type: type,
    header_type: type,
    default_config: object,
    clock: object,
    empty: object,
    tree_slots: tuple[object, ...],
    entry_slots: tuple[object, ...],
    store_slots: tuple[object, ...],
    /,
) -> None: ...
