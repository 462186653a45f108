"""The synchronous transport: urllib. Sends the calls the resources describe, with retries."""

from __future__ import annotations

import http.client
import socket
import time
import urllib.error
import urllib.request
from typing import Any, Callable, Dict, Generator, Iterator, Tuple, TypeVar, overload

from .error import APIConnectionError, HearthError, Timeout
from .hearth_object import HearthObject
from .http_messages import Call, PreparedRequest, answer_error, answer_json, as_object, is_event_stream, not_a_stream
from .http_messages import origin, prepare
from .retries import retry_delay
from .sse import iter_events
from .stream_progress import INCOMPLETE, StreamProgress

T = TypeVar("T")


@overload
def request(call: Call) -> HearthObject: ...
@overload
def request(call: Call, parse: Callable[[Any], T]) -> T: ...


def request(call: Call, parse: Callable[[Any], Any] = as_object) -> Any:
    """Sends ``call`` and returns its JSON answer, read by ``parse`` (by default: an object).

    An error status raises its error class (after the retries 429 and 503 are allowed).
    """
    response = _open(call)
    try:
        raw = _read_all(response)
    finally:
        response.close()
    return parse(answer_json(response.status, dict(response.headers.items()), raw))


def content(call: Call) -> bytes:
    """Sends ``call`` and returns its answer's body as it is (a file's content), after the same retries."""
    response = _open(call)
    try:
        return _read_all(response)
    finally:
        response.close()


def stream(call: Call) -> "ChunkStream":
    """Sends ``call`` (with ``stream=True``) and returns its chunks as they arrive.

    An error status raises here, before anything is iterated (after its retries); an error
    event in the stream raises from the iteration.
    """
    return ChunkStream(_open(call), call)


class ChunkStream(StreamProgress, Iterator[HearthObject]):
    """What ``create(..., stream=True)`` returns: the chunks as they arrive; ``.close()`` hangs up
    (also on leaving ``with``).

    Closing it (``.close()``, or leaving a ``for`` loop over it with ``break`` once nothing
    else refers to it) closes the connection, which makes the server stop generating. A
    connection that breaks mid-stream is resumed by itself, up to ``MAX_RESUMES`` times, so
    the chunks go on with no gap and none twice; only then is the break raised.
    """

    def __init__(self, response: http.client.HTTPResponse, call: Call) -> None:
        super().__init__(response.headers.get("x-request-id"), call.options)
        self._chunks = self._read(response)

    def __iter__(self) -> "ChunkStream":
        return self

    def __next__(self) -> HearthObject:
        return next(self._chunks)

    def close(self) -> None:
        self._chunks.close()

    def __enter__(self) -> "ChunkStream":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _read(self, response: http.client.HTTPResponse) -> Generator[HearthObject, None, None]:
        while True:
            try:
                yield from self._events(response)
                return
            except APIConnectionError as broken:
                call = self._resume_call(broken)
            response = _open(call)

    def _events(self, response: http.client.HTTPResponse) -> Generator[HearthObject, None, None]:
        try:
            for event in iter_events(response.readline):
                chunk = self._chunk(event)
                if chunk is None:
                    return
                yield chunk
            raise APIConnectionError(INCOMPLETE)
        except socket.timeout:
            raise Timeout("No part of the stream arrived within request_timeout.") from None
        except (OSError, http.client.HTTPException) as e:
            raise APIConnectionError(f"The stream broke: {e}") from e
        finally:
            response.close()


def _open(call: Call) -> http.client.HTTPResponse:
    """Sends the request and returns the open response; an error status raises, after its retries."""
    request = prepare(call)
    retries = 0
    while True:
        try:
            return _open_once(call, request)
        except HearthError as refused:
            delay = retry_delay(refused, retries, call.options)
            if delay is None:
                raise
        time.sleep(delay)
        retries += 1


class _KeySafeRedirects(urllib.request.HTTPRedirectHandler):
    """Follows redirects, but the API key goes only where it was sent: a redirect to another
    origin (scheme, host or port), an https-to-http one included, loses the Authorization header."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # type: ignore[no-untyped-def]
        redirected = super().redirect_request(req, fp, code, msg, headers, newurl)
        if redirected is not None and origin(req.full_url) != origin(redirected.full_url):
            redirected.remove_header("Authorization")
        return redirected


_opener = urllib.request.build_opener(_KeySafeRedirects)


def _open_once(call: Call, request: PreparedRequest) -> http.client.HTTPResponse:
    prepared = urllib.request.Request(request.url, data=request.data, headers=request.headers, method=request.method)
    where = f"{request.method} {request.url}"
    try:
        if request.timeout is None:
            response = _opener.open(prepared)
        else:
            response = _opener.open(prepared, timeout=request.timeout)
    except urllib.error.HTTPError as e:
        raise answer_error(e.code, *_drain(e)) from None
    except urllib.error.URLError as e:
        if isinstance(e.reason, socket.timeout):
            raise Timeout(f"{where}: no answer within {request.timeout} s.") from None
        raise APIConnectionError(f"Could not reach Hearth at {request.url}: {e.reason}") from e
    except socket.timeout:
        raise Timeout(f"{where}: no answer within {request.timeout} s.") from None
    except (OSError, http.client.HTTPException) as e:
        raise APIConnectionError(f"{where} failed: {e}") from e
    headers = dict(response.headers.items())
    if call.stream and not is_event_stream(headers):
        try:
            raw = _read_all(response)
        finally:
            response.close()
        raise not_a_stream(response.status, headers, raw)
    return response  # type: ignore[no-any-return]


def _drain(e: urllib.error.HTTPError) -> Tuple[Dict[str, str], bytes]:
    try:
        raw = e.read()
    except (OSError, http.client.HTTPException):
        raw = b""
    finally:
        e.close()
    return (dict(e.headers.items()) if e.headers else {}), raw


def _read_all(response: http.client.HTTPResponse) -> bytes:
    try:
        return response.read()
    except socket.timeout:
        raise Timeout("The answer did not arrive within request_timeout.") from None
    except (OSError, http.client.HTTPException) as e:
        raise APIConnectionError(f"The answer broke off: {e}") from e
