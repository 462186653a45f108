"""The API's resources for the sync client: Completion, ChatCompletion, Stream, Embedding, Model,
Image, File and Batch.

Each method builds its call with :mod:`hearth.endpoints` (or :mod:`hearth.images`, :mod:`hearth.batches`) and sends it
with :mod:`hearth.api_requestor`; :mod:`hearth.async_resources` does the same with asyncio.
Every method also takes the settings of :class:`hearth.types.CallSettings` as keywords.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Callable, List, Literal, Mapping, Optional, Sequence, Union, overload

from . import api_requestor, batches, endpoints, images
from .api_requestor import ChunkStream
from .batches import FileInput
from .hearth_object import HearthObject
from .images import GeneratedImage, ImageInput
from .settings import RequestOptions
from .stream_progress import resume_call
from .types import CallSettings, ChatCompletionParams, ChatMessage, CompletionParams, EmbeddingInput, EmbeddingParams
from .types import Prompt

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = [
    "Completion",
    "ChatCompletion",
    "Stream",
    "Embedding",
    "Model",
    "Image",
    "GeneratedImage",
    "File",
    "Batch",
    "ChunkStream",
]

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


class File:
    """The files API: a batch's input file, and the output and error files batches write (JSON lines)."""

    @classmethod
    def create(cls, *, file: FileInput, purpose: str = "batch", **settings: Unpack[CallSettings]) -> HearthObject:
        """``POST /v1/files``: uploads ``file`` (a path, bytes, or ``(file name, bytes)``), read whole into memory.

        The answer is the file object: ``id``, ``bytes``, ``filename``, ``purpose``, ``created_at``.
        """
        return api_requestor.request(batches.file_create(file, purpose, settings))

    @classmethod
    def list(
        cls,
        *,
        limit: Optional[int] = None,
        after: Optional[str] = None,
        purpose: Optional[str] = None,
        **settings: Unpack[CallSettings],
    ) -> HearthObject:
        """``GET /v1/files``: a page of the account's files, newest first, in ``data`` (``has_more``, ``last_id``)."""
        query = {"limit": limit, "after": after, "purpose": purpose}
        return api_requestor.request(batches.file_list(query, settings))

    @classmethod
    def retrieve(cls, file_id: str, **settings: Unpack[CallSettings]) -> HearthObject:
        return api_requestor.request(batches.file_retrieve(file_id, settings))

    @classmethod
    def content(cls, file_id: str, **settings: Unpack[CallSettings]) -> bytes:
        """``GET /v1/files/{file_id}/content``: the file as it is stored (JSON lines)."""
        return api_requestor.content(batches.file_content(file_id, settings))

    @classmethod
    def delete(cls, file_id: str, **settings: Unpack[CallSettings]) -> HearthObject:
        """Deletes a file; the input of a batch that has not ended raises :class:`~hearth.error.ConflictError`."""
        return api_requestor.request(batches.file_delete(file_id, settings))


class Batch:
    """The batches API: a file of requests run at a priority below interactive ones.

    A batch is ``validating``, then ``in_progress``, ``finalizing`` and ``completed``; or
    ``failed`` (its file refused: ``errors.data`` names the lines), ``expired`` (its window
    ran out) or ``cancelling`` then ``cancelled``. ``request_counts`` has ``total``,
    ``completed`` and ``failed``; ``output_file_id`` and ``error_file_id`` its results.
    """

    @classmethod
    def create(
        cls,
        *,
        input_file_id: str,
        endpoint: str,
        completion_window: str = "24h",
        metadata: Optional[Mapping[str, str]] = None,
        **settings: Unpack[CallSettings],
    ) -> HearthObject:
        """``POST /v1/batches``: ``endpoint`` is ``/v1/chat/completions``, ``/v1/completions`` or ``/v1/embeddings``."""
        call = batches.batch_create(input_file_id, endpoint, completion_window, metadata, settings)
        return api_requestor.request(call)

    @classmethod
    def retrieve(cls, batch_id: str, **settings: Unpack[CallSettings]) -> HearthObject:
        return api_requestor.request(batches.batch_retrieve(batch_id, settings))

    @classmethod
    def list(
        cls, *, limit: Optional[int] = None, after: Optional[str] = None, **settings: Unpack[CallSettings]
    ) -> HearthObject:
        """``GET /v1/batches``: a page of the account's batches, newest first, in ``data``."""
        return api_requestor.request(batches.batch_list({"limit": limit, "after": after}, settings))

    @classmethod
    def cancel(cls, batch_id: str, **settings: Unpack[CallSettings]) -> HearthObject:
        """Stops the batch (``cancelling``, then ``cancelled``); what ran stays in its files. An ended batch is returned as it is."""
        return api_requestor.request(batches.batch_cancel(batch_id, settings))

    @classmethod
    def wait(
        cls,
        batch_id: str,
        *,
        poll_interval: float = 1.0,
        timeout: Optional[float] = None,
        on_update: Optional[Callable[[HearthObject], None]] = None,
        **settings: Unpack[CallSettings],
    ) -> HearthObject:
        """Retrieves the batch every ``poll_interval`` seconds until it has ended, and returns it.

        ``on_update`` sees every answer (its ``request_counts`` show the progress). After
        ``timeout`` seconds raises :class:`~hearth.error.Timeout`; the batch goes on either way.
        """
        clock = batches.WaitClock(poll_interval, timeout)
        while True:
            batch = cls.retrieve(batch_id, **settings)
            if on_update is not None:
                on_update(batch)
            if batches.has_ended(batch):
                return batch
            time.sleep(clock.next_wait(batch))
