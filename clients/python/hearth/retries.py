"""When to send a refused request again: on 429 and 503, after the server's Retry-After.

Both clients ask :func:`retry_delay` after each refusal; only their way of sleeping differs.
A refusal is retried when its status is 429 or 503 (not a 429 ``quota_exceeded``: a quota
does not free itself), at most ``max_retries`` times, and never sooner than the server's
``Retry-After`` (seconds, or an HTTP date). A ``Retry-After`` longer than ``max_retry_wait``
is not waited for: the error is raised at once, its headers with it. Without ``Retry-After``
the waits grow exponentially from :data:`INITIAL_BACKOFF` (half of each wait drawn at random,
so that many clients refused at once do not come back at once), up to :data:`MAX_BACKOFF`
and ``max_retry_wait``.

Only the opening of a request is retried: a stream that has begun is never sent again (a
broken one is resumed instead, see :mod:`hearth.stream_progress`).
"""

from __future__ import annotations

import email.utils
import random
import time
from typing import Mapping, Optional

from .error import HearthError
from .settings import RequestOptions, resolve_max_retries, resolve_max_retry_wait

RETRIED_STATUSES = (429, 503)
#: Codes of those statuses that waiting does not cure.
NOT_RETRIED_CODES = ("quota_exceeded",)
#: Seconds before the first retry without Retry-After, doubled for each retry after it.
INITIAL_BACKOFF = 0.5
#: The longest wait without Retry-After.
MAX_BACKOFF = 8.0


def retry_delay(error: HearthError, retries_done: int, options: RequestOptions) -> Optional[float]:
    """Seconds to wait before sending the request again, or None: raise ``error``."""
    if error.http_status not in RETRIED_STATUSES or error.code in NOT_RETRIED_CODES:
        return None
    if retries_done >= resolve_max_retries(options.max_retries):
        return None
    cap = resolve_max_retry_wait(options.max_retry_wait)
    asked = retry_after(error.headers)
    if asked is not None:
        return asked if asked <= cap else None
    backoff = min(MAX_BACKOFF, INITIAL_BACKOFF * 2.0**retries_done)
    return min(cap, backoff * (0.5 + random.random() / 2))


def retry_after(headers: Mapping[str, str], now: Optional[float] = None) -> Optional[float]:
    """The wait a ``Retry-After`` header asks for, in seconds (0 for a date past); None without a readable one."""
    value = next((v for k, v in headers.items() if k.lower() == "retry-after"), None)
    if value is None:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None or when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))
