"""Server-sent events, read line by line as they arrive (the parts of the format Hearth uses and more)."""

from __future__ import annotations

from typing import Callable, Iterator, List, NamedTuple, Optional


class ServerSentEvent(NamedTuple):
    event: str
    data: str
    id: Optional[str]


class EventParser:
    """Feed it one line at a time; it returns an event when a blank line completes one."""

    def __init__(self) -> None:
        self._data: List[str] = []
        self._event = ""
        self._id: Optional[str] = None

    def feed(self, raw: bytes) -> Optional[ServerSentEvent]:
        line = raw.decode("utf-8").rstrip("\r\n")
        if line == "":
            return self._dispatch()
        if line.startswith(":"):
            return None  # a comment, e.g. a keep-alive
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id":
            self._id = value
        return None

    def _dispatch(self) -> Optional[ServerSentEvent]:
        if not self._data:
            self._event = ""
            return None
        event = ServerSentEvent(self._event or "message", "\n".join(self._data), self._id)
        self._data = []
        self._event = ""
        return event


def iter_events(readline: Callable[[], bytes]) -> Iterator[ServerSentEvent]:
    """The events of a stream, each as soon as its closing blank line has been read."""
    parser = EventParser()
    while True:
        line = readline()
        if not line:
            return
        event = parser.feed(line)
        if event is not None:
            yield event
