"""The API's resources: Completion, ChatCompletion, Stream, Embedding, Model and Image."""

from __future__ import annotations

import base64
import json
import os
import re
import urllib.parse
from typing import Any, Dict, List, Literal, Optional, Union, overload

from . import api_requestor, multipart
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


class Stream:
    """``GET /v1/streams/{request_id}``: a streamed completion or chat completion, picked up again.

    A stream's ``request_id`` and ``last_event_id`` (attributes of what ``create(..., stream=True)``
    returned) are all it takes, on any Hearth API process, for a few minutes after its last
    event: the chunks after that event arrive, then the live rest, with no gap and none twice.
    Without ``last_event_id``, the whole stream again. Streams resume by themselves when their
    connection breaks; this is for a program that was itself restarted.
    """

    @classmethod
    def resume(
        cls,
        request_id: str,
        last_event_id: Optional[str] = None,
        *,
        api_key: Optional[str] = None,
        api_base: Optional[str] = None,
        request_timeout: Optional[float] = None,
    ) -> ChunkStream:
        options = RequestOptions(api_key, api_base, request_timeout)
        path = f"/streams/{urllib.parse.quote(request_id, safe='')}"
        return api_requestor.stream("GET", path, options, last_event_id=last_event_id)


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


class GeneratedImage:
    """One image an image model made: its PNG bytes, the seed it was made with, and why it ended."""

    def __init__(self, png: bytes, seed: int, finish_reason: str) -> None:
        self.png = png
        self.seed = seed
        self.finish_reason = finish_reason

    def save(self, path: str) -> None:
        """Writes the PNG to ``path``."""
        with open(path, "wb") as f:
            f.write(self.png)

    def __repr__(self) -> str:
        return f"GeneratedImage(seed={self.seed}, finish_reason={self.finish_reason!r}, {len(self.png)} bytes)"


ImageInput = Union[bytes, str]


class Image:
    """Image generation with an image model (kind ``image``), e.g. ``accounts/hearth/models/hearth-sketch``.

    Every method returns a list of :class:`GeneratedImage`; ``params`` are the API's fields as
    they are: ``negative_prompt``, ``width``, ``height``, ``cfg_scale``, ``steps``, ``seed``
    (0 draws one), ``samples`` (1-4), ``sampler``. Images to send may be bytes or a file path.
    """

    @classmethod
    def create(
        cls,
        *,
        model: str,
        prompt: str,
        api_key: Optional[str] = None,
        api_base: Optional[str] = None,
        request_timeout: Optional[float] = None,
        **params: Any,
    ) -> List[GeneratedImage]:
        """Text to image."""
        options = RequestOptions(api_key, api_base, request_timeout)
        path = _image_path(model, "")
        data = json.dumps({"prompt": prompt, **params}).encode("utf-8")
        return _images(api_requestor.request_raw(path, options, data, "application/json"))

    @classmethod
    def image_to_image(
        cls,
        *,
        model: str,
        prompt: str,
        init_image: ImageInput,
        image_strength: Optional[float] = None,
        api_key: Optional[str] = None,
        api_base: Optional[str] = None,
        request_timeout: Optional[float] = None,
        **params: Any,
    ) -> List[GeneratedImage]:
        """From a start image: ``image_strength`` (0-1) is how much of it stays; or pass
        ``init_image_mode="STEP_SCHEDULE"`` with ``step_schedule_start``."""
        fields: Dict[str, multipart.Field] = {"prompt": prompt, "init_image": _file(init_image, "init")}
        if image_strength is not None:
            fields["image_strength"] = str(image_strength)
        return cls._form(model, "/image_to_image", fields, params, RequestOptions(api_key, api_base, request_timeout))

    @classmethod
    def control_net(
        cls,
        *,
        model: str,
        prompt: str,
        control_image: ImageInput,
        control_net_name: str = "canny",
        conditioning_scale: Optional[float] = None,
        api_key: Optional[str] = None,
        api_base: Optional[str] = None,
        request_timeout: Optional[float] = None,
        **params: Any,
    ) -> List[GeneratedImage]:
        """With the structure of a control image (``control_net_name``: ``canny``)."""
        fields: Dict[str, multipart.Field] = {
            "prompt": prompt,
            "control_image": _file(control_image, "control"),
            "control_net_name": control_net_name,
        }
        if conditioning_scale is not None:
            fields["conditioning_scale"] = str(conditioning_scale)
        return cls._form(model, "/control_net", fields, params, RequestOptions(api_key, api_base, request_timeout))

    @classmethod
    def _form(
        cls, model: str, suffix: str, fields: Dict[str, multipart.Field], params: Dict[str, Any], options: RequestOptions
    ) -> List[GeneratedImage]:
        for name, value in params.items():
            fields[name] = str(value).lower() if isinstance(value, bool) else str(value)
        data, content_type = multipart.encode(fields)
        return _images(api_requestor.request_raw(_image_path(model, suffix), options, data, content_type))


def _image_path(model: str, suffix: str) -> str:
    match = _MODEL_NAME.match(model)
    if match is None:
        raise InvalidRequestError(f"A model name is accounts/<account>/models/<model>, not {model!r}.", param="model")
    account, name = (urllib.parse.quote(part, safe="") for part in match.groups())
    return f"/image_generation/accounts/{account}/models/{name}{suffix}"


def _file(image: ImageInput, name: str) -> multipart.Field:
    if isinstance(image, (bytes, bytearray)):
        return (f"{name}.png", bytes(image), "application/octet-stream")
    with open(image, "rb") as f:
        return (os.path.basename(image), f.read(), "application/octet-stream")


def _images(answer: Any) -> List[GeneratedImage]:
    if not isinstance(answer, list):
        raise InvalidRequestError("The server's answer is not a list of images.")
    return [
        GeneratedImage(base64.b64decode(item["base64"]), int(item["seed"]), str(item["finishReason"]))
        for item in answer
    ]
