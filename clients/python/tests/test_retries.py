"""Retries of 429 and 503 after Retry-After, against a real local HTTP server, in both clients."""

from __future__ import annotations

import email.utils
import json
import time
import unittest
from http.server import BaseHTTPRequestHandler
from typing import Any, Dict, List, Optional

import in_tree  # noqa: F401 - before hearth: the package beside these tests

import hearth.client
from hearth import error, retries
from hearth.settings import RequestOptions

from fake_server import FakeServerTest, chunk, error_body, send_json, start_stream, write

MODEL = "accounts/me/models/my-lora"
OK = {"object": "list", "data": [{"id": MODEL}]}
RATE_LIMITED = error_body("Too many requests.", "rate_limit_error", "rate_limited")
UNAVAILABLE = error_body("No worker took the request.", "service_unavailable_error", "unavailable")


def refuse(status: int, body: Dict[str, Any], retry_after: Optional[str]):  # type: ignore[no-untyped-def]
    def answer(h: BaseHTTPRequestHandler) -> None:
        raw = json.dumps(body).encode()
        h.send_response(status)
        if retry_after is not None:
            h.send_header("Retry-After", retry_after)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(raw)))
        h.end_headers()
        h.wfile.write(raw)

    return answer


class Script:
    """Answers the n-th request with the n-th answer (the last one again after that); notes when each came."""

    def __init__(self, *answers: Any) -> None:
        self.answers = list(answers)
        self.arrivals: List[float] = []

    def __call__(self, h: BaseHTTPRequestHandler) -> None:
        self.arrivals.append(time.monotonic())
        self.answers[min(len(self.arrivals), len(self.answers)) - 1](h)


def ok(h: BaseHTTPRequestHandler) -> None:
    send_json(h, 200, OK)


def stream_ok(h: BaseHTTPRequestHandler) -> None:
    start_stream(h)
    write(h, chunk("hello") + "data: [DONE]\n\n")


class RetryTest(FakeServerTest):
    def setUp(self) -> None:
        super().setUp()
        hearth.client.max_retries = 2

    def test_a_429_is_sent_again_after_retry_after_seconds(self) -> None:
        script = Script(refuse(429, RATE_LIMITED, "1"), ok)
        self.route("GET /v1/models", script)
        self.assertEqual(hearth.client.Model.list().data[0].id, MODEL)
        self.assertEqual(len(script.arrivals), 2)
        # A lower bound only: the client slept at least what the server asked.
        self.assertGreaterEqual(script.arrivals[1] - script.arrivals[0], 1.0)

    def test_a_503_with_an_http_date_and_one_without_retry_after(self) -> None:
        soon = email.utils.formatdate(time.time() + 1, usegmt=True)
        script = Script(refuse(503, UNAVAILABLE, soon), refuse(503, UNAVAILABLE, None), ok)
        self.route("POST /v1/completions", script)
        hearth.client.Completion.create(model=MODEL, prompt="x")
        self.assertEqual(len(script.arrivals), 3)
        self.assertEqual(self.server.requests[0]["body"], self.server.requests[2]["body"])

    def test_the_last_refusal_raises_after_max_retries(self) -> None:
        script = Script(refuse(429, RATE_LIMITED, "0"))
        self.route("GET /v1/models", script)
        with self.assertRaises(error.RateLimitError) as caught:
            hearth.client.Model.list()
        self.assertEqual(len(script.arrivals), 3)
        self.assertEqual(caught.exception.headers.get("Retry-After"), "0")
        with self.assertRaises(error.RateLimitError):
            hearth.client.Model.list(max_retries=0)
        self.assertEqual(len(script.arrivals), 4)

    def test_a_retry_after_longer_than_the_cap_raises_at_once(self) -> None:
        script = Script(refuse(503, UNAVAILABLE, "120"), ok)
        self.route("GET /v1/models", script)
        with self.assertRaises(error.ServiceUnavailableError):
            hearth.client.Model.list()
        self.assertEqual(len(script.arrivals), 1)
        # The cap is per call too; a cap of 0 still retries a "Retry-After: 0".
        script = Script(refuse(503, UNAVAILABLE, "5"), refuse(503, UNAVAILABLE, "0"), ok)
        self.route("GET /v1/models", script)
        with self.assertRaises(error.ServiceUnavailableError):
            hearth.client.Model.list(max_retry_wait=4)
        hearth.client.Model.list(max_retry_wait=0)
        self.assertEqual(len(script.arrivals), 3)

    def test_what_waiting_does_not_cure_is_not_retried(self) -> None:
        for status, body in [
            (429, error_body("Undeploy a model first.", "insufficient_quota", "quota_exceeded")),
            (400, error_body("bad", "invalid_request_error", "invalid_request", "temperature")),
            (500, error_body("oops", "api_error", "internal")),
        ]:
            with self.subTest(status=status):
                script = Script(refuse(status, body, "0"), ok)
                self.route("GET /v1/models", script)
                with self.assertRaises(error.HearthError):
                    hearth.client.Model.list()
                self.assertEqual(len(script.arrivals), 1)

    def test_a_stream_is_retried_until_its_first_event_only(self) -> None:
        script = Script(refuse(503, UNAVAILABLE, "0"), stream_ok)
        self.route("POST /v1/completions", script)
        self.assertEqual([c.choices[0].text for c in hearth.client.Completion.create(model=MODEL, prompt="x", stream=True)], ["hello"])
        self.assertEqual(len(script.arrivals), 2)

        def fails_after_a_chunk(h: BaseHTTPRequestHandler) -> None:
            start_stream(h, request_id="req-r")
            write(h, "id: 1\n" + chunk("half") + 'data: {"error": {"message": "busy", "type": "t", "param": null, "code": "unavailable"}}\n\n')

        later = Script(fails_after_a_chunk, stream_ok)
        self.route("POST /v1/completions", later)
        chunks = hearth.client.Completion.create(model=MODEL, prompt="x", stream=True)
        self.assertEqual(next(chunks).choices[0].text, "half")
        with self.assertRaises(error.ServiceUnavailableError):
            next(chunks)
        self.assertEqual(len(later.arrivals), 1)


class AsyncRetryTest(FakeServerTest, unittest.IsolatedAsyncioTestCase):
    def setUp(self) -> None:
        super().setUp()
        hearth.client.max_retries = 2

    async def test_a_429_then_a_503_then_an_answer(self) -> None:
        script = Script(refuse(429, RATE_LIMITED, "1"), refuse(503, UNAVAILABLE, None), ok)
        self.route("GET /v1/models", script)
        self.assertEqual((await hearth.client.AsyncModel.list()).data[0].id, MODEL)
        self.assertEqual(len(script.arrivals), 3)
        self.assertGreaterEqual(script.arrivals[1] - script.arrivals[0], 1.0)

    async def test_limits_and_streams(self) -> None:
        script = Script(refuse(429, RATE_LIMITED, "0"))
        self.route("GET /v1/models", script)
        with self.assertRaises(error.RateLimitError):
            await hearth.client.AsyncModel.list(max_retries=1)
        self.assertEqual(len(script.arrivals), 2)
        script = Script(refuse(503, UNAVAILABLE, "3600"), ok)
        self.route("GET /v1/models", script)
        with self.assertRaises(error.ServiceUnavailableError):
            await hearth.client.AsyncModel.list()
        self.assertEqual(len(script.arrivals), 1)
        streamed = Script(refuse(503, UNAVAILABLE, "0"), stream_ok)
        self.route("POST /v1/chat/completions", streamed)
        chunks = await hearth.client.AsyncChatCompletion.create(model=MODEL, messages=[], stream=True)
        self.assertEqual([c.choices[0].text async for c in chunks], ["hello"])
        self.assertEqual(len(streamed.arrivals), 2)


class RetryDelayTest(unittest.TestCase):
    """The decision itself: what Retry-After says, the cap, and the backoff without it."""

    def refusal(self, status: int = 429, retry_after: Optional[str] = None, code: str = "rate_limited") -> error.HearthError:
        headers = {} if retry_after is None else {"retry-after": retry_after}
        return error.RateLimitError("no", http_status=status, code=code, headers=headers)

    def test_retry_after_in_seconds_or_as_a_date(self) -> None:
        now = 1_700_000_000.0
        self.assertEqual(retries.retry_after({"Retry-After": "7"}, now), 7.0)
        self.assertEqual(retries.retry_after({"retry-after": email.utils.formatdate(now + 30, usegmt=True)}, now), 30.0)
        self.assertEqual(retries.retry_after({"retry-after": email.utils.formatdate(now - 30, usegmt=True)}, now), 0.0)
        self.assertEqual(retries.retry_after({"retry-after": "-3"}, now), 0.0)
        self.assertIsNone(retries.retry_after({"retry-after": "soon"}, now))
        self.assertIsNone(retries.retry_after({}, now))

    def test_delays(self) -> None:
        options = RequestOptions(max_retries=5, max_retry_wait=10.0)
        self.assertEqual(retries.retry_delay(self.refusal(retry_after="4"), 0, options), 4.0)
        self.assertIsNone(retries.retry_delay(self.refusal(retry_after="11"), 0, options))
        self.assertIsNone(retries.retry_delay(self.refusal(retry_after="1"), 5, options))
        self.assertIsNone(retries.retry_delay(self.refusal(code="quota_exceeded"), 0, options))
        self.assertIsNone(retries.retry_delay(self.refusal(status=502), 0, options))
        for done in range(5):
            full = min(retries.MAX_BACKOFF, retries.INITIAL_BACKOFF * 2**done, 10.0)
            waits = {retries.retry_delay(self.refusal(status=503), done, options) for _ in range(20)}
            self.assertTrue(all(w is not None and full / 2 <= w <= full for w in waits), (done, waits))
            self.assertGreater(len(waits), 1)  # drawn, not fixed
        capped = RequestOptions(max_retries=9, max_retry_wait=1.5)
        self.assertLessEqual(retries.retry_delay(self.refusal(), 6, capped) or 99, 1.5)


if __name__ == "__main__":
    unittest.main()
