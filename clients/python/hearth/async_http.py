"""HTTP/1.1 over asyncio streams, for the async client: one connection per request.

Sends a :class:`~hearth.http_messages.PreparedRequest` and reads the answer's head; the body
is read as it arrives (``Content-Length``, chunked, or up to the connection's end), by lines
for streams. Redirects are followed as the sync client's urllib does, and the API key is
dropped on a redirect to another origin. Proxies from the environment are not used.
Every wait (connecting, each read) is bounded by the request's timeout.
"""

from __future__ import annotations

import asyncio
import ssl
import urllib.parse
from typing import Any, Awaitable, Dict, Optional, TypeVar

from .error import APIConnectionError, Timeout
from .http_messages import MAX_REDIRECTS, PreparedRequest, redirected

T = TypeVar("T")
_READ_SIZE = 65536


class AsyncResponse:
    """An answer whose head has been read; ``headers`` has lower-case names."""

    def __init__(
        self,
        status: int,
        headers: Dict[str, str],
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        timeout: Optional[float],
        has_body: bool,
    ) -> None:
        self.status = status
        self.headers = headers
        self._reader = reader
        self._writer = writer
        self._timeout = timeout
        self._buffer = bytearray()
        self._chunked = "chunked" in headers.get("transfer-encoding", "").lower()
        length = headers.get("content-length")
        self._remaining: Optional[int] = int(length) if length is not None and not self._chunked else None
        self._eof = not has_body or self._remaining == 0

    async def readline(self) -> bytes:
        """The next line of the body with its end of line; ``b""`` once the body is over."""
        while True:
            end = self._buffer.find(b"\n")
            if end >= 0:
                line = bytes(self._buffer[: end + 1])
                del self._buffer[: end + 1]
                return line
            if self._eof:
                rest = bytes(self._buffer)
                self._buffer.clear()
                return rest
            await self._fill()

    async def read(self) -> bytes:
        """The whole (rest of the) body."""
        while not self._eof:
            await self._fill()
        rest = bytes(self._buffer)
        self._buffer.clear()
        return rest

    def close(self) -> None:
        self._eof = True
        self._writer.close()

    async def _fill(self) -> None:
        if self._chunked:
            size_line = await self._wait(self._reader.readline())
            if not size_line:
                raise APIConnectionError("The connection closed in the middle of the answer.")
            size = int(size_line.split(b";")[0].strip() or b"0", 16)
            if size == 0:
                while (await self._wait(self._reader.readline())).strip():
                    pass  # trailers
                self._eof = True
                return
            self._buffer += await self._wait(self._reader.readexactly(size))
            await self._wait(self._reader.readline())
        elif self._remaining is not None:
            piece = await self._wait(self._reader.read(min(self._remaining, _READ_SIZE)))
            if not piece:
                raise APIConnectionError("The connection closed in the middle of the answer.")
            self._buffer += piece
            self._remaining -= len(piece)
            self._eof = self._remaining == 0
        else:
            piece = await self._wait(self._reader.read(_READ_SIZE))
            self._buffer += piece
            self._eof = not piece

    async def _wait(self, step: Awaitable[T]) -> T:
        try:
            return await asyncio.wait_for(step, self._timeout)
        except asyncio.TimeoutError:
            raise Timeout("No part of the answer arrived within request_timeout.") from None
        except asyncio.IncompleteReadError:
            raise APIConnectionError("The connection closed in the middle of the answer.") from None
        except (OSError, ValueError) as e:
            raise APIConnectionError(f"The answer broke off: {e}") from e


async def send(request: PreparedRequest) -> AsyncResponse:
    """Sends ``request`` (following redirects) and returns the answer once its head has arrived."""
    for _ in range(MAX_REDIRECTS + 1):
        response = await _send_once(request)
        location = response.headers.get("location")
        following = redirected(request, response.status, location) if 300 <= response.status < 400 else None
        if following is None:
            return response
        response.close()
        request = following
    return response


async def _send_once(request: PreparedRequest) -> AsyncResponse:
    url = urllib.parse.urlsplit(request.url)
    https = url.scheme == "https"
    host = url.hostname or ""
    port = url.port or (443 if https else 80)
    where = f"{request.method} {request.url}"
    try:
        reader, writer = await asyncio.wait_for(
            asyncio.open_connection(host, port, ssl=ssl.create_default_context() if https else None),
            request.timeout,
        )
    except asyncio.TimeoutError:
        raise Timeout(f"{where}: no connection within {request.timeout} s.") from None
    except OSError as e:
        raise APIConnectionError(f"Could not reach Hearth at {request.url}: {e}") from e
    try:
        target = url.path or "/"
        if url.query:
            target += "?" + url.query
        head = [f"{request.method} {target} HTTP/1.1", f"Host: {url.netloc.rpartition('@')[2]}"]
        head += [f"{name}: {value}" for name, value in request.headers.items()]
        if request.data is not None:
            head.append(f"Content-Length: {len(request.data)}")
        head += ["Accept-Encoding: identity", "Connection: close"]
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + (request.data or b""))
        return await asyncio.wait_for(_read_head(request, reader, writer), request.timeout)
    except asyncio.TimeoutError:
        writer.close()
        raise Timeout(f"{where}: no answer within {request.timeout} s.") from None
    except (OSError, ValueError, asyncio.IncompleteReadError) as e:
        writer.close()
        raise APIConnectionError(f"{where} failed: {e}") from e
    except BaseException:
        writer.close()
        raise


async def _read_head(request: PreparedRequest, reader: asyncio.StreamReader, writer: Any) -> AsyncResponse:
    await writer.drain()
    while True:
        status_line = await reader.readline()
        if not status_line:
            raise ValueError("the server closed the connection without answering")
        parts = status_line.decode("latin-1").split(None, 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/"):
            raise ValueError(f"not an HTTP answer: {status_line[:100]!r}")
        status = int(parts[1])
        headers: Dict[str, str] = {}
        while True:
            line = (await reader.readline()).decode("latin-1").rstrip("\r\n")
            if not line:
                break
            name, _, value = line.partition(":")
            key = name.strip().lower()
            headers[key] = f"{headers[key]}, {value.strip()}" if key in headers else value.strip()
        if status >= 200:
            break  # a 1xx (100 Continue) comes before the real answer
    has_body = request.method != "HEAD" and status not in (204, 304)
    return AsyncResponse(status, headers, reader, writer, request.timeout, has_body)
