"""Reading a live stream in a test without ever hanging it."""

from __future__ import annotations

import threading
from typing import Iterator, List, TypeVar

T = TypeVar("T")


def take(items: Iterator[T], n: int, timeout: float = 30.0) -> List[T]:
    """The next ``n`` items; fails the test when they do not come within ``timeout`` seconds."""
    got: List[T] = []
    failure: List[BaseException] = []

    def read() -> None:
        try:
            for item in items:
                got.append(item)
                if len(got) == n:
                    return
        except BaseException as e:  # noqa: BLE001 - handed to the test thread
            failure.append(e)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout)
    if failure:
        raise failure[0]
    assert len(got) == n, f"only {len(got)} of {n} items within {timeout}s: {got}"
    return got
