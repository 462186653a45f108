"""The client's settings: per call, else the module's (``hearth.client``), else the environment."""

from __future__ import annotations

import os
import urllib.parse
from typing import Any, Dict, Mapping, Optional, Tuple

from .error import AuthenticationError, InvalidRequestError

DEFAULT_API_BASE = "http://localhost:8080/v1"
API_KEY_VARIABLES = ("HEARTH_API_KEY", "SERVICE_API_KEY")
API_BASE_VARIABLE = "HEARTH_BASE_URL"
DEFAULT_MAX_RETRIES = 2
DEFAULT_MAX_RETRY_WAIT = 60.0

#: Where the module-level settings live (``hearth.client``). hearth.client registers itself here
#: when it is imported; nothing here imports it, so the two do not import each other.
_settings: Any = None


def use_settings(module: Any) -> None:
    """Reads the module-level settings from ``module`` at each call (hearth.client calls this)."""
    global _settings
    _settings = module


def _setting(name: str) -> Any:
    return getattr(_settings, name, None)


class RequestOptions:
    """What one call overrides (None: the module's setting, else the environment's, else the default)."""

    __slots__ = ("api_key", "api_base", "request_timeout", "max_retries", "max_retry_wait")

    #: The keywords of ``create`` and friends that are settings, not fields of the request body.
    NAMES = __slots__

    def __init__(
        self,
        api_key: Optional[str] = None,
        api_base: Optional[str] = None,
        request_timeout: Optional[float] = None,
        max_retries: Optional[int] = None,
        max_retry_wait: Optional[float] = None,
    ) -> None:
        self.api_key = api_key
        self.api_base = api_base
        self.request_timeout = request_timeout
        self.max_retries = max_retries
        self.max_retry_wait = max_retry_wait

    @classmethod
    def split(cls, params: Mapping[str, Any]) -> Tuple["RequestOptions", Dict[str, Any]]:
        """The settings among ``params``, and the rest: the request's fields, passed on as they are."""
        options = cls(**{name: params[name] for name in cls.NAMES if name in params})
        return options, {name: value for name, value in params.items() if name not in cls.NAMES}


def resolve_api_key(explicit: Optional[str] = None) -> str:
    """The call's key, else ``hearth.client.api_key``, else $HEARTH_API_KEY, else $SERVICE_API_KEY."""
    for candidate in (explicit, _setting("api_key"), *(os.environ.get(name) for name in API_KEY_VARIABLES)):
        if candidate:
            return str(candidate)
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


def resolve_max_retries(explicit: Optional[int] = None) -> int:
    for candidate in (explicit, _setting("max_retries")):
        if candidate is not None:
            return max(0, int(candidate))
    return DEFAULT_MAX_RETRIES


def resolve_max_retry_wait(explicit: Optional[float] = None) -> float:
    for candidate in (explicit, _setting("max_retry_wait")):
        if candidate is not None:
            return max(0.0, float(candidate))
    return DEFAULT_MAX_RETRY_WAIT
