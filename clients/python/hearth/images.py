"""The image endpoints' requests and answers, shared by both clients."""

from __future__ import annotations

import base64
import json
import os
import re
import urllib.parse
from typing import Any, Dict, List, Mapping, Optional, Union

from . import multipart
from .error import APIError, InvalidRequestError
from .http_messages import Call
from .settings import RequestOptions

MODEL_NAME = re.compile(r"^accounts/([^/]+)/models/([^/]+)$")

#: An image to send: its bytes, or a file path.
ImageInput = Union[bytes, str]


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


def model_parts(name: str, param: str) -> List[str]:
    """The URL-quoted account and model of ``accounts/<account>/models/<model>``; anything else raises."""
    match = MODEL_NAME.match(name)
    if match is None:
        raise InvalidRequestError(f"A model name is accounts/<account>/models/<model>, not {name!r}.", param=param)
    return [urllib.parse.quote(part, safe="") for part in match.groups()]


def text_to_image(model: str, prompt: str, params: Mapping[str, Any]) -> Call:
    options, fields = RequestOptions.split(params)
    data = json.dumps({"prompt": prompt, **fields}).encode("utf-8")
    return Call("POST", _path(model, ""), options, raw=(data, "application/json"))


def image_to_image(
    model: str, prompt: str, init_image: ImageInput, image_strength: Optional[float], params: Mapping[str, Any]
) -> Call:
    fields: Dict[str, multipart.Field] = {"prompt": prompt, "init_image": _file(init_image, "init")}
    if image_strength is not None:
        fields["image_strength"] = str(image_strength)
    return _form(model, "/image_to_image", fields, params)


def control_net(
    model: str,
    prompt: str,
    control_image: ImageInput,
    control_net_name: str,
    conditioning_scale: Optional[float],
    params: Mapping[str, Any],
) -> Call:
    fields: Dict[str, multipart.Field] = {
        "prompt": prompt,
        "control_image": _file(control_image, "control"),
        "control_net_name": control_net_name,
    }
    if conditioning_scale is not None:
        fields["conditioning_scale"] = str(conditioning_scale)
    return _form(model, "/control_net", fields, params)


def _form(model: str, suffix: str, fields: Dict[str, multipart.Field], params: Mapping[str, Any]) -> Call:
    options, rest = RequestOptions.split(params)
    for name, value in rest.items():
        fields[name] = str(value).lower() if isinstance(value, bool) else str(value)
    return Call("POST", _path(model, suffix), options, raw=multipart.encode(fields))


def _path(model: str, suffix: str) -> str:
    account, name = model_parts(model, "model")
    return f"/image_generation/accounts/{account}/models/{name}{suffix}"


def _file(image: ImageInput, name: str) -> multipart.Field:
    if isinstance(image, (bytes, bytearray)):
        return (f"{name}.png", bytes(image), "application/octet-stream")
    with open(image, "rb") as f:
        return (os.path.basename(image), f.read(), "application/octet-stream")


def read_images(answer: Any) -> List[GeneratedImage]:
    """The images of an image endpoint's JSON answer."""
    if not isinstance(answer, list):
        raise APIError("The server's answer is not a list of images.")
    return [
        GeneratedImage(base64.b64decode(item["base64"]), int(item["seed"]), str(item["finishReason"]))
        for item in answer
    ]
