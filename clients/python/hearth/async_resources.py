"""The API's resources for the async client: the same calls as :mod:`hearth.resources`, awaited.

Each method builds its call with :mod:`hearth.endpoints` (or :mod:`hearth.images`), exactly as
the sync resource of the same name does, and sends it with :mod:`hearth.async_requestor`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, List, Literal, Optional, Union, overload

from . import async_requestor, endpoints, images
from .async_requestor import AsyncChunkStream
from .hearth_object import HearthObject
from .images import GeneratedImage, ImageInput
from .resources import Messages
from .settings import RequestOptions
from .stream_progress import resume_call
from .types import CallSettings, ChatCompletionParams, CompletionParams, EmbeddingInput, EmbeddingParams, Prompt

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = [
    "AsyncCompletion",
    "AsyncChatCompletion",
    "AsyncStream",
    "AsyncEmbedding",
    "AsyncModel",
    "AsyncImage",
    "AsyncChunkStream",
]


class AsyncCompletion:
    """``POST /v1/completions``, awaited: see :class:`hearth.resources.Completion`.

    With ``stream=True`` the awaited value is an async iterator of chunks: ``async for chunk in …``.
    """

    @overload
    @classmethod
    async def create(
        cls, *, model: str, prompt: Prompt, stream: Literal[False] = False, **params: Unpack[CompletionParams]
    ) -> HearthObject: ...
    @overload
    @classmethod
    async def create(
        cls, *, model: str, prompt: Prompt, stream: Literal[True], **params: Unpack[CompletionParams]
    ) -> AsyncChunkStream: ...
    @overload
    @classmethod
    async def create(
        cls, *, model: str, prompt: Prompt, stream: bool, **params: Unpack[CompletionParams]
    ) -> Union[HearthObject, AsyncChunkStream]: ...

    @classmethod
    async def create(
        cls, *, model: str, prompt: Prompt, stream: bool = False, **params: Any
    ) -> Union[HearthObject, AsyncChunkStream]:
        call = endpoints.generation("/completions", model, stream, {"prompt": prompt}, params)
        return await async_requestor.stream(call) if stream else await async_requestor.request(call)


class AsyncChatCompletion:
    """``POST /v1/chat/completions``, awaited: see :class:`hearth.resources.ChatCompletion`."""

    @overload
    @classmethod
    async def create(
        cls, *, model: str, messages: Messages, stream: Literal[False] = False, **params: Unpack[ChatCompletionParams]
    ) -> HearthObject: ...
    @overload
    @classmethod
    async def create(
        cls, *, model: str, messages: Messages, stream: Literal[True], **params: Unpack[ChatCompletionParams]
    ) -> AsyncChunkStream: ...
    @overload
    @classmethod
    async def create(
        cls, *, model: str, messages: Messages, stream: bool, **params: Unpack[ChatCompletionParams]
    ) -> Union[HearthObject, AsyncChunkStream]: ...

    @classmethod
    async def create(
        cls, *, model: str, messages: Messages, stream: bool = False, **params: Any
    ) -> Union[HearthObject, AsyncChunkStream]:
        call = endpoints.generation("/chat/completions", model, stream, {"messages": messages}, params)
        return await async_requestor.stream(call) if stream else await async_requestor.request(call)


class AsyncStream:
    """``GET /v1/streams/{request_id}``, awaited: see :class:`hearth.resources.Stream`."""

    @classmethod
    async def resume(
        cls, request_id: str, last_event_id: Optional[str] = None, **settings: Unpack[CallSettings]
    ) -> AsyncChunkStream:
        return await async_requestor.stream(resume_call(request_id, last_event_id, RequestOptions(**settings)))


class AsyncEmbedding:
    """``POST /v1/embeddings``, awaited: see :class:`hearth.resources.Embedding`."""

    @classmethod
    async def create(cls, *, model: str, input: EmbeddingInput, **params: Unpack[EmbeddingParams]) -> HearthObject:
        return await async_requestor.request(endpoints.embedding(model, input, params))


class AsyncModel:
    """``GET /v1/models`` and the management API's model, awaited: see :class:`hearth.resources.Model`."""

    @classmethod
    async def list(cls, **settings: Unpack[CallSettings]) -> HearthObject:
        return await async_requestor.request(endpoints.model_list(settings))

    @classmethod
    async def retrieve(cls, name: str, **settings: Unpack[CallSettings]) -> HearthObject:
        return await async_requestor.request(endpoints.model_retrieve(name, settings))


class AsyncImage:
    """Image generation, awaited: see :class:`hearth.resources.Image`."""

    @classmethod
    async def create(cls, *, model: str, prompt: str, **params: Any) -> List[GeneratedImage]:
        return await async_requestor.request(images.text_to_image(model, prompt, params), images.read_images)

    @classmethod
    async def image_to_image(
        cls, *, model: str, prompt: str, init_image: ImageInput, image_strength: Optional[float] = None, **params: Any
    ) -> List[GeneratedImage]:
        return await async_requestor.request(
            images.image_to_image(model, prompt, init_image, image_strength, params), images.read_images
        )

    @classmethod
    async def control_net(
        cls,
        *,
        model: str,
        prompt: str,
        control_image: ImageInput,
        control_net_name: str = "canny",
        conditioning_scale: Optional[float] = None,
        **params: Any,
    ) -> List[GeneratedImage]:
        call = images.control_net(model, prompt, control_image, control_net_name, conditioning_scale, params)
        return await async_requestor.request(call, images.read_images)
