"""The calls of the language-model endpoints, built once for both clients.

Each function turns a resource method's arguments into a :class:`~hearth.http_messages.Call`:
the keywords that are settings (``api_key``, ``api_base``, ``request_timeout``,
``max_retries``, ``max_retry_wait``) are taken out, and every other keyword goes into the
JSON body as it is, so a field this client does not know yet still reaches the server.
"""

from __future__ import annotations

from typing import Any, Dict, Mapping

from .http_messages import Call
from .images import model_parts
from .settings import RequestOptions


def generation(path: str, model: str, stream: bool, fields: Mapping[str, Any], params: Mapping[str, Any]) -> Call:
    """``POST /v1/completions`` or ``/v1/chat/completions``: ``fields`` are the call's named ones (prompt, messages)."""
    options, rest = RequestOptions.split(params)
    body: Dict[str, Any] = {"model": model, **fields, **rest}
    if stream:
        body["stream"] = True
    return Call("POST", path, options, body=body, stream=stream)


def embedding(model: str, input: Any, params: Mapping[str, Any]) -> Call:
    options, rest = RequestOptions.split(params)
    return Call("POST", "/embeddings", options, body={"model": model, "input": input, **rest})


def model_list(settings: Mapping[str, Any]) -> Call:
    return Call("GET", "/models", RequestOptions(**settings))


def model_retrieve(name: str, settings: Mapping[str, Any]) -> Call:
    account, model = model_parts(name, "name")
    return Call("GET", f"/accounts/{account}/models/{model}", RequestOptions(**settings))
