"""The API's resources: Completion, ChatCompletion, Embedding and Model."""

from __future__ import annotations

import re
import urllib.parse
from typing import Any, List, Literal, Optional, Union, overload

from . import api_requestor
from .api_requestor import ChunkStream, RequestOptions
from .error import InvalidRequestError
from .hearth_object import HearthObject

_MODEL_NAME = re.compile(r"^accounts/([^/]+)/models/([^/]+)$")


class _Generation:
    """A POST that answers at once, or with ``stream=True`` a stream of chunks."""

    path = ""

    @overload
    @classmethod
    def create(
        cls,
        *,
        model: str,
        stream: Literal[False] = False,
        api_key: Optional[str] = None,
        api_base: Optional[str] = None,
        request_timeout: Optional[float] = None,
        **params: Any,
    ) -> HearthObject: ...

    @overload
    @classmethod
    def create(
        cls,
        *,
        model: str,
        stream: Literal[True],
        api_key: Optional[str] = None,
        api_base: Optional[str] = None,
        request_timeout: Optional[float] = None,
        **params: Any,
    ) -> ChunkStream: ...

    @overload
    @classmethod
    def create(
        cls,
        *,
        model: str,
        stream: bool,
        api_key: Optional[str] = None,
        api_base: Optional[str] = None,
        request_timeout: Optional[float] = None,
        **params: Any,
    ) -> Union[HearthObject, ChunkStream]: ...

    @classmethod
    def create(
        cls,
        *,
        model: str,
        stream: bool = False,
        api_key: Optional[str] = None,
        api_base: Optional[str] = None,
        request_timeout: Optional[float] = None,
        **params: Any,
    ) -> Union[HearthObject, ChunkStream]:
        """Sends the request. Every keyword but the four below goes into the JSON body as it is.

        ``stream=True`` returns an iterator of chunks (the HTTP request is already sent when
        this returns, so an error status raises here); ``api_key``, ``api_base`` and
        ``request_timeout`` override the module's settings for this call.
        """
        options = RequestOptions(api_key, api_base, request_timeout)
        body = {"model": model, **params}
        if stream:
            body["stream"] = True
            return api_requestor.stream("POST", cls.path, options, body=body)
        return api_requestor.request("POST", cls.path, options, body=body)


class Completion(_Generation):
    """``POST /v1/completions``: ``prompt`` (a string or a list of strings), ``max_tokens``,
    ``temperature``, ``top_p``, ``top_k``, ``seed``, ``stop``, ``n``, penalties, ``stream_options``.

    The answer's ``choices[i].text`` is the text; a stream's chunks carry pieces of it in
    ``choices[0].text`` (``choices[0].index`` says which choice).
    """

    path = "/completions"


class ChatCompletion(_Generation):
    """``POST /v1/chat/completions``: ``messages`` (``[{"role": …, "content": …}]``) and the same
    sampling fields, ``max_completion_tokens`` or ``max_tokens``.

    The answer's ``choices[i].message.content`` is the reply; a stream's chunks carry pieces of
    it in ``choices[0].delta.content``, the first one with ``delta.role == "assistant"``.
    """

    path = "/chat/completions"


class Embedding:
    """``POST /v1/embeddings``: unit-length vectors, ``data[i].embedding`` for ``input[i]``."""

    @classmethod
    def create(
        cls,
        *,
        model: str,
        input: Union[str, List[str]],
        api_key: Optional[str] = None,
        api_base: Optional[str] = None,
        request_timeout: Optional[float] = None,
        **params: Any,
    ) -> HearthObject:
        """``params``: ``dimensions``, ``encoding_format`` (``"float"``, the default, or ``"base64"``)."""
        options = RequestOptions(api_key, api_base, request_timeout)
        return api_requestor.request("POST", "/embeddings", options, body={"model": model, "input": input, **params})


class Model:
    """The models a key can use."""

    @classmethod
    def list(
        cls,
        *,
        api_key: Optional[str] = None,
        api_base: Optional[str] = None,
        request_timeout: Optional[float] = None,
    ) -> HearthObject:
        """``GET /v1/models``: the public base models and the account's deployed adapters, in ``data``."""
        options = RequestOptions(api_key, api_base, request_timeout)
        return api_requestor.request("GET", "/models", options)

    @classmethod
    def retrieve(
        cls,
        name: str,
        *,
        api_key: Optional[str] = None,
        api_base: Optional[str] = None,
        request_timeout: Optional[float] = None,
    ) -> HearthObject:
        """One model by its full name, ``accounts/<account>/models/<model>``, from the management API.

        The answer is the management API's model (``name``, ``kind``, ``baseModel``, ``state``,
        ``deployment``, ``files``, …; see docs/api.md), so it also finds adapters that are not
        deployed. A model the key may not see raises :class:`~hearth.error.NotFoundError`.
        """
        match = _MODEL_NAME.match(name)
        if match is None:
            raise InvalidRequestError(
                f"A model name is accounts/<account>/models/<model>, not {name!r}.", param="name"
            )
        account, model = (urllib.parse.quote(part, safe="") for part in match.groups())
        options = RequestOptions(api_key, api_base, request_timeout)
        return api_requestor.request("GET", f"/accounts/{account}/models/{model}", options)
