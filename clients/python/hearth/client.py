"""The client, shaped like the classic clients of OpenAI-compatible APIs.

    import hearth.client
    hearth.client.api_key = "hth_..."      # None: $HEARTH_API_KEY, else $SERVICE_API_KEY
    hearth.client.api_base = "http://localhost:8080/v1"   # None: $HEARTH_BASE_URL, else this
    r = hearth.client.Completion.create(model="accounts/hearth/models/hearth-tiny", prompt="The ", max_tokens=8)
    print(r.choices[0].text)

The settings are read at each call, so they (and the environment variables) can change at any
time; every call can also override them with ``api_key=``, ``api_base=`` and ``request_timeout=``.
"""

from __future__ import annotations

import sys
from typing import Optional

from . import api_requestor, error
from .hearth_object import HearthObject
from .resources import ChatCompletion, Completion, Embedding, GeneratedImage, Image, Model, Stream
from .version import VERSION

__all__ = [
    "api_key",
    "api_base",
    "request_timeout",
    "Completion",
    "ChatCompletion",
    "Stream",
    "Embedding",
    "Model",
    "Image",
    "GeneratedImage",
    "HearthObject",
    "error",
]

#: The API key. None: $HEARTH_API_KEY, else $SERVICE_API_KEY, read at each call.
api_key: Optional[str] = None

#: Hearth's base URL, with or without the trailing /v1. None: $HEARTH_BASE_URL, else http://localhost:8080/v1.
api_base: Optional[str] = None

#: Seconds to wait for the connection and for each read (each piece of a stream); None waits forever.
request_timeout: Optional[float] = 600.0

__version__ = VERSION

# The requests read the settings above from this module at each call.
api_requestor.use_settings(sys.modules[__name__])
