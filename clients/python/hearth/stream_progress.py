"""A stream's events read as chunks, and where to pick it up again: shared by both clients.

The transports read the lines; a :class:`StreamProgress` turns the server-sent events into
chunks, raises the errors the server reports inside the stream, remembers the last event's ID,
and when the connection breaks before ``data: [DONE]`` says how to ask for the rest
(``GET /v1/streams/<request_id>`` with ``Last-Event-ID``), up to :data:`MAX_RESUMES` times.
"""

from __future__ import annotations

import json
import urllib.parse
from typing import Optional

from .error import APIConnectionError, APIError, error_from_body
from .hearth_object import HearthObject, convert
from .http_messages import Call
from .settings import RequestOptions
from .sse import ServerSentEvent

#: How many times a stream whose connection breaks is resumed before the break is raised.
MAX_RESUMES = 3

INCOMPLETE = "The stream ended before the server sent [DONE]: the answer is incomplete."


class StreamProgress:
    """``request_id`` is the request's ID and ``last_event_id`` the ID of the last event read:
    with both, ``Stream.resume`` picks the stream up again, on any Hearth API process.
    ``resumed`` counts the times a broken connection was resumed by itself."""

    def __init__(self, request_id: Optional[str], options: RequestOptions) -> None:
        self.request_id = request_id
        self.last_event_id: Optional[str] = None
        self.resumed = 0
        self._options = options

    def _chunk(self, event: ServerSentEvent) -> Optional[HearthObject]:
        """The chunk an event carries; None for the final ``[DONE]``. An error event raises its class."""
        if event.data == "[DONE]":
            return None
        try:
            payload = json.loads(event.data)
        except ValueError:
            raise APIError(f"A stream event is not JSON: {event.data[:200]!r}", http_body=event.data) from None
        if isinstance(payload, dict) and "error" in payload:
            raise error_from_body(payload, event.data)
        if event.id is not None:
            self.last_event_id = event.id
        chunk = convert(payload)
        if not isinstance(chunk, HearthObject):
            raise APIError(f"A stream event is not a JSON object: {event.data[:200]!r}", http_body=event.data)
        return chunk

    def _resume_call(self, broken: APIConnectionError) -> Call:
        """The call that asks for the rest after ``broken``; raises ``broken`` when it may not be resumed."""
        if self.request_id is None or self.resumed >= MAX_RESUMES:
            raise broken
        self.resumed += 1
        return resume_call(self.request_id, self.last_event_id, self._options)


def resume_call(request_id: str, last_event_id: Optional[str], options: RequestOptions) -> Call:
    """``GET /v1/streams/{request_id}``: the events after ``last_event_id`` (all of them without it)."""
    path = f"/streams/{urllib.parse.quote(request_id, safe='')}"
    return Call("GET", path, options, stream=True, last_event_id=last_event_id)
