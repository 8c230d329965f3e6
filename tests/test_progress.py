"""The command's progress bar: drawn on a terminal only, erased when done."""

from __future__ import annotations

import io
import time

from ptree.cli.progress import Progress


class FakeTerminal(io.StringIO):
    """A StringIO that says it is a terminal."""

    def isatty(self) -> bool:
        return True


class TestProgress:
    def test_silent_when_not_a_terminal(self) -> None:
        """A stream that is not a terminal receives nothing at all."""
        stream = io.StringIO()
        with Progress("loading", 10, stream=stream) as bar:
            for i in range(11):
                bar.update(i, force=True)
        assert stream.getvalue() == ""

    def test_draws_and_erases_on_a_terminal(self) -> None:
        """On a terminal the bar is redrawn in place and erased at the end."""
        stream = FakeTerminal()
        with Progress("importing", 4, stream=stream, unit="conversations") as bar:
            bar.update(1)
        out = stream.getvalue()
        assert out.startswith(
            "\rimporting [#######.......................]  25%  1/4 conversations\x1b[K"
        )
        assert out.endswith("\r\x1b[K")

    def test_text(self) -> None:
        """The text of the bar at a few points; no total gives a count."""
        bar = Progress("x", 200, enabled=False)
        bar.update(100)
        assert bar.text() == "x [###############...............]  50%  100/200"
        bar.update(500)
        assert bar.text().startswith("x [" + "#" * 30 + "] 100%")
        counting = Progress("y", None, enabled=False)
        assert counting.text() == "y …"
        counting.update(1234)
        assert counting.text() == "y  1,234"

    def test_redraws_are_limited(self) -> None:
        """Many quick updates draw only a few times."""
        stream = FakeTerminal()
        with Progress("n", 100_000, stream=stream) as bar:
            for i in range(100_000):
                bar.update(i)
        assert stream.getvalue().count("\r") < 100

    def test_ticking_shows_elapsed_time(self) -> None:
        """ticking() redraws with the elapsed time until the step ends, then erases."""
        stream = FakeTerminal()
        with Progress("loading big.jsonl", None, stream=stream).ticking():
            deadline = time.monotonic() + 30
            while " s\x1b[K" not in stream.getvalue() and time.monotonic() < deadline:
                time.sleep(0.05)  # wait for the first tick, however slow the machine
        out = stream.getvalue()
        assert "\rloading big.jsonl … 0." in out
        assert out.endswith("\r\x1b[K")

    def test_ticking_disabled_starts_no_thread(self) -> None:
        """ticking() on a disabled bar does nothing."""
        stream = io.StringIO()
        with Progress("x", None, stream=stream).ticking() as ticker:
            assert ticker.thread is None
        assert stream.getvalue() == ""
