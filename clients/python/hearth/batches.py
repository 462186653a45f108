"""The files and batches endpoints' calls, shared by both clients (OpenAI's shapes).

A batch runs a file of requests (JSON lines of ``{custom_id, method, url, body}``) at a priority
below interactive requests; its answers and errors come back as files of the same kind.
"""

from __future__ import annotations

import os
import time
import urllib.parse
from typing import Any, Dict, Mapping, Optional, Tuple, Union

from . import multipart
from .error import Timeout
from .hearth_object import HearthObject
from .http_messages import Call
from .settings import RequestOptions

#: A file to upload: a path, its bytes (sent as ``input.jsonl``), or ``(file name, bytes)``.
FileInput = Union[str, "os.PathLike[str]", bytes, Tuple[str, bytes]]

#: The states a batch ends in: it changes no more after one of them.
ENDED_STATUSES = ("completed", "failed", "expired", "cancelled")


def has_ended(batch: Mapping[str, Any]) -> bool:
    """Whether the batch has ended (completed, failed, expired or cancelled)."""
    return batch.get("status") in ENDED_STATUSES


def file_create(file: FileInput, purpose: str, settings: Mapping[str, Any]) -> Call:
    """``POST /v1/files``: multipart, with ``purpose`` and the file."""
    filename, data = _file(file)
    body = multipart.encode({"purpose": purpose, "file": (filename, data, "application/jsonl")})
    return Call("POST", "/files", RequestOptions(**settings), raw=body)


def file_list(query: Mapping[str, Any], settings: Mapping[str, Any]) -> Call:
    return Call("GET", "/files", RequestOptions(**settings), query=query)


def file_retrieve(file_id: str, settings: Mapping[str, Any]) -> Call:
    return Call("GET", _path("/files", file_id), RequestOptions(**settings))


def file_content(file_id: str, settings: Mapping[str, Any]) -> Call:
    return Call("GET", _path("/files", file_id) + "/content", RequestOptions(**settings))


def file_delete(file_id: str, settings: Mapping[str, Any]) -> Call:
    return Call("DELETE", _path("/files", file_id), RequestOptions(**settings))


def batch_create(
    input_file_id: str,
    endpoint: str,
    completion_window: str,
    metadata: Optional[Mapping[str, str]],
    settings: Mapping[str, Any],
) -> Call:
    body: Dict[str, Any] = {"input_file_id": input_file_id, "endpoint": endpoint, "completion_window": completion_window}
    if metadata is not None:
        body["metadata"] = dict(metadata)
    return Call("POST", "/batches", RequestOptions(**settings), body=body)


def batch_list(query: Mapping[str, Any], settings: Mapping[str, Any]) -> Call:
    return Call("GET", "/batches", RequestOptions(**settings), query=query)


def batch_retrieve(batch_id: str, settings: Mapping[str, Any]) -> Call:
    return Call("GET", _path("/batches", batch_id), RequestOptions(**settings))


def batch_cancel(batch_id: str, settings: Mapping[str, Any]) -> Call:
    return Call("POST", _path("/batches", batch_id) + "/cancel", RequestOptions(**settings))


class WaitClock:
    """When :meth:`Batch.wait` looks again, and when it gives up (``timeout`` None: never)."""

    def __init__(self, poll_interval: float, timeout: Optional[float]) -> None:
        if poll_interval <= 0:
            raise ValueError("poll_interval must be more than 0 seconds.")
        self.poll_interval = poll_interval
        self.timeout = timeout
        self._deadline = None if timeout is None else time.monotonic() + timeout

    def next_wait(self, batch: HearthObject) -> float:
        """Seconds to sleep before the next look; raises :class:`~hearth.error.Timeout` once ``timeout`` has run out."""
        if self._deadline is None:
            return self.poll_interval
        left = self._deadline - time.monotonic()
        if left <= 0:
            raise Timeout(f"Batch {batch.get('id')} is still {batch.get('status')} after {self.timeout} s.")
        return min(self.poll_interval, left)


def _file(file: FileInput) -> Tuple[str, bytes]:
    if isinstance(file, tuple):
        return file[0], bytes(file[1])
    if isinstance(file, (bytes, bytearray)):
        return "input.jsonl", bytes(file)
    with open(file, "rb") as f:
        return os.path.basename(os.fspath(file)), f.read()


def _path(collection: str, resource_id: str) -> str:
    return f"{collection}/{urllib.parse.quote(resource_id, safe='')}"
