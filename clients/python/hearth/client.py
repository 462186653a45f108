"""The client, shaped like the classic clients of OpenAI-compatible APIs.

    import hearth.client
    hearth.client.api_key = "hth_..."      # None: $HEARTH_API_KEY, else $SERVICE_API_KEY
    hearth.client.api_base = "http://localhost:8080/v1"   # None: $HEARTH_BASE_URL, else this
    r = hearth.client.Completion.create(model="accounts/hearth/models/hearth-tiny", prompt="The ", max_tokens=8)
    print(r.choices[0].text)

    r = await hearth.client.AsyncChatCompletion.create(model=..., messages=[...])   # asyncio

The settings are read at each call, so they (and the environment variables) can change at any
time; every call can also override them with ``api_key=``, ``api_base=``, ``request_timeout=``,
``max_retries=`` and ``max_retry_wait=``. The async classes (``Async…``) read the same settings.
"""

from __future__ import annotations

import sys
from typing import Optional

from . import error, settings
from .async_resources import AsyncBatch, AsyncChatCompletion, AsyncChunkStream, AsyncCompletion, AsyncEmbedding
from .async_resources import AsyncFile, AsyncImage, AsyncModel, AsyncStream
from .hearth_object import HearthObject
from .resources import Batch, ChatCompletion, ChunkStream, Completion, Embedding, File, GeneratedImage, Image, Model
from .resources import Stream
from .stream_accumulator import StreamAccumulator
from .tool_calls import parse_arguments, tool_message
from .version import VERSION

__all__ = [
    "api_key",
    "api_base",
    "request_timeout",
    "max_retries",
    "max_retry_wait",
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
    "AsyncCompletion",
    "AsyncChatCompletion",
    "AsyncStream",
    "AsyncEmbedding",
    "AsyncModel",
    "AsyncImage",
    "AsyncFile",
    "AsyncBatch",
    "AsyncChunkStream",
    "StreamAccumulator",
    "parse_arguments",
    "tool_message",
    "HearthObject",
    "error",
]

#: The API key. None: $HEARTH_API_KEY, else $SERVICE_API_KEY, read at each call.
api_key: Optional[str] = None

#: Hearth's base URL, with or without the trailing /v1. None: $HEARTH_BASE_URL, else http://localhost:8080/v1.
api_base: Optional[str] = None

#: Seconds to wait for the connection and for each read (each piece of a stream); None waits forever.
request_timeout: Optional[float] = 600.0

#: How many times a request refused with 429 or 503 is sent again (hearth.retries says when).
max_retries: int = settings.DEFAULT_MAX_RETRIES

#: The longest wait before a retry, in seconds: a longer Retry-After raises the error at once.
max_retry_wait: float = settings.DEFAULT_MAX_RETRY_WAIT

__version__ = VERSION

# The requests read the settings above from this module at each call.
settings.use_settings(sys.modules[__name__])
