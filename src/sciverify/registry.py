"""One small name -> implementation registry, shared by every stage that picks an implementation by name.

Retrievers, rationale selectors, label predictors, judges and the label model's training bodies are each a
:class:`Registry`: an implementation module registers itself with the ``@REGISTRY.register("name")``
decorator, and a configuration string picks it with :meth:`Registry.get`. A new implementation is one
module and one decorator, never a branch in an ``if`` chain.

The registry holds no import of its implementations: the module that looks names up (the stage's catalog)
imports the built-in modules first, so nothing here can be dropped by the order in which names arrive.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

from sciverify.errors import ConfigError

__all__ = ["Registry"]

T = TypeVar("T")


class Registry(Generic[T]):
    """Named entries of one kind (``kind`` names them in error messages: "retrieval method", ...)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._entries: dict[str, T] = {}

    def register(self, name: str) -> Callable[[T], T]:
        """Decorator: make the decorated object available as ``name`` (a later registration replaces it)."""

        def add(entry: T) -> T:
            self.add(name, entry)
            return entry

        return add

    def add(self, name: str, entry: T) -> None:
        """Make ``entry`` available as ``name``."""
        if not name:
            raise ConfigError(f"a {self.kind} needs a non-empty name")
        self._entries[name] = entry

    def get(self, name: str) -> T:
        """The entry registered as ``name``; ConfigError naming the choices otherwise."""
        try:
            return self._entries[name]
        except KeyError:
            raise ConfigError(
                f"unknown {self.kind} {name!r}; choose from {', '.join(self.names())}"
            ) from None

    def names(self) -> list[str]:
        """Registered names, sorted."""
        return sorted(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())
