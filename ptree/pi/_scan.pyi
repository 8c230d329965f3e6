"""Types of the C line scanner (ptree/pi/_scan.c)."""

class Span:
    """A read-only span of a bytes object, read like bytes (buffer protocol)."""

    def __len__(self) -> int: ...
    def __buffer__(self, flags: int) -> memoryview: ...

def scan(
    data: bytes, start: int, limit: int, /
) -> tuple[list[tuple[str, str | None, str, Span] | int], int]: ...
