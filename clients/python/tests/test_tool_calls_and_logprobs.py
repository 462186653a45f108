"""The new request fields reach the server as they are; tool calls and logprobs come back in
OpenAI's shapes, non-streamed and streamed (added up by StreamAccumulator), in both clients.
Canned answers (tests/canned.py) from a local HTTP server: Hearth's own answers are tested
end to end elsewhere."""

from __future__ import annotations

import json
import unittest
from typing import Any, Dict, List

import in_tree  # noqa: F401 - before hearth: the package beside these tests

import hearth.client
from hearth.client import StreamAccumulator, parse_arguments, tool_message

from canned import CHAT_TOOL_CALL_CHUNKS, CHAT_TOOL_CALLS, COMPLETION_LOGPROBS, TIME_TOOL, WEATHER_TOOL, completion_chunks, sse
from fake_server import FakeServerTest, send_json, start_stream, write

MODEL = "accounts/me/models/my-lora"
HISTORY: List[Dict[str, Any]] = [
    {"role": "user", "content": "Weather in Zürich, and the time?"},
    {"role": "assistant", "content": None, "tool_calls": CHAT_TOOL_CALLS["choices"][0]["message"]["tool_calls"]},
    {"role": "tool", "tool_call_id": "call_a", "content": '{"sky": "clear"}'},
]


def stream_of(text: str):  # type: ignore[no-untyped-def]
    def route(h: Any) -> None:
        start_stream(h, request_id="req-tools")
        write(h, text)

    return route


class RequestFieldsTest(FakeServerTest):
    def test_chat_fields_go_into_the_body_as_they_are(self) -> None:
        self.route("POST /v1/chat/completions", lambda h: send_json(h, 200, CHAT_TOOL_CALLS))
        fields: Dict[str, Any] = dict(
            tools=[WEATHER_TOOL, TIME_TOOL],
            tool_choice={"type": "function", "function": {"name": "get_weather"}},
            parallel_tool_calls=True,
            response_format={"type": "json_schema", "json_schema": {"name": "w", "schema": {"type": "object"}, "strict": True}},
            logprobs=True,
            top_logprobs=2,
            min_p=0.05,
            typical_p=0.9,
            repetition_penalty=1.1,
            context_length_exceeded_behavior="truncate",
        )
        hearth.client.ChatCompletion.create(
            model=MODEL, messages=HISTORY, logit_bias={15: -100, "16": 2.5}, request_timeout=3, max_retries=1, **fields
        )
        body = self.server.requests[-1]["body"]
        self.assertEqual(body, {"model": MODEL, "messages": HISTORY, "logit_bias": {"15": -100, "16": 2.5}, **fields})

    def test_completion_fields_token_prompts_and_fields_this_client_does_not_know(self) -> None:
        self.route("POST /v1/completions", lambda h: send_json(h, 200, COMPLETION_LOGPROBS))
        for prompt in ([464, 2046], [[464, 2046], [1, 2]], "The ", ["a", "b"]):
            with self.subTest(prompt=prompt):
                hearth.client.Completion.create(
                    model=MODEL,
                    prompt=prompt,
                    logprobs=2,
                    echo=True,
                    response_format={"type": "grammar", "grammar": 'root ::= "yes" | "no"'},
                    **{"a_future_field": {"x": [1]}},
                )
                self.assertEqual(
                    self.server.requests[-1]["body"],
                    {
                        "model": MODEL,
                        "prompt": prompt,
                        "logprobs": 2,
                        "echo": True,
                        "response_format": {"type": "grammar", "grammar": 'root ::= "yes" | "no"'},
                        "a_future_field": {"x": [1]},
                    },
                )

    def test_embedding_inputs_as_token_arrays(self) -> None:
        self.route("POST /v1/embeddings", lambda h: send_json(h, 200, {"object": "list", "data": []}))
        for tokens in ([1, 2, 3], [[1, 2], [3]]):
            hearth.client.Embedding.create(model=MODEL, input=tokens)
            self.assertEqual(self.server.requests[-1]["body"], {"model": MODEL, "input": tokens})


class ToolCallAnswerTest(FakeServerTest):
    def test_tool_calls_and_their_logprobs(self) -> None:
        self.route("POST /v1/chat/completions", lambda h: send_json(h, 200, CHAT_TOOL_CALLS))
        r = hearth.client.ChatCompletion.create(model=MODEL, messages=HISTORY[:1], tools=[WEATHER_TOOL, TIME_TOOL])
        choice = r.choices[0]
        self.assertEqual(choice.finish_reason, "tool_calls")
        self.assertIsNone(choice.message.content)
        first, second = choice.message.tool_calls
        self.assertEqual((first.id, first.type, first.function.name), ("call_a", "function", "get_weather"))
        self.assertEqual(first.function.arguments, '{"city": "Zürich"}')
        self.assertEqual(parse_arguments(first), {"city": "Zürich"})
        self.assertEqual(parse_arguments(second), {})
        self.assertEqual(tool_message(first, {"sky": "clear"}), HISTORY[2])
        self.assertEqual(tool_message(second, "12:00"), {"role": "tool", "tool_call_id": "call_b", "content": "12:00"})
        token = choice.logprobs.content[1]
        self.assertEqual((token.token, token.logprob, token.bytes), ("city", -0.2, [99, 105, 116, 121]))
        self.assertEqual([(t.token, t.logprob) for t in token.top_logprobs], [("city", -0.2), ("town", -1.7)])
        self.assertEqual(choice.logprobs.content[2].bytes, [0xC3, 0xA9])
        self.assertEqual(r.to_dict(), CHAT_TOOL_CALLS)

    def test_arguments_that_are_not_json_raise_naming_the_call(self) -> None:
        with self.assertRaisesRegex(ValueError, "call_x.*get_weather"):
            parse_arguments({"id": "call_x", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": '}})

    def test_streamed_tool_calls_add_up_to_the_same_answer(self) -> None:
        self.route("POST /v1/chat/completions", stream_of(sse(CHAT_TOOL_CALL_CHUNKS)))
        acc = StreamAccumulator()
        chunks = hearth.client.ChatCompletion.create(model=MODEL, messages=HISTORY[:1], stream=True, logprobs=True)
        fragments = [acc.add(c) for c in chunks]
        self.assertEqual([c.to_dict() for c in fragments], CHAT_TOOL_CALL_CHUNKS)
        name_first = fragments[1].choices[0].delta.tool_calls[0]
        self.assertEqual((name_first.index, name_first.id, name_first.function.name), (0, "call_a", "get_weather"))
        self.assertEqual(fragments[4].choices[0].logprobs.content[0].token, "city")
        self.assertEqual(acc.result().to_dict(), CHAT_TOOL_CALLS)
        self.assertEqual([parse_arguments(c) for c in acc.tool_calls()], [{"city": "Zürich"}, {}])

    def test_the_accumulator_sees_calls_take_shape(self) -> None:
        acc = StreamAccumulator()
        for c in CHAT_TOOL_CALL_CHUNKS[:5]:
            acc.add(c)
        calls = acc.tool_calls()
        self.assertEqual([(c.id, c.function.name, c.function.arguments) for c in calls], [("call_a", "get_weather", '{"city": "Z'), ("call_b", "get_time", "")])
        self.assertIsNone(acc.result().choices[0].finish_reason)
        self.assertEqual(acc.tool_calls(index=3), [])


class CompletionLogprobsTest(FakeServerTest):
    def test_legacy_logprobs_non_streamed_and_streamed(self) -> None:
        self.route("POST /v1/completions", lambda h: send_json(h, 200, COMPLETION_LOGPROBS))
        r = hearth.client.Completion.create(model=MODEL, prompt="The", logprobs=2, echo=True, max_tokens=1)
        logprobs = r.choices[0].logprobs
        self.assertEqual(logprobs.tokens, ["The", " fire", " burns"])
        self.assertEqual(logprobs.token_logprobs, [None, -1.25, -0.5])
        self.assertEqual(logprobs.top_logprobs[1], {" fire": -1.25, " hearth": -1.5})
        self.assertEqual(logprobs.text_offset, [0, 3, 8])

        self.route("POST /v1/completions", stream_of(sse(completion_chunks())))
        acc = StreamAccumulator()
        pieces = [acc.add(c).choices[0].logprobs.tokens for c in hearth.client.Completion.create(model=MODEL, prompt="The", logprobs=2, echo=True, stream=True)]
        self.assertEqual(pieces, [["The"], [" fire"], [" burns"]])
        self.assertEqual(acc.result().to_dict(), COMPLETION_LOGPROBS)


class AsyncToolCallTest(FakeServerTest, unittest.IsolatedAsyncioTestCase):
    async def test_the_async_client_reads_the_same_answers(self) -> None:
        self.route("POST /v1/chat/completions", lambda h: send_json(h, 200, CHAT_TOOL_CALLS))
        r = await hearth.client.AsyncChatCompletion.create(model=MODEL, messages=HISTORY, tools=[WEATHER_TOOL], tool_choice="required")
        self.assertEqual(r.to_dict(), CHAT_TOOL_CALLS)
        self.assertEqual(self.server.requests[-1]["body"]["tool_choice"], "required")

        self.route("POST /v1/chat/completions", stream_of(sse(CHAT_TOOL_CALL_CHUNKS)))
        acc = StreamAccumulator()
        async for c in await hearth.client.AsyncChatCompletion.create(model=MODEL, messages=HISTORY, stream=True):
            acc.add(c)
        self.assertEqual(acc.result().to_dict(), CHAT_TOOL_CALLS)

        self.route("POST /v1/completions", stream_of(sse(completion_chunks())))
        acc = StreamAccumulator()
        async for c in await hearth.client.AsyncCompletion.create(model=MODEL, prompt=[1, 2], logprobs=2, stream=True):
            acc.add(c)
        self.assertEqual(json.loads(json.dumps(acc.result())), COMPLETION_LOGPROBS)


if __name__ == "__main__":
    unittest.main()
