"""The client against a scripted local server: error classes, streams, timeouts. No Hearth needed."""

from __future__ import annotations

import socket
import threading
import time
import unittest
import urllib.request
from http.server import BaseHTTPRequestHandler

import in_tree  # noqa: F401 - before hearth: the package beside these tests

import hearth
import hearth.client
from hearth import error

from fake_server import FakeServer, FakeServerTest, chunk, error_body, send_json, start_stream, write, write_until_disconnected

MODEL = "accounts/me/models/my-lora"


class ErrorStatusTest(FakeServerTest):
    cases = [
        (400, "invalid_request_error", "invalid_request", "temperature", error.InvalidRequestError),
        (401, "authentication_error", "unauthorized", None, error.AuthenticationError),
        (403, "permission_error", "forbidden", None, error.PermissionError),
        (404, "not_found_error", "not_found", "model", error.NotFoundError),
        (408, "invalid_request_error", "request_timeout", None, error.InvalidRequestError),
        (409, "conflict_error", "conflict", "modelId", error.ConflictError),
        (413, "invalid_request_error", "payload_too_large", None, error.InvalidRequestError),
        (429, "rate_limit_error", "rate_limited", None, error.RateLimitError),
        (429, "insufficient_quota", "quota_exceeded", None, error.RateLimitError),
        (500, "api_error", "internal", None, error.APIError),
        (503, "service_unavailable_error", "unavailable", None, error.ServiceUnavailableError),
    ]

    def test_each_status_raises_its_class_with_the_servers_fields(self) -> None:
        for status, type_, code, param, cls in self.cases:
            with self.subTest(status=status, code=code):
                message = f"message for {code}"
                self.route("POST /v1/completions", lambda h, s=status, b=error_body(message, type_, code, param): send_json(h, s, b))
                with self.assertRaises(cls) as caught:
                    hearth.client.Completion.create(model=MODEL, prompt="x")
                e = caught.exception
                self.assertIsInstance(e, error.HearthError)
                self.assertEqual(e.http_status, status)
                self.assertEqual(e.code, code)
                self.assertEqual(e.param, param)
                self.assertEqual(e.type, type_)
                self.assertEqual(e.message, message)
                self.assertEqual(str(e), message)
                self.assertEqual((e.json_body or {})["error"]["code"], code)

    def test_conflict_is_an_api_error(self) -> None:
        self.assertTrue(issubclass(error.ConflictError, error.APIError))
        self.assertTrue(issubclass(error.Timeout, error.APIConnectionError))

    def test_a_status_that_is_not_json_is_an_api_error_with_the_text(self) -> None:
        self.route("GET /v1/models", lambda h: send_json(h, 502, "<html>Bad gateway</html>", "text/html"))
        with self.assertRaises(error.APIError) as caught:
            hearth.client.Model.list()
        self.assertEqual(caught.exception.http_status, 502)
        self.assertIn("Bad gateway", caught.exception.message)
        self.assertIsNone(caught.exception.code)

    def test_an_unknown_error_status_is_an_api_error(self) -> None:
        self.route("GET /v1/models", lambda h: send_json(h, 418, error_body("teapot", "api_error", "teapot")))
        with self.assertRaises(error.APIError) as caught:
            hearth.client.Model.list()
        self.assertEqual((caught.exception.http_status, caught.exception.message), (418, "teapot"))

    def test_a_success_that_is_not_json_is_an_api_error(self) -> None:
        self.route("GET /v1/models", lambda h: send_json(h, 200, "not json", "text/plain"))
        with self.assertRaises(error.APIError):
            hearth.client.Model.list()


class StreamTest(FakeServerTest):
    def test_chunks_arrive_one_by_one_as_the_server_sends_them(self) -> None:
        release = threading.Event()

        def route(h: BaseHTTPRequestHandler) -> None:
            start_stream(h)
            write(h, chunk("The "))
            release.wait(5)
            write(h, ": a comment\r\n\r\n")
            write(h, chunk("fire") + "event: message\ndata: [DONE]\n\n")

        self.route("POST /v1/completions", route)
        chunks = hearth.client.Completion.create(model=MODEL, prompt="x", stream=True)
        first = next(chunks)  # before the server sends anything more
        self.assertEqual(first.choices[0].text, "The ")
        release.set()
        self.assertEqual([c.choices[0].text for c in chunks], ["fire"])
        sent = self.server.requests[-1]
        self.assertEqual(sent["body"], {"model": MODEL, "prompt": "x", "stream": True})
        self.assertEqual(sent["headers"]["accept"], "text/event-stream")

    def test_multi_line_data_is_joined(self) -> None:
        def route(h: BaseHTTPRequestHandler) -> None:
            start_stream(h)
            write(h, 'data: {"choices":\ndata: [{"text": "a", "index": 0}]}\n\ndata: [DONE]\n\n')

        self.route("POST /v1/completions", route)
        chunks = list(hearth.client.Completion.create(model=MODEL, prompt="x", stream=True))
        self.assertEqual(chunks[0].choices[0].text, "a")

    def test_an_error_event_raises_its_class_after_the_chunks_before_it(self) -> None:
        def route(h: BaseHTTPRequestHandler) -> None:
            start_stream(h)
            write(h, chunk("one "))
            write(h, "data: " + '{"error": {"message": "The worker went away.", "type": "service_unavailable_error", "param": null, "code": "unavailable"}}' + "\n\n")
            write(h, "data: [DONE]\n\n")

        self.route("POST /v1/chat/completions", route)
        chunks = hearth.client.ChatCompletion.create(model=MODEL, messages=[], stream=True)
        self.assertEqual(next(chunks).choices[0].text, "one ")
        with self.assertRaises(error.ServiceUnavailableError) as caught:
            next(chunks)
        self.assertEqual(caught.exception.message, "The worker went away.")
        self.assertEqual((caught.exception.code, caught.exception.http_status), ("unavailable", 503))

    def test_an_error_status_raises_before_iterating(self) -> None:
        self.route("POST /v1/completions", lambda h: send_json(h, 404, error_body("no such model", "not_found_error", "not_found", "model")))
        with self.assertRaises(error.NotFoundError):
            hearth.client.Completion.create(model=MODEL, prompt="x", stream=True)

    def test_a_stream_cut_before_done_raises(self) -> None:
        def route(h: BaseHTTPRequestHandler) -> None:
            start_stream(h)
            write(h, chunk("half"))

        self.route("POST /v1/completions", route)
        chunks = hearth.client.Completion.create(model=MODEL, prompt="x", stream=True)
        self.assertEqual(next(chunks).choices[0].text, "half")
        with self.assertRaises(error.APIConnectionError):
            next(chunks)

    def test_closing_the_iterator_closes_the_connection(self) -> None:
        def route(h: BaseHTTPRequestHandler) -> None:
            start_stream(h)
            write(h, chunk("first"))
            write_until_disconnected(h, self.server)

        self.route("POST /v1/completions", route)
        chunks = hearth.client.Completion.create(model=MODEL, prompt="x", stream=True)
        self.assertEqual(next(chunks).choices[0].text, "first")
        chunks.close()
        self.assertTrue(self.server.disconnected.wait(5), "the server never saw the client hang up")

    def test_a_stream_that_is_not_event_stream_is_an_api_error(self) -> None:
        self.route("POST /v1/completions", lambda h: send_json(h, 200, {"choices": []}))
        with self.assertRaises(error.APIError):
            hearth.client.Completion.create(model=MODEL, prompt="x", stream=True)


class TimeoutAndConnectionTest(FakeServerTest):
    def test_a_slow_answer_times_out(self) -> None:
        def slow(h: BaseHTTPRequestHandler) -> None:
            time.sleep(1.5)
            send_json(h, 200, {"object": "list", "data": []})

        self.route("GET /v1/models", slow)
        started = time.monotonic()
        with self.assertRaises(error.Timeout):
            hearth.client.Model.list(request_timeout=0.3)
        self.assertLess(time.monotonic() - started, 1.4)

    def test_the_module_timeout_applies_too(self) -> None:
        def slow(h: BaseHTTPRequestHandler) -> None:
            time.sleep(1.5)
            send_json(h, 200, {})

        self.route("GET /v1/models", slow)
        hearth.client.request_timeout = 0.3
        with self.assertRaises(error.Timeout):
            hearth.client.Model.list()

    def test_a_stalled_stream_times_out(self) -> None:
        def route(h: BaseHTTPRequestHandler) -> None:
            start_stream(h)
            write(h, chunk("a"))
            time.sleep(1.5)

        self.route("POST /v1/completions", route)
        chunks = hearth.client.Completion.create(model=MODEL, prompt="x", stream=True, request_timeout=0.3)
        next(chunks)
        with self.assertRaises(error.Timeout):
            next(chunks)

    def test_no_server_is_a_connection_error(self) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        with self.assertRaises(error.APIConnectionError):
            hearth.client.Model.list(api_base=f"http://127.0.0.1:{port}")


if __name__ == "__main__":
    unittest.main()


class ResumeTest(FakeServerTest):
    """A stream whose connection breaks picks up again after its last event ID, by itself."""

    def test_a_broken_stream_resumes_after_its_last_event_id(self) -> None:
        def first(h: BaseHTTPRequestHandler) -> None:
            start_stream(h, request_id="req-1")
            write(h, "id: 1\n" + chunk("one "))
            write(h, "id: 2\n" + chunk("two "))
            # The connection breaks here, before [DONE].

        def rest(h: BaseHTTPRequestHandler) -> None:
            start_stream(h, request_id="req-1")
            write(h, "id: 3\n" + chunk("three"))
            write(h, "data: [DONE]\n\n")

        self.route("POST /v1/completions", first)
        self.route("GET /v1/streams/req-1", rest)
        chunks = hearth.client.Completion.create(model=MODEL, prompt="x", stream=True)
        self.assertEqual(chunks.request_id, "req-1")
        self.assertEqual("".join(c.choices[0].text for c in chunks), "one two three")
        self.assertEqual((chunks.resumed, chunks.last_event_id), (1, "3"))
        resumed = self.server.requests[-1]
        self.assertEqual((resumed["method"], resumed["headers"]["last-event-id"]), ("GET", "2"))

    def test_a_stream_that_keeps_breaking_raises_after_the_last_resume(self) -> None:
        def broken(h: BaseHTTPRequestHandler) -> None:
            start_stream(h, request_id="req-2")

        self.route("POST /v1/completions", broken)
        self.route("GET /v1/streams/req-2", broken)
        with self.assertRaises(error.APIConnectionError):
            list(hearth.client.Completion.create(model=MODEL, prompt="x", stream=True))
        self.assertEqual(len(self.server.requests), 1 + hearth.stream_progress.MAX_RESUMES)

    def test_resume_by_request_id(self) -> None:
        def rest(h: BaseHTTPRequestHandler) -> None:
            start_stream(h, request_id="req-3")
            write(h, "id: 5\n" + chunk("later"))
            write(h, "data: [DONE]\n\n")

        self.route("GET /v1/streams/req-3", rest)
        chunks = hearth.client.Stream.resume("req-3", "4")
        self.assertEqual([c.choices[0].text for c in chunks], ["later"])
        self.assertEqual(self.server.requests[-1]["headers"]["last-event-id"], "4")


class RedirectTest(FakeServerTest):
    def redirect_to(self, location: str):  # type: ignore[no-untyped-def]
        def handler(h: BaseHTTPRequestHandler) -> None:
            h.send_response(307)
            h.send_header("Location", location)
            h.send_header("Content-Length", "0")
            h.end_headers()

        return handler

    def test_the_key_follows_a_redirect_on_the_same_origin(self) -> None:
        self.route("GET /v1/models", self.redirect_to(self.server.url + "/v1/models-moved"))
        self.route("GET /v1/models-moved", lambda h: send_json(h, 200, {"object": "list", "data": []}))
        hearth.client.Model.list()
        self.assertEqual(self.server.requests[-1]["path"], "/v1/models-moved")
        self.assertEqual(self.server.requests[-1]["headers"].get("authorization"), "Bearer hth_fake_key")

    def test_the_key_does_not_follow_a_redirect_to_another_origin(self) -> None:
        with FakeServer() as other:
            other.routes["GET /v1/models"] = lambda h: send_json(h, 200, {"object": "list", "data": []})
            self.route("GET /v1/models", self.redirect_to(other.url + "/v1/models"))
            hearth.client.Model.list()
            self.assertEqual(len(other.requests), 1)
            self.assertNotIn("authorization", other.requests[0]["headers"])

    def test_the_key_does_not_follow_a_downgrade_from_https_to_http(self) -> None:
        from hearth import api_requestor

        request = urllib.request.Request("https://hearth.example/v1/models", headers={"Authorization": "Bearer k"})
        handler = api_requestor._KeySafeRedirects()
        for target, kept in [
            ("http://hearth.example/v1/models", False),
            ("https://hearth.example:8443/v1/models", False),
            ("https://HEARTH.example:443/v1/other", True),
        ]:
            with self.subTest(target=target):
                redirected = handler.redirect_request(request, None, 302, "Found", {}, target)
                self.assertEqual(redirected.has_header("Authorization"), kept)
