"""Helpers for tool calls: read a call's arguments, and answer it with a ``tool`` message."""

from __future__ import annotations

import json
from typing import Any, Mapping

from .types import ToolMessage


def parse_arguments(tool_call: Mapping[str, Any]) -> Any:
    """The arguments of a tool call (``message.tool_calls[i]``), parsed from their JSON string.

    Raises ValueError, naming the call and its function, when they are not JSON.
    """
    function = tool_call.get("function") or {}
    arguments = function.get("arguments")
    if not isinstance(arguments, str):
        raise ValueError(f"Tool call {tool_call.get('id')!r} has no arguments string.")
    try:
        return json.loads(arguments)
    except ValueError as e:
        raise ValueError(
            f"The arguments of tool call {tool_call.get('id')!r} ({function.get('name')}) are not JSON: {e}"
        ) from None


def tool_message(tool_call: Mapping[str, Any], content: Any) -> ToolMessage:
    """The ``role: "tool"`` message that answers ``tool_call``: ``content`` as it is if a string, else as JSON."""
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    return {"role": "tool", "tool_call_id": str(tool_call["id"]), "content": text}
