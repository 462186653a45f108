"""The client against a running Hearth.

Needs HEARTH_TEST_BASE_URL (the server), HEARTH_API_KEY (a key of the account `default`) and
HEARTH_TEST_EXPECTED_JSON (the cases and the texts the server must answer greedily, computed
from the demo model's tables; test/clients/python-client.test.ts passes all three). Without
them these tests are skipped.
"""

from __future__ import annotations

import json
import math
import os
import unittest
from typing import Any, Dict, List
from unittest import mock

import in_tree  # noqa: F401 - before hearth: the package beside these tests

import hearth
import hearth.client
from hearth import error

BASE_URL = os.environ.get("HEARTH_TEST_BASE_URL")
EXPECTED: Dict[str, Any] = json.loads(os.environ.get("HEARTH_TEST_EXPECTED_JSON") or "{}")


@unittest.skipUnless(BASE_URL and EXPECTED, "no Hearth to test against (HEARTH_TEST_BASE_URL, HEARTH_TEST_EXPECTED_JSON)")
class HearthTest(unittest.TestCase):
    model: str = EXPECTED.get("model", "")

    def setUp(self) -> None:
        settings = mock.patch.multiple(hearth.client, api_key=None, api_base=BASE_URL, request_timeout=60.0)
        settings.start()
        self.addCleanup(settings.stop)
        env = mock.patch.dict(os.environ)
        env.start()
        self.addCleanup(env.stop)


class CompletionTest(HearthTest):
    def test_greedy_completion_is_the_expected_text(self) -> None:
        case = EXPECTED["completion"]
        r = hearth.client.Completion.create(model=self.model, prompt=case["prompt"], max_tokens=case["max_tokens"], temperature=0)
        self.assertEqual(r.object, "text_completion")
        self.assertEqual(r.model, self.model)
        self.assertEqual(r.choices[0].text, case["text"])
        self.assertEqual(r["choices"][0]["text"], case["text"])
        self.assertEqual(r.choices[0].finish_reason, "length")
        self.assertEqual(r.usage.completion_tokens, case["max_tokens"])
        self.assertEqual(r.usage.total_tokens, r.usage.prompt_tokens + r.usage.completion_tokens)
        self.assertEqual(json.loads(json.dumps(r.to_dict())), r.to_dict())

    def test_streamed_chunks_add_up_to_the_same_text(self) -> None:
        case = EXPECTED["completion"]
        chunks = list(
            hearth.client.Completion.create(
                model=self.model, prompt=case["prompt"], max_tokens=case["max_tokens"], temperature=0, stream=True
            )
        )
        self.assertGreater(len(chunks), 1)
        self.assertEqual("".join(c.choices[0].text for c in chunks if c.choices), case["text"])
        finishing = [c for c in chunks if c.choices and c.choices[0].finish_reason]
        self.assertEqual(finishing[-1].choices[0].finish_reason, "length")
        self.assertEqual(finishing[-1].usage.completion_tokens, case["max_tokens"])

    def test_several_prompts_and_n_choices(self) -> None:
        case = EXPECTED["multi"]
        r = hearth.client.Completion.create(model=self.model, prompt=case["prompts"], n=2, max_tokens=case["max_tokens"], temperature=0)
        self.assertEqual([c.index for c in r.choices], [0, 1, 2, 3])
        self.assertEqual([c.text for c in r.choices], [t for t in case["texts"] for _ in range(2)])
        self.assertEqual(r.usage.completion_tokens, 4 * case["max_tokens"])

    def test_streamed_choices_are_told_apart_by_index(self) -> None:
        case = EXPECTED["multi"]
        texts: Dict[int, str] = {}
        for c in hearth.client.Completion.create(model=self.model, prompt=case["prompts"], max_tokens=case["max_tokens"], temperature=0, stream=True):
            for choice in c.choices:
                texts[choice.index] = texts.get(choice.index, "") + choice.text
        self.assertEqual([texts[i] for i in sorted(texts)], case["texts"])

    def test_closing_a_stream_early_leaves_the_server_serving(self) -> None:
        case = EXPECTED["completion"]
        chunks = hearth.client.Completion.create(model=self.model, prompt=case["prompt"], max_tokens=400, temperature=0, stream=True)
        next(chunks)
        chunks.close()
        r = hearth.client.Completion.create(model=self.model, prompt=case["prompt"], max_tokens=case["max_tokens"], temperature=0)
        self.assertEqual(r.choices[0].text, case["text"])

    def test_a_stream_left_early_is_resumed_by_its_request_id(self) -> None:
        case = EXPECTED["completion"]
        chunks = hearth.client.Completion.create(model=self.model, prompt=case["prompt"], max_tokens=case["max_tokens"], temperature=0, stream=True)
        first = next(chunks)
        chunks.close()
        self.assertIsNotNone(chunks.request_id)
        self.assertEqual(chunks.last_event_id, "1")
        rest = hearth.client.Stream.resume(chunks.request_id, chunks.last_event_id)
        self.assertEqual(first.choices[0].text + "".join(c.choices[0].text for c in rest if c.choices), case["text"])
        whole = hearth.client.Stream.resume(chunks.request_id)
        self.assertEqual("".join(c.choices[0].text for c in whole if c.choices), case["text"])
        with self.assertRaises(error.NotFoundError):
            list(hearth.client.Stream.resume("00000000-0000-4000-8000-000000000000"))

    def test_adapter_model(self) -> None:
        case = EXPECTED.get("adapter")
        if not case:
            self.skipTest("no adapter deployed")
        r = hearth.client.Completion.create(model=case["model"], prompt=case["prompt"], max_tokens=case["max_tokens"], temperature=0)
        self.assertEqual(r.choices[0].text, case["text"])
        self.assertNotEqual(case["text"], case["base_text"])
        ids = {m.id: m for m in hearth.client.Model.list().data}
        self.assertEqual(ids[case["model"]].parent, self.model)
        retrieved = hearth.client.Model.retrieve(case["model"])
        self.assertEqual((retrieved.kind, retrieved.deployment.state), ("lora", "DEPLOYED"))


class ChatTest(HearthTest):
    def test_chat_streamed_and_not(self) -> None:
        case = EXPECTED["chat"]
        r = hearth.client.ChatCompletion.create(model=self.model, messages=case["messages"], max_tokens=case["max_tokens"], temperature=0)
        self.assertEqual(r.object, "chat.completion")
        self.assertEqual(r.choices[0].message.role, "assistant")
        self.assertEqual(r.choices[0].message.content, case["content"])

        pieces: List[str] = []
        roles: List[str] = []
        for c in hearth.client.ChatCompletion.create(
            model=self.model, messages=case["messages"], max_tokens=case["max_tokens"], temperature=0, stream=True
        ):
            self.assertEqual(c.object, "chat.completion.chunk")
            for choice in c.choices:
                if "role" in choice.delta:
                    roles.append(choice.delta.role)
                pieces.append(choice.delta.get("content") or "")
        self.assertEqual(roles, ["assistant"])
        self.assertEqual("".join(pieces), case["content"])

    def test_usage_chunk_with_include_usage(self) -> None:
        chunks = list(
            hearth.client.ChatCompletion.create(
                model=self.model,
                messages=[{"role": "user", "content": "Hi"}],
                max_tokens=5,
                temperature=0,
                stream=True,
                stream_options={"include_usage": True},
            )
        )
        self.assertEqual(chunks[-1].choices, [])
        self.assertEqual(chunks[-1].usage.completion_tokens, 5)


class AgentApiTest(HearthTest):
    """Tool calls, structured output and logprobs against Hearth itself (the demo model: the
    grammar, not sense, makes its calls and objects)."""

    WEATHER = {
        "type": "object",
        "properties": {"city": {"type": "string", "maxLength": 12}, "days": {"type": "integer"}},
        "required": ["city", "days"],
        "additionalProperties": False,
    }

    def test_a_tool_call_and_its_answer_streamed_and_not(self) -> None:
        # Small, for the test server's 512-token context: its template writes the tools out byte by byte.
        city = {"type": "object", "properties": {"city": {"type": "string", "maxLength": 4}}, "required": ["city"]}
        messages: List[Dict[str, Any]] = [{"role": "user", "content": "Oslo?"}]
        request: Dict[str, Any] = dict(
            model=self.model,
            messages=messages,
            tools=[{"type": "function", "function": {"name": "weather", "parameters": city}}],
            tool_choice="required",
            parallel_tool_calls=False,
            max_tokens=100,
            seed=3,
        )
        r = hearth.client.ChatCompletion.create(**request)
        self.assertEqual(r.choices[0].finish_reason, "tool_calls")
        call = r.choices[0].message.tool_calls[0]
        self.assertEqual(call["function"]["name"], "weather")
        arguments = hearth.client.parse_arguments(call)
        self.assertEqual(list(arguments), ["city"])
        self.assertLessEqual(len(arguments["city"]), 4)

        accumulator = hearth.client.StreamAccumulator()
        for chunk in hearth.client.ChatCompletion.create(stream=True, **request):
            accumulator.add(chunk)
        streamed = accumulator.result()["choices"][0]
        self.assertEqual(streamed["finish_reason"], "tool_calls")
        self.assertEqual(streamed["message"]["tool_calls"][0]["function"], call["function"])

        # The tool's answer goes back, and the model answers in text.
        answered = hearth.client.ChatCompletion.create(
            model=self.model,
            messages=[*messages, r.choices[0].message, hearth.client.tool_message(call, {"c": 21})],
            max_tokens=4,
            temperature=0,
        )
        self.assertEqual(answered.choices[0].finish_reason, "length")
        self.assertTrue(answered.choices[0].message.content)

    def test_json_schema_output_parses(self) -> None:
        r = hearth.client.ChatCompletion.create(
            model=self.model,
            messages=[{"role": "user", "content": "Describe the weather."}],
            response_format={"type": "json_schema", "json_schema": {"name": "weather", "schema": self.WEATHER}},
            max_tokens=400,
            seed=4,
        )
        self.assertEqual(r.choices[0].finish_reason, "stop")
        value = json.loads(r.choices[0].message.content)
        self.assertEqual(sorted(value), ["city", "days"])

    def test_logprobs_chat_and_completion(self) -> None:
        chat = hearth.client.ChatCompletion.create(
            model=self.model, messages=[{"role": "user", "content": "Hi"}], max_tokens=5, temperature=0, logprobs=True, top_logprobs=2
        )
        content = chat.choices[0].logprobs["content"]
        self.assertEqual("".join(t["token"] for t in content), chat.choices[0].message.content)
        self.assertTrue(all(len(t["top_logprobs"]) == 2 and t["logprob"] <= 0 for t in content))
        completion = hearth.client.Completion.create(model=self.model, prompt="The ", max_tokens=4, temperature=0, logprobs=1, echo=True)
        legacy = completion.choices[0].logprobs
        self.assertEqual("".join(legacy["tokens"]), completion.choices[0].text)
        self.assertIsNone(legacy["token_logprobs"][0])
        self.assertEqual(len(legacy["text_offset"]), len(legacy["tokens"]))


class EmbeddingAndModelTest(HearthTest):
    def test_embeddings(self) -> None:
        r = hearth.client.Embedding.create(model=self.model, input=["a hearth", "a fireplace"])
        self.assertEqual(r.object, "list")
        self.assertEqual([d.index for d in r.data], [0, 1])
        for d in r.data:
            self.assertAlmostEqual(math.sqrt(sum(x * x for x in d.embedding)), 1.0, places=4)
        short = hearth.client.Embedding.create(model=self.model, input="a hearth", dimensions=8)
        self.assertEqual(len(short.data[0].embedding), 8)

    def test_model_list_and_retrieve(self) -> None:
        listed = hearth.client.Model.list()
        self.assertEqual(listed.object, "list")
        base = next(m for m in listed.data if m.id == self.model)
        self.assertEqual((base.owned_by, base.kind), ("hearth", "base"))
        retrieved = hearth.client.Model.retrieve(self.model)
        self.assertEqual((retrieved.name, retrieved.kind, retrieved.state), (self.model, "base", "READY"))
        with self.assertRaises(error.NotFoundError):
            hearth.client.Model.retrieve("accounts/hearth/models/no-such-model")


class ErrorTest(HearthTest):
    def test_a_bad_key_is_an_authentication_error(self) -> None:
        with self.assertRaises(error.AuthenticationError) as caught:
            hearth.client.Model.list(api_key="hth_not_a_key")
        self.assertEqual((caught.exception.http_status, caught.exception.code), (401, "unauthorized"))
        self.assertTrue(caught.exception.message)

    def test_an_unknown_model_is_not_found(self) -> None:
        for stream in (False, True):
            with self.subTest(stream=stream), self.assertRaises(error.NotFoundError) as caught:
                hearth.client.Completion.create(model="accounts/hearth/models/no-such-model", prompt="x", stream=stream)
            self.assertEqual((caught.exception.http_status, caught.exception.param), (404, "model"))

    def test_a_bad_parameter_is_an_invalid_request_naming_it(self) -> None:
        with self.assertRaises(error.InvalidRequestError) as caught:
            hearth.client.Completion.create(model=self.model, prompt="x", temperature=3)
        e = caught.exception
        self.assertEqual((e.http_status, e.code, e.param, e.type), (400, "invalid_request", "temperature", "invalid_request_error"))
        with self.assertRaises(error.InvalidRequestError) as chat:
            hearth.client.ChatCompletion.create(model=self.model, messages=[{"role": "wizard", "content": "x"}], stream=True)
        self.assertEqual(chat.exception.param, "messages[0].role")

    def test_a_body_too_large_is_an_invalid_request(self) -> None:
        limit = EXPECTED.get("max_body_bytes")
        if not limit:
            self.skipTest("the body limit is not known")
        with self.assertRaises(error.InvalidRequestError) as caught:
            hearth.client.Completion.create(model=self.model, prompt="x" * (limit + 1))
        self.assertEqual((caught.exception.http_status, caught.exception.code), (413, "payload_too_large"))


class KeyFromEnvironmentTest(HearthTest):
    def test_hearth_api_key(self) -> None:
        self.assertTrue(os.environ.get("HEARTH_API_KEY"))
        self.assertEqual(hearth.client.Model.list().object, "list")

    def test_service_api_key_alias(self) -> None:
        os.environ["SERVICE_API_KEY"] = os.environ.pop("HEARTH_API_KEY")
        self.assertEqual(hearth.client.Model.list().object, "list")

    def test_hearth_api_key_wins_over_the_alias(self) -> None:
        os.environ["SERVICE_API_KEY"] = "hth_not_a_key"
        self.assertEqual(hearth.client.Model.list().object, "list")
        os.environ["SERVICE_API_KEY"], os.environ["HEARTH_API_KEY"] = os.environ["HEARTH_API_KEY"], "hth_not_a_key"
        with self.assertRaises(error.AuthenticationError):
            hearth.client.Model.list()

    def test_base_url_from_the_environment_without_v1(self) -> None:
        hearth.client.api_base = None
        os.environ["HEARTH_BASE_URL"] = str(BASE_URL).rstrip("/").rsplit("/v1", 1)[0]
        self.assertEqual(hearth.client.Model.list().object, "list")


class AsyncClientTest(HearthTest, unittest.IsolatedAsyncioTestCase):
    """The async client (its own asyncio transport) gets the same answers from Hearth."""

    async def test_completion_streamed_and_not(self) -> None:
        case = EXPECTED["completion"]
        fields = dict(model=self.model, prompt=case["prompt"], max_tokens=case["max_tokens"], temperature=0)
        r = await hearth.client.AsyncCompletion.create(**fields)
        self.assertEqual((r.object, r.choices[0].text, r.choices[0].finish_reason), ("text_completion", case["text"], "length"))
        chunks = await hearth.client.AsyncCompletion.create(**fields, stream=True, stream_options={"include_usage": True})
        self.assertIsNotNone(chunks.request_id)
        acc = hearth.client.StreamAccumulator()
        pieces = [acc.add(c) async for c in chunks]
        self.assertGreater(len(pieces), 1)
        whole = acc.result()
        self.assertEqual((whole.choices[0].text, whole.choices[0].finish_reason), (case["text"], "length"))
        self.assertEqual(whole.usage.completion_tokens, case["max_tokens"])

    async def test_chat_streamed_and_not(self) -> None:
        case = EXPECTED["chat"]
        fields = dict(model=self.model, messages=case["messages"], max_tokens=case["max_tokens"], temperature=0)
        r = await hearth.client.AsyncChatCompletion.create(**fields)
        self.assertEqual((r.object, r.choices[0].message.role, r.choices[0].message.content), ("chat.completion", "assistant", case["content"]))
        acc = hearth.client.StreamAccumulator()
        async with await hearth.client.AsyncChatCompletion.create(**fields, stream=True) as chunks:
            async for c in chunks:
                self.assertEqual(c.object, "chat.completion.chunk")
                acc.add(c)
        message = acc.result().choices[0].message
        self.assertEqual((message.role, message.content), ("assistant", case["content"]))
        self.assertNotIn("tool_calls", message)

    async def test_a_stream_closed_early_is_resumed_by_its_request_id(self) -> None:
        case = EXPECTED["completion"]
        chunks = await hearth.client.AsyncCompletion.create(
            model=self.model, prompt=case["prompt"], max_tokens=case["max_tokens"], temperature=0, stream=True
        )
        first = await chunks.__anext__()
        await chunks.aclose()
        rest = await hearth.client.AsyncStream.resume(str(chunks.request_id), chunks.last_event_id)
        self.assertEqual(first.choices[0].text + "".join([c.choices[0].text async for c in rest if c.choices]), case["text"])

    async def test_embeddings_models_and_errors(self) -> None:
        r = await hearth.client.AsyncEmbedding.create(model=self.model, input=["a hearth", "a fireplace"], dimensions=8)
        self.assertEqual([len(d.embedding) for d in r.data], [8, 8])
        listed = await hearth.client.AsyncModel.list()
        self.assertIn(self.model, [m.id for m in listed.data])
        self.assertEqual((await hearth.client.AsyncModel.retrieve(self.model)).state, "READY")
        with self.assertRaises(error.NotFoundError) as missing:
            await hearth.client.AsyncCompletion.create(model="accounts/hearth/models/no-such-model", prompt="x", stream=True)
        self.assertEqual(missing.exception.param, "model")
        with self.assertRaises(error.InvalidRequestError) as bad:
            await hearth.client.AsyncChatCompletion.create(model=self.model, messages=[{"role": "user", "content": "x"}], temperature=3)
        self.assertEqual((bad.exception.http_status, bad.exception.param), (400, "temperature"))
        with self.assertRaises(error.AuthenticationError):
            await hearth.client.AsyncModel.list(api_key="hth_not_a_key")


if __name__ == "__main__":
    unittest.main()


class ImageTest(HearthTest):
    image_model: str = EXPECTED.get("image_model", "")

    def test_text_to_image_gives_pngs_with_their_seeds(self) -> None:
        images = hearth.client.Image.create(
            model=self.image_model, prompt="a red circle on a white background", width=64, height=64, steps=4, seed=3, samples=2
        )
        self.assertEqual([i.seed for i in images], [3, 4])
        self.assertEqual([i.finish_reason for i in images], ["SUCCESS", "SUCCESS"])
        for image in images:
            self.assertEqual(image.png[:8], b"\x89PNG\r\n\x1a\n")

    def test_image_to_image_and_control_net_send_their_images(self) -> None:
        [start] = hearth.client.Image.create(model=self.image_model, prompt="a blue square", width=64, height=64, steps=3, seed=1)
        [kept] = hearth.client.Image.image_to_image(
            model=self.image_model, prompt="a yellow star", init_image=start.png, image_strength=1, width=64, height=64, steps=3
        )
        self.assertEqual(kept.png[:4], b"\x89PNG")
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "control.png")
            start.save(path)
            [shaped] = hearth.client.Image.control_net(
                model=self.image_model, prompt="a green line", control_image=path, conditioning_scale=0.8, width=64, height=64, steps=3
            )
        self.assertEqual(shaped.png[:4], b"\x89PNG")

    def test_errors_are_typed(self) -> None:
        with self.assertRaises(error.InvalidRequestError) as raised:
            hearth.client.Image.create(model=self.model, prompt="a circle")
        self.assertEqual(raised.exception.param, "model")
        with self.assertRaises(error.InvalidRequestError) as raised:
            hearth.client.Image.image_to_image(model=self.image_model, prompt="x", init_image=b"not an image")
        self.assertEqual(raised.exception.param, "init_image")
        with self.assertRaises(error.InvalidRequestError) as raised:
            hearth.client.Image.create(model=self.image_model, prompt="x", width=100)
        self.assertEqual(raised.exception.param, "width")
