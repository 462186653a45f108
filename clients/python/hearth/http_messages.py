"""What both transports share: the request as bytes and headers, and what an answer means.

A :class:`Call` describes one API call (the resources build them); :func:`prepare` turns it into
the exact method, URL, headers and body to send; the ``answer_*`` functions turn what came back
into a value or an error. The sync transport (urllib, :mod:`hearth.api_requestor`) and the async
one (asyncio, :mod:`hearth.async_requestor`) only move the bytes.
"""

from __future__ import annotations

import json
import urllib.parse
from typing import Any, Dict, Mapping, NamedTuple, Optional, Tuple

from .error import APIError, HearthError, error_from_status
from .hearth_object import HearthObject
from .settings import RequestOptions, resolve_api_base, resolve_api_key, resolve_timeout
from .version import VERSION

USER_AGENT = f"hearth-python/{VERSION}"
#: Redirects followed before the redirect itself is raised (urllib's limit too).
MAX_REDIRECTS = 10


def as_object(answer: Any) -> HearthObject:
    """A JSON answer that must be an object, as a :class:`HearthObject`."""
    if not isinstance(answer, dict):
        raise APIError("The server answered with JSON that is not an object.")
    return HearthObject(answer)


class Call(NamedTuple):
    """One API call: where, what to send, and how to read the answer."""

    method: str
    path: str
    options: RequestOptions
    body: Optional[Mapping[str, Any]] = None
    query: Optional[Mapping[str, Any]] = None
    #: A body sent as it is, with its content type (multipart forms).
    raw: Optional[Tuple[bytes, str]] = None
    stream: bool = False
    last_event_id: Optional[str] = None


class PreparedRequest(NamedTuple):
    method: str
    url: str
    headers: Dict[str, str]
    data: Optional[bytes]
    timeout: Optional[float]


def prepare(call: Call) -> PreparedRequest:
    """The bytes and headers of ``call``; a missing key or a bad base URL raises before anything is sent."""
    url = resolve_api_base(call.options.api_base) + call.path
    if call.query:
        url += "?" + urllib.parse.urlencode({k: v for k, v in call.query.items() if v is not None})
    headers: Dict[str, str] = {
        "Authorization": f"Bearer {resolve_api_key(call.options.api_key)}",
        "Accept": "text/event-stream" if call.stream else "application/json",
        "User-Agent": USER_AGENT,
    }
    if call.last_event_id is not None:
        headers["Last-Event-ID"] = call.last_event_id
    data: Optional[bytes] = None
    if call.body is not None:
        data = json.dumps(call.body, ensure_ascii=False).encode("utf-8")
        headers["Content-Type"] = "application/json"
    elif call.raw is not None:
        data, headers["Content-Type"] = call.raw
    return PreparedRequest(call.method, url, headers, data, resolve_timeout(call.options.request_timeout))


def answer_json(status: int, headers: Mapping[str, str], raw: bytes) -> Any:
    """The parsed body of a JSON answer with a success status."""
    try:
        parsed = json.loads(raw.decode("utf-8")) if raw else {}
    except ValueError:
        raise APIError(
            f"The server answered {status} with a body that is not JSON.",
            http_status=status,
            http_body=raw.decode("utf-8", "replace"),
            headers=headers,
        ) from None
    return parsed


def answer_error(status: int, headers: Mapping[str, str], raw: bytes) -> HearthError:
    """The error for an answer with an error status."""
    return error_from_status(status, raw.decode("utf-8", "replace"), headers)


def is_event_stream(headers: Mapping[str, str]) -> bool:
    return _header(headers, "content-type").startswith("text/event-stream")


def not_a_stream(status: int, headers: Mapping[str, str], raw: bytes) -> APIError:
    """The error for a success that should have been a stream and is not."""
    content_type = _header(headers, "content-type")
    return APIError(
        f"Asked for a stream, the server answered {content_type or 'no content type'}.",
        http_status=status,
        http_body=raw.decode("utf-8", "replace"),
    )


def _header(headers: Mapping[str, str], name: str) -> str:
    return next((v for k, v in headers.items() if k.lower() == name), "")


def origin(url: str) -> Tuple[str, str, Optional[int]]:
    """Scheme, host and port: the API key is only sent where it was meant to go."""
    parts = urllib.parse.urlsplit(url)
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or "").lower(), parts.port or {"http": 80, "https": 443}.get(scheme)


def redirected(request: PreparedRequest, status: int, location: Optional[str]) -> Optional[PreparedRequest]:
    """The request to send after a redirect, as urllib would make it; None: the redirect is not followed.

    GET and HEAD follow 301, 302, 303, 307 and 308; a POST follows 301, 302 and 303 as a GET
    without a body. A redirect to another origin loses the Authorization header.
    """
    if location is None or status not in (301, 302, 303, 307, 308):
        return None
    if request.method in ("GET", "HEAD"):
        method, data = request.method, request.data
    elif request.method == "POST" and status in (301, 302, 303):
        method, data = "GET", None
    else:
        return None
    url = urllib.parse.urljoin(request.url, location)
    headers = dict(request.headers)
    if data is None:
        headers.pop("Content-Type", None)
    if origin(url) != origin(request.url):
        headers.pop("Authorization", None)
    return PreparedRequest(method, url, headers, data, request.timeout)
