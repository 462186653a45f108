"""The asynchronous transport: asyncio. Sends the same calls as the sync one, with the same retries."""

from __future__ import annotations

import asyncio
from typing import Any, AsyncIterator, Callable, Optional, TypeVar, overload

from .async_http import AsyncResponse, send
from .error import APIConnectionError, HearthError
from .hearth_object import HearthObject
from .http_messages import Call, answer_error, answer_json, as_object, is_event_stream, not_a_stream, prepare
from .retries import retry_delay
from .sse import EventParser
from .stream_progress import INCOMPLETE, StreamProgress

T = TypeVar("T")


@overload
async def request(call: Call) -> HearthObject: ...
@overload
async def request(call: Call, parse: Callable[[Any], T]) -> T: ...


async def request(call: Call, parse: Callable[[Any], Any] = as_object) -> Any:
    """Sends ``call`` and returns its JSON answer, read by ``parse``, as the sync client's ``request`` does."""
    response = await _open(call)
    try:
        raw = await response.read()
    finally:
        response.close()
    return parse(answer_json(response.status, response.headers, raw))


async def content(call: Call) -> bytes:
    """Sends ``call`` and returns its answer's body as it is, as the sync client's ``content`` does."""
    response = await _open(call)
    try:
        return await response.read()
    finally:
        response.close()


async def stream(call: Call) -> "AsyncChunkStream":
    """Sends ``call`` (with ``stream=True``) and returns an async iterator of its chunks.

    As in the sync client, an error status raises here (after its retries), and an error
    event inside the stream raises from the iteration.
    """
    return AsyncChunkStream(await _open(call), call)


class AsyncChunkStream(StreamProgress, AsyncIterator[HearthObject]):
    """What ``await create(..., stream=True)`` returns: ``async for chunk in it``; ``await .aclose()`` hangs up.

    Also an async context manager that closes it on leaving. A broken connection is resumed
    by itself, as in the sync client.
    """

    def __init__(self, response: AsyncResponse, call: Call) -> None:
        super().__init__(response.headers.get("x-request-id"), call.options)
        self._response: Optional[AsyncResponse] = response
        self._parser = EventParser()

    def __aiter__(self) -> "AsyncChunkStream":
        return self

    async def __anext__(self) -> HearthObject:
        while True:
            if self._response is None:
                raise StopAsyncIteration
            try:
                chunk = await self._next_chunk(self._response)
            except APIConnectionError as broken:
                self._close_response()
                call = self._resume_call(broken)
                self._response = await _open(call)
                self._parser = EventParser()
                continue
            except BaseException:
                self._close_response()
                raise
            if chunk is None:
                self._close_response()
                raise StopAsyncIteration
            return chunk

    async def aclose(self) -> None:
        self._close_response()

    async def __aenter__(self) -> "AsyncChunkStream":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()

    async def _next_chunk(self, response: AsyncResponse) -> Optional[HearthObject]:
        while True:
            line = await response.readline()
            if not line:
                raise APIConnectionError(INCOMPLETE)
            event = self._parser.feed(line)
            if event is not None:
                return self._chunk(event)

    def _close_response(self) -> None:
        if self._response is not None:
            self._response.close()
            self._response = None


async def _open(call: Call) -> AsyncResponse:
    """Sends the request and returns the answer with its head read; an error status raises, after its retries."""
    request = prepare(call)
    retries = 0
    while True:
        try:
            return await _open_once(call, await send(request))
        except HearthError as refused:
            delay = retry_delay(refused, retries, call.options)
            if delay is None:
                raise
        await asyncio.sleep(delay)
        retries += 1


async def _open_once(call: Call, response: AsyncResponse) -> AsyncResponse:
    if 200 <= response.status < 300 and (not call.stream or is_event_stream(response.headers)):
        return response
    try:
        raw = await response.read()
    finally:
        response.close()
    if 200 <= response.status < 300:
        raise not_a_stream(response.status, response.headers, raw)
    raise answer_error(response.status, response.headers, raw)
