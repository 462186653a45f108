"""Errors raised by the Hearth client.

Every error is a :class:`HearthError`. An answer with an error status becomes the class of
its status, carrying the server's ``message``, ``code``, ``param`` and ``type``:

=======  ==========================================================================
status   class
=======  ==========================================================================
400      :class:`InvalidRequestError`
401      :class:`AuthenticationError`
403      :class:`PermissionError`
404      :class:`NotFoundError`
408      :class:`InvalidRequestError` (``code == "request_timeout"``)
409      :class:`ConflictError` (a subclass of :class:`APIError`)
413      :class:`InvalidRequestError` (``code == "payload_too_large"``)
431      :class:`InvalidRequestError` (``code == "request_header_fields_too_large"``)
429      :class:`RateLimitError` (``code`` is ``rate_limited`` or ``quota_exceeded``)
503      :class:`ServiceUnavailableError`
other    :class:`APIError`
=======  ==========================================================================

An error the server reports inside a stream (a ``data: {"error": …}`` event) raises the same
classes, chosen by its ``code``. Failing to reach the server raises
:class:`APIConnectionError`, and running out of time :class:`Timeout`.
"""

from __future__ import annotations

import builtins
import json
from typing import Any, Dict, Mapping, Optional, Type

__all__ = [
    "HearthError",
    "APIError",
    "APIConnectionError",
    "Timeout",
    "InvalidRequestError",
    "AuthenticationError",
    "PermissionError",
    "NotFoundError",
    "ConflictError",
    "RateLimitError",
    "ServiceUnavailableError",
    "error_from_status",
    "error_from_body",
]


class HearthError(Exception):
    """Base class of every error of this client."""

    def __init__(
        self,
        message: str,
        *,
        http_status: Optional[int] = None,
        code: Optional[str] = None,
        param: Optional[str] = None,
        type: Optional[str] = None,
        http_body: Optional[str] = None,
        headers: Optional[Mapping[str, str]] = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.http_status = http_status
        self.code = code
        self.param = param
        self.type = type
        self.http_body = http_body
        self.headers: Dict[str, str] = dict(headers or {})

    @property
    def json_body(self) -> Optional[Any]:
        """The answer's body parsed as JSON, or None."""
        if self.http_body is None:
            return None
        try:
            return json.loads(self.http_body)
        except ValueError:
            return None

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return (
            f"{builtins.type(self).__name__}(message={self.message!r}, http_status={self.http_status!r}, "
            f"code={self.code!r}, param={self.param!r})"
        )


class APIError(HearthError):
    """An error status without a class of its own (500, 502, …), or an answer that makes no sense."""


class APIConnectionError(HearthError):
    """The server could not be reached, or the connection broke."""


class Timeout(APIConnectionError):
    """The server did not answer (or send the next piece of a stream) within ``request_timeout``;
    or a batch did not end within ``Batch.wait``'s ``timeout``."""


class InvalidRequestError(HearthError):
    """400 (a missing or invalid field, named by ``param``), 408 (a body too slow), 413 (a body too large),
    431 (headers too large)."""


class AuthenticationError(HearthError):
    """401: no API key, or an unknown or revoked one."""


class PermissionError(HearthError):  # noqa: A001 - the name the classic clients use
    """403: the key may not do this."""


class NotFoundError(HearthError):
    """404: the model or account does not exist, the key may not use it, or an adapter is not deployed."""


class ConflictError(APIError):
    """409: the request conflicts with the model's state (an ID taken, files of a READY model, …)."""


class RateLimitError(HearthError):
    """429: too many requests wait for the model (``rate_limited``), or a quota is reached (``quota_exceeded``)."""


class ServiceUnavailableError(HearthError):
    """503: no worker took the request in time, or Redis or the database is down."""


_by_status: Dict[int, Type[HearthError]] = {
    400: InvalidRequestError,
    401: AuthenticationError,
    403: PermissionError,
    404: NotFoundError,
    408: InvalidRequestError,
    409: ConflictError,
    413: InvalidRequestError,
    431: InvalidRequestError,
    429: RateLimitError,
    503: ServiceUnavailableError,
}

# The server's error codes and the statuses they stand for (docs/api.md, "Errors").
_status_by_code: Dict[str, int] = {
    "invalid_request": 400,
    "context_length_exceeded": 400,
    "unauthorized": 401,
    "forbidden": 403,
    "not_found": 404,
    "conflict": 409,
    "request_timeout": 408,
    "payload_too_large": 413,
    "request_header_fields_too_large": 431,
    "rate_limited": 429,
    "quota_exceeded": 429,
    "internal": 500,
    "model_error": 500,
    "unavailable": 503,
}


def error_from_status(
    status: int,
    body: Optional[str],
    headers: Optional[Mapping[str, str]] = None,
) -> HearthError:
    """The error for an HTTP answer with an error status and this body."""
    fields = _error_fields(body)
    if fields is None:
        text = (body or "").strip()
        message = f"HTTP {status}" + (f": {text[:500]}" if text else "")
        fields = {"message": message}
    cls = _by_status.get(status, APIError)
    return _build(cls, fields, status, body, headers)


def error_from_body(payload: Mapping[str, Any], raw: Optional[str] = None) -> HearthError:
    """The error for ``{"error": {...}}`` received inside a stream; its ``code`` picks the class."""
    fields = payload.get("error")
    if not isinstance(fields, Mapping):
        fields = {"message": str(fields)}
    status = _status_by_code.get(str(fields.get("code")), 500)
    cls = _by_status.get(status, APIError)
    return _build(cls, fields, status, raw, None)


def _error_fields(body: Optional[str]) -> Optional[Mapping[str, Any]]:
    if not body:
        return None
    try:
        parsed = json.loads(body)
    except ValueError:
        return None
    if isinstance(parsed, Mapping) and isinstance(parsed.get("error"), Mapping):
        fields: Mapping[str, Any] = parsed["error"]
        return fields
    return None


def _build(
    cls: Type[HearthError],
    fields: Mapping[str, Any],
    status: int,
    body: Optional[str],
    headers: Optional[Mapping[str, str]],
) -> HearthError:
    def text(name: str) -> Optional[str]:
        value = fields.get(name)
        return None if value is None else str(value)

    return cls(
        text("message") or f"HTTP {status}",
        http_status=status,
        code=text("code"),
        param=text("param"),
        type=text("type"),
        http_body=body,
        headers=headers,
    )
