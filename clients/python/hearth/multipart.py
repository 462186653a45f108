"""multipart/form-data bodies, built with the standard library (for the image endpoints)."""

from __future__ import annotations

import secrets
from typing import Mapping, Tuple, Union

#: A form field: text, or a file as (file name, bytes, content type).
Field = Union[str, Tuple[str, bytes, str]]


def encode(fields: Mapping[str, Field]) -> Tuple[bytes, str]:
    """The body and its Content-Type (with the boundary)."""
    boundary = "hearth-" + secrets.token_hex(16)
    parts = []
    for name, value in fields.items():
        if isinstance(value, tuple):
            filename, data, content_type = value
            head = (
                f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; filename="{filename}"\r\n'
                f"Content-Type: {content_type}\r\n\r\n"
            )
            parts.append(head.encode("utf-8") + data + b"\r\n")
        else:
            head = f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'
            parts.append(head.encode("utf-8") + str(value).encode("utf-8") + b"\r\n")
    parts.append(f"--{boundary}--\r\n".encode("utf-8"))
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"
