"""OpenAI-shaped answers with tool calls and log probabilities, and the streams that carry the same.

Written by hand after the shapes of the `openai` package (ChatCompletion, ChatCompletionChunk,
Completion): each stream below adds up to the answer above it.
"""

from __future__ import annotations

import json
from typing import Any, Dict, List

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        "strict": True,
    },
}
TIME_TOOL = {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object", "properties": {}}}}


def _top(token: str, logprob: float) -> Dict[str, Any]:
    return {"token": token, "logprob": logprob, "bytes": list(token.encode("utf-8"))}


def _entry(token: str, logprob: float, *alternatives: Any) -> Dict[str, Any]:
    return {**_top(token, logprob), "top_logprobs": [_top(token, logprob), *(_top(t, lp) for t, lp in alternatives)]}


_HEAD = {"id": "chatcmpl-1", "created": 1700000000, "model": "accounts/me/models/my-lora"}
_USAGE = {"prompt_tokens": 20, "completion_tokens": 17, "total_tokens": 37}

# Two tool calls in one answer, with the logprobs of the reply's tokens.
CHAT_TOOL_CALLS: Dict[str, Any] = {
    **_HEAD,
    "object": "chat.completion",
    "choices": [
        {
            "index": 0,
            "message": {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "call_a", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Zürich"}'}},
                    {"id": "call_b", "type": "function", "function": {"name": "get_time", "arguments": "{}"}},
                ],
            },
            "finish_reason": "tool_calls",
            "logprobs": {
                "content": [_entry('{"', -0.01, ("{", -4.6)), _entry("city", -0.2, ("town", -1.7)), _entry("é", -2.5)],
                "refusal": None,
            },
        }
    ],
    "usage": _USAGE,
}


def _chunk(delta: Dict[str, Any], finish_reason: Any = None, logprobs: Any = None) -> Dict[str, Any]:
    choice: Dict[str, Any] = {"index": 0, "delta": delta, "finish_reason": finish_reason}
    if logprobs is not None:
        choice["logprobs"] = {"content": logprobs, "refusal": None}
    return {**_HEAD, "object": "chat.completion.chunk", "choices": [choice]}


_LP = CHAT_TOOL_CALLS["choices"][0]["logprobs"]["content"]

# The same, streamed: id, type and name first, then the arguments in fragments, the two calls interleaved.
CHAT_TOOL_CALL_CHUNKS: List[Dict[str, Any]] = [
    _chunk({"role": "assistant", "content": None}),
    _chunk({"tool_calls": [{"index": 0, "id": "call_a", "type": "function", "function": {"name": "get_weather", "arguments": ""}}]}),
    _chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"'}}]}, logprobs=_LP[:1]),
    _chunk({"tool_calls": [{"index": 1, "id": "call_b", "type": "function", "function": {"name": "get_time", "arguments": ""}}]}),
    _chunk({"tool_calls": [{"index": 0, "function": {"arguments": 'city": "Z'}}]}, logprobs=_LP[1:2]),
    _chunk({"tool_calls": [{"index": 1, "function": {"arguments": "{}"}}]}),
    _chunk({"tool_calls": [{"index": 0, "function": {"arguments": 'ürich"}'}}]}, logprobs=_LP[2:]),
    _chunk({}, finish_reason="tool_calls"),
    {**_HEAD, "object": "chat.completion.chunk", "choices": [], "usage": _USAGE},
]

# A completion with echo and the legacy logprobs (logprobs=2): the prompt's tokens first.
COMPLETION_LOGPROBS: Dict[str, Any] = {
    "id": "cmpl-1",
    "object": "text_completion",
    "created": 1700000000,
    "model": "accounts/me/models/my-lora",
    "choices": [
        {
            "index": 0,
            "text": "The fire burns",
            "finish_reason": "length",
            "logprobs": {
                "tokens": ["The", " fire", " burns"],
                "token_logprobs": [None, -1.25, -0.5],
                "top_logprobs": [None, {" fire": -1.25, " hearth": -1.5}, {" burns": -0.5, " glows": -1.0}],
                "text_offset": [0, 3, 8],
            },
        }
    ],
    "usage": {"prompt_tokens": 2, "completion_tokens": 1, "total_tokens": 3},
}


def completion_chunks() -> List[Dict[str, Any]]:
    """COMPLETION_LOGPROBS streamed: one token per chunk, with its logprobs."""
    whole = COMPLETION_LOGPROBS["choices"][0]
    chunks = []
    for i, token in enumerate(whole["logprobs"]["tokens"]):
        logprobs = {name: [values[i]] for name, values in whole["logprobs"].items()}
        last = i == len(whole["logprobs"]["tokens"]) - 1
        choice = {"index": 0, "text": token, "finish_reason": "length" if last else None, "logprobs": logprobs}
        chunks.append({k: COMPLETION_LOGPROBS[k] for k in ("id", "object", "created", "model")} | {"choices": [choice]})
    chunks[-1]["usage"] = COMPLETION_LOGPROBS["usage"]
    return chunks


def sse(chunks: List[Dict[str, Any]]) -> str:
    return "".join(f"id: {i + 1}\ndata: {json.dumps(c, ensure_ascii=False)}\n\n" for i, c in enumerate(chunks)) + "data: [DONE]\n\n"
