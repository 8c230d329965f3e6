"""``with`` and ``async with`` for objects that close: one mixin each, for every layer.

A writer, a store, a progress line, a framework session: each holds something until
its ``close()`` (or ``aclose()``) runs, and each is a context manager that gives
itself and closes on the way out, whatever ended the block.  :class:`Closing` and
:class:`AsyncClosing` are that rule, written once; a class that closes inherits one
(or both) and defines only its ``close``.  Like :func:`contextlib.closing` and
:func:`contextlib.aclosing`, they never swallow the exception that ended the block.

>>> class Door(Closing):
...     def close(self) -> None:
...         print("closed")
>>> with Door() as d:
...     print(type(d).__name__)
Door
closed
"""

from __future__ import annotations

from types import TracebackType
from typing import Self

__all__ = ["AsyncClosing", "Closing"]


class Closing:
    """A context manager that closes itself: ``with x as y`` binds ``y = x`` and calls
    ``x.close()`` when the block ends, by an exception too (which goes on).

    A subclass defines :meth:`close`; closing twice should be harmless.
    """

    __slots__ = ()

    def close(self) -> None:
        """Release what the object holds (each subclass says what).  Cost: the subclass's.

        Raises:
            NotImplementedError: the subclass defines no ``close``.
        """
        raise NotImplementedError(f"{type(self).__name__} defines no close()")

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class AsyncClosing:
    """An async context manager that closes itself: ``async with x as y`` binds
    ``y = x`` and awaits ``x.aclose()`` when the block ends, by an exception too.

    A subclass defines :meth:`aclose`; closing twice should be harmless.

    >>> import asyncio
    >>> class Line(AsyncClosing):
    ...     async def aclose(self) -> None:
    ...         print("hung up")
    >>> async def call() -> None:
    ...     async with Line():
    ...         print("talking")
    >>> asyncio.run(call())
    talking
    hung up
    """

    __slots__ = ()

    async def aclose(self) -> None:
        """Release what the object holds, off the event loop where it blocks (each
        subclass says what).  Cost: the subclass's.

        Raises:
            NotImplementedError: the subclass defines no ``aclose``.
        """
        raise NotImplementedError(f"{type(self).__name__} defines no aclose()")

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()
