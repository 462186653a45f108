"""HTTP to Hearth: settings resolved per call, JSON answers, streamed answers and errors."""

from __future__ import annotations

import http.client
import json
import os
import socket
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Dict, Iterator, Mapping, Optional, Tuple

from .error import APIConnectionError, APIError, AuthenticationError, HearthError, InvalidRequestError, Timeout
from .error import error_from_body, error_from_status
from .hearth_object import HearthObject, convert
from .sse import iter_events
from .version import VERSION

DEFAULT_API_BASE = "http://localhost:8080/v1"
API_KEY_VARIABLES = ("HEARTH_API_KEY", "SERVICE_API_KEY")
API_BASE_VARIABLE = "HEARTH_BASE_URL"
USER_AGENT = f"hearth-python/{VERSION}"

#: Where the module-level settings live (``hearth.client``: api_key, api_base, request_timeout).
#: hearth.client registers itself here when it is imported; this module never imports it, so
#: the two do not import each other.
_settings: Any = None


def use_settings(module: Any) -> None:
    """Reads the module-level settings from ``module`` at each call (hearth.client calls this)."""
    global _settings
    _settings = module


def _setting(name: str) -> Any:
    return getattr(_settings, name, None)

#: How many times a stream whose connection breaks is resumed before the break is raised.
MAX_RESUMES = 3


class RequestOptions:
    """What one call overrides: the key, the base URL and the timeout (None: the module's or the environment's)."""

    __slots__ = ("api_key", "api_base", "request_timeout")

    def __init__(
        self,
        api_key: Optional[str] = None,
        api_base: Optional[str] = None,
        request_timeout: Optional[float] = None,
    ) -> None:
        self.api_key = api_key
        self.api_base = api_base
        self.request_timeout = request_timeout


def resolve_api_key(explicit: Optional[str] = None) -> str:
    """The call's key, else ``hearth.client.api_key``, else $HEARTH_API_KEY, else $SERVICE_API_KEY."""
    for candidate in (explicit, _setting("api_key"), *(os.environ.get(name) for name in API_KEY_VARIABLES)):
        if candidate:
            return candidate
    raise AuthenticationError(
        "No API key provided. Set hearth.client.api_key, pass api_key=..., or set the HEARTH_API_KEY "
        "(or SERVICE_API_KEY) environment variable."
    )


def resolve_api_base(explicit: Optional[str] = None) -> str:
    """The call's base URL, else ``hearth.client.api_base``, else $HEARTH_BASE_URL, else localhost:8080."""
    for candidate in (explicit, _setting("api_base"), os.environ.get(API_BASE_VARIABLE)):
        if candidate:
            return normalize_api_base(candidate)
    return DEFAULT_API_BASE


def normalize_api_base(url: str) -> str:
    """``http://host:8080``, ``http://host:8080/`` and ``http://host:8080/v1`` all mean ``http://host:8080/v1``."""
    trimmed = url.strip().rstrip("/")
    parsed = urllib.parse.urlsplit(trimmed)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise InvalidRequestError(f"api_base must be an http:// or https:// URL, not {url!r}.", param="api_base")
    return trimmed if trimmed.endswith("/v1") else f"{trimmed}/v1"


def resolve_timeout(explicit: Optional[float] = None) -> Optional[float]:
    return explicit if explicit is not None else _setting("request_timeout")


def request(
    method: str,
    path: str,
    options: RequestOptions,
    *,
    body: Optional[Mapping[str, Any]] = None,
    query: Optional[Mapping[str, Any]] = None,
) -> HearthObject:
    """Sends one request and returns its JSON answer; an error status raises its error class."""
    response = _open(method, path, options, body=body, query=query, accept="application/json")
    try:
        raw = _read_all(response)
    finally:
        response.close()
    try:
        parsed = json.loads(raw.decode("utf-8")) if raw else {}
    except ValueError:
        raise APIError(
            f"The server answered {response.status} with a body that is not JSON.",
            http_status=response.status,
            http_body=raw.decode("utf-8", "replace"),
            headers=dict(response.headers.items()),
        ) from None
    if not isinstance(parsed, dict):
        raise APIError("The server answered with JSON that is not an object.", http_status=response.status)
    return HearthObject(parsed)


def request_raw(path: str, options: RequestOptions, data: bytes, content_type: str) -> Any:
    """POSTs a body as it is (e.g. multipart) and returns its JSON answer, of any shape."""
    response = _open("POST", path, options, raw=(data, content_type), accept="application/json")
    try:
        raw = _read_all(response)
    finally:
        response.close()
    try:
        return json.loads(raw.decode("utf-8"))
    except ValueError:
        raise APIError(
            f"The server answered {response.status} with a body that is not JSON.",
            http_status=response.status,
            http_body=raw.decode("utf-8", "replace"),
        ) from None


def stream(
    method: str,
    path: str,
    options: RequestOptions,
    *,
    body: Optional[Mapping[str, Any]] = None,
    last_event_id: Optional[str] = None,
) -> "ChunkStream":
    """Sends a streaming request now and returns its chunks as they arrive.

    An error status raises here, before anything is iterated; an error event in the stream
    raises from the iteration. Closing the iterator (``.close()``, or leaving a ``for`` loop
    over it with ``break`` once nothing else refers to it) closes the connection, which makes
    the server stop generating.
    """
    return ChunkStream(_open_stream(method, path, options, body=body, last_event_id=last_event_id), options)


class ChunkStream(Iterator[HearthObject]):
    """What ``create(..., stream=True)`` returns: the chunks as they arrive; ``.close()`` hangs up.

    ``request_id`` is the request's ID and ``last_event_id`` the ID of the last event read: with
    both, ``Stream.resume`` picks the stream up again, on any Hearth API process. A connection
    that breaks mid-stream is resumed that way by itself, up to ``MAX_RESUMES`` times, so the
    chunks go on with no gap and none twice; only then is the break raised.
    """

    def __init__(self, response: http.client.HTTPResponse, options: RequestOptions) -> None:
        self.request_id: Optional[str] = response.headers.get("x-request-id")
        self.last_event_id: Optional[str] = None
        self.resumed = 0
        self._options = options
        self._chunks = self._read(response)

    def __iter__(self) -> "ChunkStream":
        return self

    def __next__(self) -> HearthObject:
        return next(self._chunks)

    def close(self) -> None:
        self._chunks.close()

    def _read(self, response: http.client.HTTPResponse) -> Iterator[HearthObject]:
        while True:
            try:
                yield from self._events(response)
                return
            except APIConnectionError:
                if self.request_id is None or self.resumed >= MAX_RESUMES:
                    raise
            self.resumed += 1
            response = _open_stream(
                "GET", f"/streams/{urllib.parse.quote(self.request_id)}", self._options, last_event_id=self.last_event_id
            )

    def _events(self, response: http.client.HTTPResponse) -> Iterator[HearthObject]:
        try:
            for event in iter_events(response.readline):
                if event.data == "[DONE]":
                    return
                try:
                    payload = json.loads(event.data)
                except ValueError:
                    raise APIError(f"A stream event is not JSON: {event.data[:200]!r}", http_body=event.data) from None
                if isinstance(payload, dict) and "error" in payload:
                    raise error_from_body(payload, event.data)
                if event.id is not None:
                    self.last_event_id = event.id
                yield convert(payload)
            raise APIConnectionError("The stream ended before the server sent [DONE]: the answer is incomplete.")
        except socket.timeout:
            raise Timeout("No part of the stream arrived within request_timeout.") from None
        except (OSError, http.client.HTTPException) as e:
            raise APIConnectionError(f"The stream broke: {e}") from e
        finally:
            response.close()


def _open_stream(
    method: str,
    path: str,
    options: RequestOptions,
    *,
    body: Optional[Mapping[str, Any]] = None,
    last_event_id: Optional[str] = None,
) -> http.client.HTTPResponse:
    headers = {} if last_event_id is None else {"Last-Event-ID": last_event_id}
    response = _open(method, path, options, body=body, accept="text/event-stream", headers=headers)
    content_type = response.headers.get("content-type", "")
    if not content_type.startswith("text/event-stream"):
        raw = _read_all(response)
        response.close()
        raise APIError(
            f"Asked for a stream, the server answered {content_type or 'no content type'}.",
            http_status=response.status,
            http_body=raw.decode("utf-8", "replace"),
        )
    return response


def _origin(url: str) -> Tuple[str, str, Optional[int]]:
    parts = urllib.parse.urlsplit(url)
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or "").lower(), parts.port or {"http": 80, "https": 443}.get(scheme)


class _KeySafeRedirects(urllib.request.HTTPRedirectHandler):
    """Follows redirects, but the API key goes only where it was sent: a redirect to another
    origin (scheme, host or port), an https-to-http one included, loses the Authorization header."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # type: ignore[no-untyped-def]
        redirected = super().redirect_request(req, fp, code, msg, headers, newurl)
        if redirected is not None and _origin(req.full_url) != _origin(redirected.full_url):
            redirected.remove_header("Authorization")
        return redirected


_opener = urllib.request.build_opener(_KeySafeRedirects)


def _open(
    method: str,
    path: str,
    options: RequestOptions,
    *,
    body: Optional[Mapping[str, Any]] = None,
    query: Optional[Mapping[str, Any]] = None,
    raw: Optional[Tuple[bytes, str]] = None,
    accept: str,
    headers: Optional[Mapping[str, str]] = None,
) -> http.client.HTTPResponse:
    url = resolve_api_base(options.api_base) + path
    if query:
        url += "?" + urllib.parse.urlencode({k: v for k, v in query.items() if v is not None})
    sent: Dict[str, str] = {
        "Authorization": f"Bearer {resolve_api_key(options.api_key)}",
        "Accept": accept,
        "User-Agent": USER_AGENT,
        **(headers or {}),
    }
    data: Optional[bytes] = None
    if body is not None:
        data = json.dumps(body, ensure_ascii=False).encode("utf-8")
        sent["Content-Type"] = "application/json"
    elif raw is not None:
        data, sent["Content-Type"] = raw
    prepared = urllib.request.Request(url, data=data, headers=sent, method=method)
    timeout = resolve_timeout(options.request_timeout)
    try:
        if timeout is None:
            return _opener.open(prepared)  # type: ignore[no-any-return]
        return _opener.open(prepared, timeout=timeout)  # type: ignore[no-any-return]
    except urllib.error.HTTPError as e:
        raise _status_error(e) from None
    except urllib.error.URLError as e:
        if isinstance(e.reason, socket.timeout):
            raise Timeout(f"{method} {url}: no answer within {timeout} s.") from None
        raise APIConnectionError(f"Could not reach Hearth at {url}: {e.reason}") from e
    except socket.timeout:
        raise Timeout(f"{method} {url}: no answer within {timeout} s.") from None
    except (OSError, http.client.HTTPException) as e:
        raise APIConnectionError(f"{method} {url} failed: {e}") from e


def _status_error(e: urllib.error.HTTPError) -> HearthError:
    try:
        raw = e.read()
    except (OSError, http.client.HTTPException):
        raw = b""
    finally:
        e.close()
    return error_from_status(e.code, raw.decode("utf-8", "replace"), dict(e.headers.items()) if e.headers else None)


def _read_all(response: http.client.HTTPResponse) -> bytes:
    try:
        return response.read()
    except socket.timeout:
        raise Timeout("The answer did not arrive within request_timeout.") from None
    except (OSError, http.client.HTTPException) as e:
        raise APIConnectionError(f"The answer broke off: {e}") from e
