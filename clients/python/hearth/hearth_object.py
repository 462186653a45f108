"""Answers as objects: a dict whose keys can also be read as attributes, nested all the way down."""

from __future__ import annotations

import json
from typing import Any, Dict, Mapping, Optional


class HearthObject(Dict[str, Any]):
    """A JSON object from the server.

    ``r.choices[0].text`` and ``r["choices"][0]["text"]`` read the same value. Keys that are
    also dict methods (``items``, ``keys``, ``values``, ``get``, …) are read with ``r["key"]``.
    ``to_dict()`` gives plain dicts and lists again.
    """

    __slots__ = ()

    def __init__(self, values: Optional[Mapping[str, Any]] = None, **more: Any) -> None:
        super().__init__()
        for key, value in dict(values or {}, **more).items():
            self[key] = value

    def __setitem__(self, key: str, value: Any) -> None:
        super().__setitem__(key, convert(value))

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"{type(self).__name__} has no attribute or key {name!r}") from None

    def __setattr__(self, name: str, value: Any) -> None:
        self[name] = value

    def __delattr__(self, name: str) -> None:
        try:
            del self[name]
        except KeyError:
            raise AttributeError(name) from None

    def __dir__(self) -> Any:
        return list(super().__dir__()) + [k for k in self.keys() if isinstance(k, str)]

    def __repr__(self) -> str:
        label = self.get("object")
        prefix = f"<{type(self).__name__} {label}" if isinstance(label, str) else f"<{type(self).__name__}"
        return f"{prefix} at {hex(id(self))}> JSON: {self}"

    def __str__(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False)

    def __reduce__(self) -> Any:
        return (type(self), (self.to_dict(),))

    def to_dict(self) -> Dict[str, Any]:
        """A deep copy as plain dicts and lists."""
        return {key: _plain(value) for key, value in self.items()}


def convert(value: Any) -> Any:
    """Turns dicts into HearthObjects, also inside lists; leaves anything else as it is."""
    if isinstance(value, HearthObject):
        return value
    if isinstance(value, Mapping):
        return HearthObject(value)
    if isinstance(value, list):
        return [convert(item) for item in value]
    return value


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value
