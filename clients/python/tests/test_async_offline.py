"""The async client against a scripted local server: its own transport (asyncio), no Hearth needed."""

from __future__ import annotations

import asyncio
import threading
import time
import unittest
from http.server import BaseHTTPRequestHandler

import in_tree  # noqa: F401 - before hearth: the package beside these tests

import hearth.client
from hearth import error

from fake_server import FakeServer, FakeServerTest, chunk, error_body, send_json, start_stream, write, write_until_disconnected

MODEL = "accounts/me/models/my-lora"


class AsyncFakeServerTest(FakeServerTest, unittest.IsolatedAsyncioTestCase):
    pass


def chunked_stream(h: BaseHTTPRequestHandler, pieces: "list[str]") -> None:
    """An event stream in chunked transfer encoding (as Hearth sends one), cut anywhere."""
    h.send_response(200)
    h.send_header("Content-Type", "text/event-stream")
    h.send_header("Transfer-Encoding", "chunked")
    h.end_headers()
    for piece in pieces:
        raw = piece.encode("utf-8")
        h.wfile.write(f"{len(raw):x}\r\n".encode() + raw + b"\r\n")
        h.wfile.flush()
    h.wfile.write(b"0\r\n\r\n")


class AsyncAnswerTest(AsyncFakeServerTest):
    async def test_a_json_answer_and_the_request_it_came_from(self) -> None:
        self.route("POST /v1/completions", lambda h: send_json(h, 200, {"object": "text_completion", "choices": [{"text": "hi", "index": 0}]}))
        r = await hearth.client.AsyncCompletion.create(model=MODEL, prompt=[1, 2, 3], max_tokens=2, request_timeout=3)
        self.assertEqual(r.choices[0].text, "hi")
        sent = self.server.requests[-1]
        self.assertEqual(sent["body"], {"model": MODEL, "prompt": [1, 2, 3], "max_tokens": 2})
        self.assertEqual(sent["headers"]["authorization"], "Bearer hth_fake_key")
        self.assertEqual(sent["headers"]["user-agent"], f"hearth-python/{hearth.__version__}")

    async def test_each_error_status_raises_its_class(self) -> None:
        for status, code, cls in [
            (400, "invalid_request", error.InvalidRequestError),
            (404, "not_found", error.NotFoundError),
            (429, "rate_limited", error.RateLimitError),
            (500, "internal", error.APIError),
            (503, "unavailable", error.ServiceUnavailableError),
        ]:
            with self.subTest(status=status):
                self.route("GET /v1/models", lambda h, s=status, c=code: send_json(h, s, error_body("no", "t", c, "model")))
                with self.assertRaises(cls) as caught:
                    await hearth.client.AsyncModel.list()
                self.assertEqual((caught.exception.http_status, caught.exception.code, caught.exception.param), (status, code, "model"))

    async def test_a_chunked_json_answer(self) -> None:
        def route(h: BaseHTTPRequestHandler) -> None:
            chunked_stream(h, ['{"object": "list", ', '"data": [{"id": "é"}]}'])

        self.route("GET /v1/models", route)
        self.assertEqual((await hearth.client.AsyncModel.list()).data[0].id, "é")

    async def test_embeddings_and_retrieve(self) -> None:
        self.route("POST /v1/embeddings", lambda h: send_json(h, 200, {"object": "list", "data": [{"index": 0, "embedding": [1.0]}]}))
        self.route("GET /v1/accounts/me/models/my-lora", lambda h: send_json(h, 200, {"name": MODEL, "state": "READY"}))
        r = await hearth.client.AsyncEmbedding.create(model=MODEL, input=[[5, 6], [7]], dimensions=1)
        self.assertEqual(r.data[0].embedding, [1.0])
        self.assertEqual(self.server.requests[-1]["body"]["input"], [[5, 6], [7]])
        self.assertEqual((await hearth.client.AsyncModel.retrieve(MODEL)).state, "READY")
        with self.assertRaises(error.InvalidRequestError):
            await hearth.client.AsyncModel.retrieve("my-lora")


class AsyncStreamTest(AsyncFakeServerTest):
    async def test_chunks_arrive_one_by_one_across_chunk_boundaries(self) -> None:
        release = threading.Event()

        def route(h: BaseHTTPRequestHandler) -> None:
            h.send_response(200)
            h.send_header("Content-Type", "text/event-stream")
            h.send_header("Transfer-Encoding", "chunked")
            h.end_headers()
            first = chunk("The ").encode()
            h.wfile.write(f"{len(first):x}\r\n".encode() + first + b"\r\n")
            h.wfile.flush()
            release.wait(5)
            rest = (chunk("fi") + ": comment\n\n" + chunk("re") + "data: [DONE]\n\n").encode()
            for part in (rest[:7], rest[7:60], rest[60:]):  # events split across HTTP chunks
                h.wfile.write(f"{len(part):x}\r\n".encode() + part + b"\r\n")
                h.wfile.flush()
            h.wfile.write(b"0\r\n\r\n")

        self.route("POST /v1/completions", route)
        chunks = await hearth.client.AsyncCompletion.create(model=MODEL, prompt="x", stream=True)
        self.assertEqual((await chunks.__anext__()).choices[0].text, "The ")
        release.set()
        self.assertEqual([c.choices[0].text async for c in chunks], ["fi", "re"])
        self.assertEqual(self.server.requests[-1]["body"], {"model": MODEL, "prompt": "x", "stream": True})
        self.assertEqual(self.server.requests[-1]["headers"]["accept"], "text/event-stream")

    async def test_an_error_event_raises_its_class_after_the_chunks_before_it(self) -> None:
        def route(h: BaseHTTPRequestHandler) -> None:
            start_stream(h)
            write(h, chunk("one "))
            write(h, "data: " + '{"error": {"message": "gone", "type": "t", "param": null, "code": "unavailable"}}' + "\n\n")

        self.route("POST /v1/chat/completions", route)
        chunks = await hearth.client.AsyncChatCompletion.create(model=MODEL, messages=[], stream=True)
        self.assertEqual((await chunks.__anext__()).choices[0].text, "one ")
        with self.assertRaises(error.ServiceUnavailableError):
            await chunks.__anext__()

    async def test_an_error_status_raises_before_iterating_and_a_non_stream_is_an_api_error(self) -> None:
        self.route("POST /v1/completions", lambda h: send_json(h, 404, error_body("no", "not_found_error", "not_found", "model")))
        with self.assertRaises(error.NotFoundError):
            await hearth.client.AsyncCompletion.create(model=MODEL, prompt="x", stream=True)
        self.route("POST /v1/completions", lambda h: send_json(h, 200, {"choices": []}))
        with self.assertRaises(error.APIError):
            await hearth.client.AsyncCompletion.create(model=MODEL, prompt="x", stream=True)

    async def test_closing_the_stream_closes_the_connection(self) -> None:
        def route(h: BaseHTTPRequestHandler) -> None:
            start_stream(h)
            write(h, chunk("first"))
            write_until_disconnected(h, self.server)

        self.route("POST /v1/completions", route)
        async with await hearth.client.AsyncCompletion.create(model=MODEL, prompt="x", stream=True) as chunks:
            self.assertEqual((await chunks.__anext__()).choices[0].text, "first")
        disconnected = await asyncio.get_running_loop().run_in_executor(None, self.server.disconnected.wait, 5)
        self.assertTrue(disconnected, "the server never saw the client hang up")

    async def test_a_broken_stream_resumes_after_its_last_event_id(self) -> None:
        def first(h: BaseHTTPRequestHandler) -> None:
            start_stream(h, request_id="req-a")
            write(h, "id: 1\n" + chunk("one "))

        def rest(h: BaseHTTPRequestHandler) -> None:
            start_stream(h, request_id="req-a")
            write(h, "id: 2\n" + chunk("two") + "data: [DONE]\n\n")

        self.route("POST /v1/completions", first)
        self.route("GET /v1/streams/req-a", rest)
        chunks = await hearth.client.AsyncCompletion.create(model=MODEL, prompt="x", stream=True)
        self.assertEqual("".join([c.choices[0].text async for c in chunks]), "one two")
        self.assertEqual((chunks.request_id, chunks.resumed, chunks.last_event_id), ("req-a", 1, "2"))
        self.assertEqual(self.server.requests[-1]["headers"]["last-event-id"], "1")
        resumed = await hearth.client.AsyncStream.resume("req-a", "1")
        self.assertEqual([c.choices[0].text async for c in resumed], ["two"])

    async def test_a_stream_cut_without_a_request_id_raises(self) -> None:
        def route(h: BaseHTTPRequestHandler) -> None:
            start_stream(h)
            write(h, chunk("half"))

        self.route("POST /v1/completions", route)
        chunks = await hearth.client.AsyncCompletion.create(model=MODEL, prompt="x", stream=True)
        await chunks.__anext__()
        with self.assertRaises(error.APIConnectionError):
            await chunks.__anext__()


class AsyncTransportTest(AsyncFakeServerTest):
    async def test_a_slow_answer_and_a_stalled_stream_time_out(self) -> None:
        def slow(h: BaseHTTPRequestHandler) -> None:
            time.sleep(1.5)
            send_json(h, 200, {})

        def stalled(h: BaseHTTPRequestHandler) -> None:
            start_stream(h)
            write(h, chunk("a"))
            time.sleep(1.5)

        self.route("GET /v1/models", slow)
        self.route("POST /v1/completions", stalled)
        with self.assertRaises(error.Timeout):
            await hearth.client.AsyncModel.list(request_timeout=0.3)
        chunks = await hearth.client.AsyncCompletion.create(model=MODEL, prompt="x", stream=True, request_timeout=0.3)
        await chunks.__anext__()
        with self.assertRaises(error.Timeout):
            await chunks.__anext__()

    async def test_no_server_is_a_connection_error(self) -> None:
        import socket

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        with self.assertRaises(error.APIConnectionError):
            await hearth.client.AsyncModel.list(api_base=f"http://127.0.0.1:{port}")

    async def test_redirects_keep_the_key_on_the_same_origin_only(self) -> None:
        def redirect_to(location: str):  # type: ignore[no-untyped-def]
            def handler(h: BaseHTTPRequestHandler) -> None:
                h.send_response(307)
                h.send_header("Location", location)
                h.send_header("Content-Length", "0")
                h.end_headers()

            return handler

        self.route("GET /v1/models", redirect_to("/v1/models-moved"))
        self.route("GET /v1/models-moved", lambda h: send_json(h, 200, {"object": "list", "data": []}))
        await hearth.client.AsyncModel.list()
        self.assertEqual(self.server.requests[-1]["headers"].get("authorization"), "Bearer hth_fake_key")
        with FakeServer() as other:
            other.routes["GET /v1/models"] = lambda h: send_json(h, 200, {"object": "list", "data": []})
            self.route("GET /v1/models", redirect_to(other.url + "/v1/models"))
            await hearth.client.AsyncModel.list()
            self.assertNotIn("authorization", other.requests[0]["headers"])
        self.route("POST /v1/completions", redirect_to("/v1/elsewhere"))
        with self.assertRaises(error.APIError) as caught:  # a POST does not follow a 307, as in urllib
            await hearth.client.AsyncCompletion.create(model=MODEL, prompt="x")
        self.assertEqual(caught.exception.http_status, 307)


if __name__ == "__main__":
    unittest.main()
