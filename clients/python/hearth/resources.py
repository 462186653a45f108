"""The API's resources for the sync client: Completion, ChatCompletion, Stream, Embedding, Model and Image.

Each method builds its call with :mod:`hearth.endpoints` (or :mod:`hearth.images`) and sends it
with :mod:`hearth.api_requestor`; :mod:`hearth.async_resources` does the same with asyncio.
Every method also takes the settings of :class:`hearth.types.CallSettings` as keywords.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, List, Literal, Mapping, Optional, Sequence, Union, overload

from . import api_requestor, endpoints, images
from .api_requestor import ChunkStream
from .hearth_object import HearthObject
from .images import GeneratedImage, ImageInput
from .settings import RequestOptions
from .stream_progress import resume_call
from .types import CallSettings, ChatCompletionParams, ChatMessage, CompletionParams, EmbeddingInput, EmbeddingParams
from .types import Prompt

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["Completion", "ChatCompletion", "Stream", "Embedding", "Model", "Image", "GeneratedImage", "ChunkStream"]

Messages = Sequence[Union[ChatMessage, Mapping[str, Any]]]


class Completion:
    """``POST /v1/completions``. The answer's ``choices[i].text`` is the text, ``choices[i].logprobs``
    the legacy log probabilities (``tokens``, ``token_logprobs``, ``top_logprobs``, ``text_offset``)
    when ``logprobs`` was asked; a stream's chunks carry pieces of both (``choices[0].index`` says
    which choice). The fields are :class:`hearth.types.CompletionParams`.
    """

    @overload
    @classmethod
    def create(
        cls, *, model: str, prompt: Prompt, stream: Literal[False] = False, **params: Unpack[CompletionParams]
    ) -> HearthObject: ...
    @overload
    @classmethod
    def create(
        cls, *, model: str, prompt: Prompt, stream: Literal[True], **params: Unpack[CompletionParams]
    ) -> ChunkStream: ...
    @overload
    @classmethod
    def create(
        cls, *, model: str, prompt: Prompt, stream: bool, **params: Unpack[CompletionParams]
    ) -> Union[HearthObject, ChunkStream]: ...

    @classmethod
    def create(
        cls, *, model: str, prompt: Prompt, stream: bool = False, **params: Any
    ) -> Union[HearthObject, ChunkStream]:
        """Sends the request; every keyword that is not a setting goes into the JSON body as it is.

        ``stream=True`` returns an iterator of chunks (the request is already sent when this
        returns, so an error status raises here).
        """
        call = endpoints.generation("/completions", model, stream, {"prompt": prompt}, params)
        return api_requestor.stream(call) if stream else api_requestor.request(call)


class ChatCompletion:
    """``POST /v1/chat/completions``. The answer's ``choices[i].message`` has the reply's ``content``
    and, when the model called tools, ``tool_calls`` (``finish_reason == "tool_calls"``);
    ``choices[i].logprobs.content`` the tokens' log probabilities when ``logprobs`` was asked.
    A stream's chunks carry pieces in ``choices[0].delta`` (``content``, ``tool_calls`` fragments)
    and ``choices[0].logprobs``; :class:`hearth.stream_accumulator.StreamAccumulator` adds them up.
    The fields are :class:`hearth.types.ChatCompletionParams`.
    """

    @overload
    @classmethod
    def create(
        cls, *, model: str, messages: Messages, stream: Literal[False] = False, **params: Unpack[ChatCompletionParams]
    ) -> HearthObject: ...
    @overload
    @classmethod
    def create(
        cls, *, model: str, messages: Messages, stream: Literal[True], **params: Unpack[ChatCompletionParams]
    ) -> ChunkStream: ...
    @overload
    @classmethod
    def create(
        cls, *, model: str, messages: Messages, stream: bool, **params: Unpack[ChatCompletionParams]
    ) -> Union[HearthObject, ChunkStream]: ...

    @classmethod
    def create(
        cls, *, model: str, messages: Messages, stream: bool = False, **params: Any
    ) -> Union[HearthObject, ChunkStream]:
        """Sends the request, as :meth:`Completion.create` does."""
        call = endpoints.generation("/chat/completions", model, stream, {"messages": messages}, params)
        return api_requestor.stream(call) if stream else api_requestor.request(call)


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
        cls, request_id: str, last_event_id: Optional[str] = None, **settings: Unpack[CallSettings]
    ) -> ChunkStream:
        return api_requestor.stream(resume_call(request_id, last_event_id, RequestOptions(**settings)))


class Embedding:
    """``POST /v1/embeddings``: unit-length vectors, ``data[i].embedding`` for ``input[i]``.

    ``input`` is a text, a list of texts, one list of token IDs or a list of them.
    """

    @classmethod
    def create(cls, *, model: str, input: EmbeddingInput, **params: Unpack[EmbeddingParams]) -> HearthObject:
        """``params``: ``dimensions``, ``encoding_format`` (``"float"``, the default, or ``"base64"``)."""
        return api_requestor.request(endpoints.embedding(model, input, params))


class Model:
    """The models a key can use."""

    @classmethod
    def list(cls, **settings: Unpack[CallSettings]) -> HearthObject:
        """``GET /v1/models``: the public base models and the account's deployed adapters, in ``data``."""
        return api_requestor.request(endpoints.model_list(settings))

    @classmethod
    def retrieve(cls, name: str, **settings: Unpack[CallSettings]) -> HearthObject:
        """One model by its full name, ``accounts/<account>/models/<model>``, from the management API.

        The answer is the management API's model (``name``, ``kind``, ``baseModel``, ``state``,
        ``deployment``, ``files``, …; see docs/api.md), so it also finds adapters that are not
        deployed. A model the key may not see raises :class:`~hearth.error.NotFoundError`.
        """
        return api_requestor.request(endpoints.model_retrieve(name, settings))


class Image:
    """Image generation with an image model (kind ``image``), e.g. ``accounts/hearth/models/hearth-sketch``.

    Every method returns a list of :class:`GeneratedImage`; ``params`` are the API's fields as
    they are: ``negative_prompt``, ``width``, ``height``, ``cfg_scale``, ``steps``, ``seed``
    (0 draws one), ``samples`` (1-4), ``sampler``. Images to send may be bytes or a file path.
    """

    @classmethod
    def create(cls, *, model: str, prompt: str, **params: Any) -> List[GeneratedImage]:
        """Text to image."""
        return api_requestor.request(images.text_to_image(model, prompt, params), images.read_images)

    @classmethod
    def image_to_image(
        cls, *, model: str, prompt: str, init_image: ImageInput, image_strength: Optional[float] = None, **params: Any
    ) -> List[GeneratedImage]:
        """From a start image: ``image_strength`` (0-1) is how much of it stays; or pass
        ``init_image_mode="STEP_SCHEDULE"`` with ``step_schedule_start``."""
        call = images.image_to_image(model, prompt, init_image, image_strength, params)
        return api_requestor.request(call, images.read_images)

    @classmethod
    def control_net(
        cls,
        *,
        model: str,
        prompt: str,
        control_image: ImageInput,
        control_net_name: str = "canny",
        conditioning_scale: Optional[float] = None,
        **params: Any,
    ) -> List[GeneratedImage]:
        """With the structure of a control image (``control_net_name``: ``canny``)."""
        call = images.control_net(model, prompt, control_image, control_net_name, conditioning_scale, params)
        return api_requestor.request(call, images.read_images)
