"""A tiny progress bar for the ``ptree`` command: on stderr, and only on a terminal.

Long loads and imports report how far they are; piped or redirected output, and
tests, never see a bar (``stream.isatty()`` is false there), so nothing but the
command's real output reaches a file or a pipe.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import TextIO

from ..closing import Closing

__all__ = ["Progress"]


class Progress(Closing):
    """A bar ``label [#####.....]  52%  5,200/10,000`` redrawn in place on a terminal.

    Use it as a context manager; call :meth:`update` with the amount done.  When
    ``stream`` is not a terminal (or ``enabled`` is false) every call does nothing.
    Redraws are limited to about ten a second, so updating per item is cheap.

    Cost: O(1) per update.

    Args:
        label: the text before the bar.
        total: the amount of work, or ``None`` when unknown (a count is shown).
        stream: where to draw (default: stderr).
        enabled: force drawing on or off (default: only on a terminal).
        unit: the name of the counted things, shown after the count.

    >>> import io
    >>> with Progress("loading", 10, stream=io.StringIO()) as bar:
    ...     bar.update(5)
    >>> bar.enabled
    False
    """

    WIDTH = 30

    def __init__(
        self,
        label: str,
        total: int | None,
        *,
        stream: TextIO | None = None,
        enabled: bool | None = None,
        unit: str = "",
    ) -> None:
        self.label = label
        self.total = total
        self.unit = unit
        self.stream = sys.stderr if stream is None else stream
        if enabled is None:
            isatty = getattr(self.stream, "isatty", None)
            enabled = bool(isatty and isatty())
        self.enabled = enabled
        self.done = 0
        self.elapsed: float | None = None  # shown by ticking()
        self._last = 0.0
        self._drawn = False

    def update(self, done: int, *, force: bool = False) -> None:
        """Record that ``done`` units are finished; redraw if it is time (or ``force``).

        Cost: O(1).
        """
        self.done = done
        if not self.enabled:
            return
        now = time.monotonic()
        if not force and now - self._last < 0.1:
            return
        self._last = now
        self.stream.write("\r" + self.text() + "\x1b[K")
        self.stream.flush()
        self._drawn = True

    def text(self) -> str:
        """The bar as it would be drawn now (no control characters).  O(width)."""
        unit = f" {self.unit}" if self.unit else ""
        if not self.total:
            if self.done:
                return f"{self.label}  {self.done:,}{unit}"
            return f"{self.label} …" + ("" if self.elapsed is None else f" {self.elapsed:.1f} s")
        share = min(max(self.done / self.total, 0.0), 1.0)
        filled = int(share * self.WIDTH)
        bar = "#" * filled + "." * (self.WIDTH - filled)
        return f"{self.label} [{bar}] {share:4.0%}  {self.done:,}/{self.total:,}{unit}"

    def ticking(self) -> _Ticker:
        """A context in which the line is redrawn with the elapsed time, ``label … 3.2 s``.

        For a long step that reports nothing on its way (reading one big file): a
        daemon thread redraws five times a second.  Does nothing when disabled.
        Cost: one thread for the context's duration.
        """
        return _Ticker(self)

    def close(self) -> None:
        """Erase the bar, leaving the terminal line clean.  O(1)."""
        if self.enabled and self._drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self._drawn = False


class _Ticker:
    """The thread behind :meth:`Progress.ticking`."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.stop = threading.Event()
        self.thread: threading.Thread | None = None

    def __enter__(self) -> _Ticker:
        bar = self.progress
        if bar.enabled:
            start = time.monotonic()

            def tick() -> None:
                while not self.stop.wait(0.2):
                    bar.elapsed = time.monotonic() - start
                    bar.update(bar.done, force=True)

            bar.update(bar.done, force=True)
            self.thread = threading.Thread(target=tick, daemon=True)
            self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        if self.thread is not None:
            self.thread.join()
        self.progress.close()
