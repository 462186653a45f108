"""The shapes of what a request sends, as TypedDicts (OpenAI's shapes), for type checkers and readers.

They cost nothing at run time: a request may always hold more (any keyword a ``create`` does
not know goes into the body as it is; for a type checker, pass it as ``**{"field": value}``).
What the server answers is in :mod:`hearth.hearth_object` and the README.
"""

from __future__ import annotations

from typing import Any, Dict, List, Literal, Mapping, Optional, Sequence, TypedDict, Union

# --- messages --------------------------------------------------------------------------------


class TextPart(TypedDict):
    type: Literal["text"]
    text: str


Content = Union[str, List[TextPart]]


class _Named(TypedDict, total=False):
    name: str


class SystemMessage(_Named):
    role: Literal["system", "developer"]
    content: Content


class UserMessage(_Named):
    role: Literal["user"]
    content: Content


class FunctionCall(TypedDict):
    name: str
    #: The arguments as a JSON string (``hearth.tool_calls.parse_arguments`` reads them).
    arguments: str


class ToolCall(TypedDict):
    """A call the model made: in ``message.tool_calls`` of an answer, and of an assistant message sent back."""

    id: str
    type: Literal["function"]
    function: FunctionCall


class _AssistantRole(TypedDict):
    role: Literal["assistant"]


class AssistantMessage(_AssistantRole, total=False):
    """A reply of the model; ``content`` may be None when it made ``tool_calls``."""

    content: Optional[Content]
    tool_calls: List[ToolCall]
    name: str


class ToolMessage(TypedDict):
    """The result of the tool call ``tool_call_id``, sent back after the assistant message that made it."""

    role: Literal["tool"]
    tool_call_id: str
    content: Content


ChatMessage = Union[SystemMessage, UserMessage, AssistantMessage, ToolMessage]

# --- tools -----------------------------------------------------------------------------------


class _FunctionName(TypedDict):
    name: str


class FunctionDefinition(_FunctionName, total=False):
    description: str
    #: The arguments' JSON Schema.
    parameters: Dict[str, Any]
    strict: bool


class ToolDefinition(TypedDict):
    type: Literal["function"]
    function: FunctionDefinition


class NamedToolChoice(TypedDict):
    """Makes the model call this function."""

    type: Literal["function"]
    function: _FunctionName


#: ``"none"`` (no tool call), ``"auto"`` (the model chooses), ``"required"`` (at least one call), or one function.
ToolChoice = Union[Literal["none", "auto", "required"], NamedToolChoice]

# --- structured output -----------------------------------------------------------------------


class TextFormat(TypedDict):
    type: Literal["text"]


class JSONObjectFormat(TypedDict):
    type: Literal["json_object"]


class _SchemaName(TypedDict):
    name: str


class JSONSchema(_SchemaName, total=False):
    description: str
    schema: Dict[str, Any]
    strict: bool


class JSONSchemaFormat(TypedDict):
    type: Literal["json_schema"]
    json_schema: JSONSchema


class GrammarFormat(TypedDict):
    """Output under a GBNF grammar (Hearth's own format, not OpenAI's)."""

    type: Literal["grammar"]
    grammar: str


ResponseFormat = Union[TextFormat, JSONObjectFormat, JSONSchemaFormat, GrammarFormat]

# --- inputs ----------------------------------------------------------------------------------

#: A text, texts, one prompt's token IDs, or several prompts' token IDs.
Prompt = Union[str, Sequence[str], Sequence[int], Sequence[Sequence[int]]]
EmbeddingInput = Prompt


class StreamOptions(TypedDict, total=False):
    #: A last chunk with ``choices: []`` and ``usage``.
    include_usage: bool


# --- the keywords of each call ---------------------------------------------------------------


class CallSettings(TypedDict, total=False):
    """Settings of one call, never sent as fields (None: the module's setting)."""

    api_key: Optional[str]
    api_base: Optional[str]
    #: Seconds to wait for the connection and for each read.
    request_timeout: Optional[float]
    #: Retries of a 429 or 503 (default 2).
    max_retries: Optional[int]
    #: The longest wait before a retry, in seconds (default 60).
    max_retry_wait: Optional[float]


class SamplingParams(CallSettings, total=False):
    temperature: Optional[float]
    top_p: Optional[float]
    top_k: Optional[int]
    min_p: Optional[float]
    typical_p: Optional[float]
    seed: Optional[int]
    n: Optional[int]
    stop: Union[str, Sequence[str], None]
    stream_options: Optional[StreamOptions]
    presence_penalty: Optional[float]
    frequency_penalty: Optional[float]
    repetition_penalty: Optional[float]
    #: Token ID (as an int or a string) to a bias from -100 (banned) to 100.
    logit_bias: Optional[Mapping[Union[int, str], float]]
    response_format: Optional[ResponseFormat]
    #: ``"error"`` (a 400 with code ``context_length_exceeded``) or ``"truncate"`` (drop the prompt's start).
    context_length_exceeded_behavior: Optional[Literal["error", "truncate"]]
    max_tokens: Optional[int]
    user: Optional[str]


class CompletionParams(SamplingParams, total=False):
    #: The log probabilities of the chosen token and of this many (0-5) most likely ones, per token.
    logprobs: Optional[int]
    #: Answer with the prompt before the completion (with its tokens' logprobs when asked).
    echo: Optional[bool]
    suffix: Optional[str]
    best_of: Optional[int]


class ChatCompletionParams(SamplingParams, total=False):
    max_completion_tokens: Optional[int]
    tools: Optional[Sequence[ToolDefinition]]
    tool_choice: Optional[ToolChoice]
    parallel_tool_calls: Optional[bool]
    #: The log probability of each token of the reply in ``choices[].logprobs.content``.
    logprobs: Optional[bool]
    #: With ``logprobs``, this many (0-20) most likely alternatives of each token too.
    top_logprobs: Optional[int]


class EmbeddingParams(CallSettings, total=False):
    encoding_format: Optional[Literal["float", "base64"]]
    dimensions: Optional[int]
    user: Optional[str]
