"""Store operations as plans: the rules written once, run by a blocking or an async driver.

Every operation of the store contract (:class:`~ptree.stores.Store`, and
:class:`~ptree.stores.AsyncStore` awaiting the same) is a *plan*: a generator that
yields the steps it needs done — a transaction of SQL statements, one read, a pause
between retries — and receives each step's result (the rows) or its error, thrown in
where the step was asked for.  A plan does no I/O of its own ("sans-IO"), so the
blocking stores (:mod:`sqlite3`, psycopg's ``Connection``) and the async one
(psycopg's ``AsyncConnection``) execute the same plans, and every rule (conflict
detection, anchors, update's retries, paging, search, prune) has one owner.

Steps:

- :class:`Transaction`: run ``body`` (a plan yielding :class:`Sql` statements) in one
  transaction, committed when it returns, rolled back if it raises; the reply is
  what ``body`` returned;
- :class:`Read`: one statement outside a transaction (it reads one committed state);
- :class:`Sleep`: wait, between the attempts of a retry;
- :class:`Pause`: let other tasks run (a long loop on the event loop); a blocking
  driver ignores it;
- :class:`Disconnect`: close the connection.

A store whose every step blocks (the ``jsonl:`` store's files) does its I/O where the
plan asks for it and returns :func:`done` plans; the async API runs such a store's
plans in a worker thread (:mod:`ptree.stores._async`).
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Generic, TypeAlias, TypeVar

import attrs

__all__ = [
    "Disconnect",
    "Pause",
    "Plan",
    "Read",
    "Sleep",
    "Sql",
    "Stepper",
    "Transaction",
    "done",
    "recorded",
]

T = TypeVar("T")

Plan: TypeAlias = Generator[Any, Any, T]
"""A plan giving a ``T``: it yields steps and receives their results."""


@attrs.frozen
class Sql:
    """One statement in a transaction (``?`` placeholders); the reply is its rows
    (``[]`` for a statement without a result).  ``many``: ``params`` is a sequence of
    parameter rows, one execution each (``executemany``)."""

    sql: str
    params: Sequence[Any] = ()
    many: bool = False


@attrs.frozen
class Transaction:
    """Run ``body`` (a plan of :class:`Sql` steps) in one transaction; ``write``: one
    that changes the database (it serialises with other writers)."""

    write: bool
    body: Plan[Any]


@attrs.frozen
class Read:
    """One statement outside a transaction; the reply is its rows.  ``planned``: its
    best plan depends on its parameters (a search), so a database must plan it for
    them, never reuse a generic plan."""

    sql: str
    params: Sequence[Any] = ()
    planned: bool = False


@attrs.frozen
class Sleep:
    """Wait ``seconds`` (a blocking driver sleeps, an async one awaits)."""

    seconds: float


@attrs.frozen
class Pause:
    """Let the event loop run other tasks (a blocking driver goes straight on).

    A step of a plan's long loop, and what a long ``update`` function yields between
    its pieces (:meth:`Store.update <ptree.stores.Store.update>`)."""


@attrs.frozen
class Disconnect:
    """Close the connection (a store being closed)."""


def done(value: T) -> Plan[T]:
    """A plan whose work is done already (a blocking store's step): it yields nothing
    and returns ``value``.  O(1)."""
    return value
    yield  # a generator, though it never yields


class Stepper(Generic[T]):
    """Drives a plan: iterate to get its steps, answer each inside :meth:`answering`
    (setting :attr:`reply`), and read :attr:`value` at the end.

    The one loop of every driver (a blocking one calls, an async one awaits)::

        stepper = Stepper(plan)
        for step in stepper:
            with stepper.answering():
                stepper.reply = execute(step)
        return stepper.value

    An error the step raised is thrown into the plan where it asked for the step, so
    a plan handles a conflict or a lost connection with an ordinary ``try``.
    """

    __slots__ = ("error", "plan", "reply", "value")

    def __init__(self, plan: Plan[T]) -> None:
        self.plan = plan
        self.reply: Any = None
        self.error: Exception | None = None

    def __iter__(self) -> Iterator[Any]:
        while True:
            error, self.error = self.error, None
            reply, self.reply = self.reply, None
            try:
                step = self.plan.send(reply) if error is None else self.plan.throw(error)
            except StopIteration as stop:
                self.value: T = stop.value
                return
            yield step

    @contextmanager
    def answering(self) -> Iterator[None]:
        """Around the execution of a step: an exception it raises goes to the plan."""
        try:
            yield
        except Exception as exc:
            self.error = exc

    def run(self, execute: Callable[[Any], Any]) -> T:
        """Drive the plan to its end, each step executed by ``execute`` (blocking).
        Returns the plan's value; raises what the plan raises."""
        for step in self:
            with self.answering():
                self.reply = execute(step)
        return self.value


class _Recorder:
    """A cursor that records the statements given to it (for code that writes through
    a cursor, as the search indexes do), to be yielded as :class:`Sql` steps."""

    def __init__(self) -> None:
        self.steps: list[Sql] = []

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        self.steps.append(Sql(sql, params))
        return self

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> Any:
        self.steps.append(Sql(sql, rows, many=True))
        return self

    def fetchone(self) -> Any:
        raise TypeError("a recorded statement has no rows yet: yield Sql(...) to read")

    def fetchall(self) -> list[Any]:
        raise TypeError("a recorded statement has no rows yet: yield Sql(...) to read")


def recorded(write: Callable[..., None], *args: Any) -> Plan[None]:
    """The statements ``write(cursor, *args)`` executes, as :class:`Sql` steps (their
    rows unread: for code that only writes).  O(statements)."""
    recorder = _Recorder()
    write(recorder, *args)
    for step in recorder.steps:  # noqa: UP028 - each step is sent its rows, a list is not
        yield step
