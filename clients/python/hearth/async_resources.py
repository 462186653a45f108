"""The API's resources for the async client: the same calls as :mod:`hearth.resources`, awaited.

Each method builds its call with :mod:`hearth.endpoints` (or :mod:`hearth.images`), exactly as
the sync resource of the same name does, and sends it with :mod:`hearth.async_requestor`.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Callable, List, Literal, Mapping, Optional, Union, overload

from . import async_requestor, batches, endpoints, images
from .async_requestor import AsyncChunkStream
from .batches import FileInput
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
    "AsyncFile",
    "AsyncBatch",
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


class AsyncFile:
    """The files API, awaited: see :class:`hearth.resources.File`."""

    @classmethod
    async def create(cls, *, file: FileInput, purpose: str = "batch", **settings: Unpack[CallSettings]) -> HearthObject:
        return await async_requestor.request(batches.file_create(file, purpose, settings))

    @classmethod
    async def list(
        cls,
        *,
        limit: Optional[int] = None,
        after: Optional[str] = None,
        purpose: Optional[str] = None,
        **settings: Unpack[CallSettings],
    ) -> HearthObject:
        query = {"limit": limit, "after": after, "purpose": purpose}
        return await async_requestor.request(batches.file_list(query, settings))

    @classmethod
    async def retrieve(cls, file_id: str, **settings: Unpack[CallSettings]) -> HearthObject:
        return await async_requestor.request(batches.file_retrieve(file_id, settings))

    @classmethod
    async def content(cls, file_id: str, **settings: Unpack[CallSettings]) -> bytes:
        return await async_requestor.content(batches.file_content(file_id, settings))

    @classmethod
    async def delete(cls, file_id: str, **settings: Unpack[CallSettings]) -> HearthObject:
        return await async_requestor.request(batches.file_delete(file_id, settings))


class AsyncBatch:
    """The batches API, awaited: see :class:`hearth.resources.Batch`."""

    @classmethod
    async def create(
        cls,
        *,
        input_file_id: str,
        endpoint: str,
        completion_window: str = "24h",
        metadata: Optional[Mapping[str, str]] = None,
        **settings: Unpack[CallSettings],
    ) -> HearthObject:
        call = batches.batch_create(input_file_id, endpoint, completion_window, metadata, settings)
        return await async_requestor.request(call)

    @classmethod
    async def retrieve(cls, batch_id: str, **settings: Unpack[CallSettings]) -> HearthObject:
        return await async_requestor.request(batches.batch_retrieve(batch_id, settings))

    @classmethod
    async def list(
        cls, *, limit: Optional[int] = None, after: Optional[str] = None, **settings: Unpack[CallSettings]
    ) -> HearthObject:
        return await async_requestor.request(batches.batch_list({"limit": limit, "after": after}, settings))

    @classmethod
    async def cancel(cls, batch_id: str, **settings: Unpack[CallSettings]) -> HearthObject:
        return await async_requestor.request(batches.batch_cancel(batch_id, settings))

    @classmethod
    async def wait(
        cls,
        batch_id: str,
        *,
        poll_interval: float = 1.0,
        timeout: Optional[float] = None,
        on_update: Optional[Callable[[HearthObject], None]] = None,
        **settings: Unpack[CallSettings],
    ) -> HearthObject:
        """Retrieves the batch until it has ended, as :meth:`hearth.resources.Batch.wait` does."""
        clock = batches.WaitClock(poll_interval, timeout)
        while True:
            batch = await cls.retrieve(batch_id, **settings)
            if on_update is not None:
                on_update(batch)
            if batches.has_ended(batch):
                return batch
            await asyncio.sleep(clock.next_wait(batch))
