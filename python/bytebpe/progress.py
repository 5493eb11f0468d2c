"""Progress bars (tqdm.auto, so they render in notebooks too), or nothing."""

from __future__ import annotations

from typing import Any


class ProgressBar:
    """A context manager around a tqdm bar that does nothing when disabled."""

    def __init__(self, enabled: bool, **options: Any) -> None:
        self._bar = None
        if enabled:
            from tqdm.auto import tqdm

            self._bar = tqdm(**options)

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.close()

    def set_total(self, total: int) -> None:
        if self._bar is not None:
            self._bar.total = total
            self._bar.refresh()

    def update(self, n: int) -> None:
        if self._bar is not None:
            self._bar.update(n)

    def update_to(self, done: int) -> None:
        """Moves the bar to `done` (a running total, as the Rust side reports it)."""
        if self._bar is not None and done > self._bar.n:
            self._bar.update(done - self._bar.n)

    def set_postfix_str(self, text: str) -> None:
        if self._bar is not None:
            self._bar.set_postfix_str(text, refresh=False)
