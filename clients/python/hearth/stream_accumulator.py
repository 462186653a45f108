"""Adds up the chunks of a stream into the answer the same request gives without ``stream``.

    acc = StreamAccumulator()
    for chunk in hearth.client.ChatCompletion.create(..., tools=tools, stream=True):
        acc.add(chunk)
        print(chunk.choices[0].delta.get("content") or "" if chunk.choices else "", end="")
    for call in acc.tool_calls():                       # complete, in the order of their index
        print(call.function.name, parse_arguments(call))

For chat (``chat.completion.chunk``): each choice's ``message`` with ``role``, ``content`` (the
pieces joined; None if none came) and ``tool_calls`` (the fragments of each ``index`` put
together: ``id``, ``type`` and ``function.name`` from the first, ``function.arguments``
concatenated), ``finish_reason`` and ``logprobs`` (``content``: the chunks' entries in order; ``refusal``).
For completions (``text_completion``): each choice's ``text`` and legacy ``logprobs`` (``tokens``,
``token_logprobs``, ``top_logprobs``, ``text_offset``, each concatenated). The last ``usage`` seen
(``stream_options={"include_usage": True}``) is kept.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional

from .hearth_object import HearthObject

_LEGACY_LOGPROBS = ("tokens", "token_logprobs", "top_logprobs", "text_offset")
_CHAT_LOGPROBS = ("content", "refusal")


class _Choice:
    def __init__(self, index: int) -> None:
        self.index = index
        self.role: Optional[str] = None
        self.text: Optional[str] = None
        self.tool_calls: Dict[int, Dict[str, Any]] = {}
        self.finish_reason: Optional[str] = None
        self.logprobs: Optional[Dict[str, Any]] = None


class StreamAccumulator:
    """Feed it every chunk with :meth:`add`; :meth:`result` is the whole answer so far."""

    def __init__(self) -> None:
        self._head: Dict[str, Any] = {}
        self._chat = False
        self._choices: Dict[int, _Choice] = {}
        self._usage: Optional[Mapping[str, Any]] = None

    def add(self, chunk: Mapping[str, Any]) -> Mapping[str, Any]:
        """Adds one chunk; returns it, so that ``for c in stream: acc.add(c)`` can go on using it."""
        for key in ("id", "created", "model", "system_fingerprint"):
            if key in chunk and key not in self._head:
                self._head[key] = chunk[key]
        if chunk.get("object") == "chat.completion.chunk":
            self._chat = True
        if chunk.get("usage"):
            self._usage = chunk["usage"]
        for piece in chunk.get("choices") or []:
            index = int(piece.get("index", 0))
            choice = self._choices.setdefault(index, _Choice(index))
            if "delta" in piece:
                self._chat = True
                _add_delta(choice, piece["delta"] or {})
            elif piece.get("text") is not None:
                choice.text = (choice.text or "") + piece["text"]
            if piece.get("finish_reason") is not None:
                choice.finish_reason = piece["finish_reason"]
            if piece.get("logprobs"):
                _add_logprobs(choice, piece["logprobs"], self._chat)
        return chunk

    def tool_calls(self, index: int = 0) -> List[HearthObject]:
        """The tool calls of choice ``index`` assembled so far, in the order of their index."""
        choice = self._choices.get(index)
        return [] if choice is None else [HearthObject(c) for _, c in sorted(choice.tool_calls.items())]

    def result(self) -> HearthObject:
        """A ``chat.completion`` or ``text_completion`` object, as the request without stream answers."""
        answer: Dict[str, Any] = dict(self._head)
        answer["object"] = "chat.completion" if self._chat else "text_completion"
        answer["choices"] = [self._choice(c) for _, c in sorted(self._choices.items())]
        if self._usage is not None:
            answer["usage"] = self._usage
        return HearthObject(answer)

    def _choice(self, choice: _Choice) -> Dict[str, Any]:
        out: Dict[str, Any] = {"index": choice.index}
        if self._chat:
            message: Dict[str, Any] = {"role": choice.role or "assistant", "content": choice.text}
            if choice.tool_calls:
                message["tool_calls"] = [c for _, c in sorted(choice.tool_calls.items())]
            out["message"] = message
        else:
            out["text"] = choice.text or ""
        out["finish_reason"] = choice.finish_reason
        logprobs = choice.logprobs
        if logprobs is not None and self._chat:
            logprobs = {"content": logprobs["content"], "refusal": logprobs["refusal"] or None}
        out["logprobs"] = logprobs
        return out


def _add_delta(choice: _Choice, delta: Mapping[str, Any]) -> None:
    if delta.get("role"):
        choice.role = delta["role"]
    if delta.get("content") is not None:
        choice.text = (choice.text or "") + delta["content"]
    for fragment in delta.get("tool_calls") or []:
        call = choice.tool_calls.setdefault(
            int(fragment["index"]), {"id": None, "type": "function", "function": {"name": "", "arguments": ""}}
        )
        if fragment.get("id"):
            call["id"] = fragment["id"]
        if fragment.get("type"):
            call["type"] = fragment["type"]
        function = fragment.get("function") or {}
        if function.get("name"):
            call["function"]["name"] = function["name"]
        if function.get("arguments"):
            call["function"]["arguments"] += function["arguments"]


def _add_logprobs(choice: _Choice, logprobs: Mapping[str, Any], chat: bool) -> None:
    names = _CHAT_LOGPROBS if chat else _LEGACY_LOGPROBS
    if choice.logprobs is None:
        choice.logprobs = {name: [] for name in names}
    for name in names:
        choice.logprobs[name].extend(logprobs.get(name) or [])
