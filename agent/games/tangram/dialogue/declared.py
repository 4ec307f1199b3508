"""Functions declared by name: ``@reads(...)`` (rules.py) and ``@meaning(...)`` (conversation.py) file
a function under each name they are given, and a name declared twice stops the import."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


def by_name(table: dict[str, F], twice: str) -> Callable[..., Callable[[F], F]]:
    """The decorator that files a function in ``table`` under each of its names; ``twice`` is the
    error for a name already there (``{name}`` is the name, repr'd)."""
    def declare(*names: str) -> Callable[[F], F]:
        def register(fn: F) -> F:
            for name in names:
                if name in table:
                    raise ValueError(twice.format(name=repr(name)))
                table[name] = fn
            return fn
        return register
    return declare
