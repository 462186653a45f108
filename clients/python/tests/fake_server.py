"""A scripted HTTP server on 127.0.0.1 for the tests that need answers Hearth cannot be made to give."""

from __future__ import annotations

import json
import os
import sys
import threading
import time
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, List, Optional
from unittest import mock

import in_tree  # noqa: F401 - before hearth: the package beside these tests

import hearth.client

# A route answers one request: it gets the handler and writes the whole answer itself.
Route = Callable[[BaseHTTPRequestHandler], None]


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], OSError):
            return  # a client that hung up on purpose (timeouts, closed streams)
        super().handle_error(request, client_address)


class FakeServer:
    """Answers ``(method, path)`` with the route registered for it; records every request."""

    def __init__(self) -> None:
        self.routes: Dict[str, Route] = {}
        self.requests: List[Dict[str, Any]] = []
        self.disconnected = threading.Event()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _handle(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                owner.requests.append(
                    {
                        "method": self.command,
                        "path": self.path,
                        "headers": {k.lower(): v for k, v in self.headers.items()},
                        "body": json.loads(raw) if raw else None,
                    }
                )
                route = owner.routes.get(f"{self.command} {self.path.split('?')[0]}")
                if route is None:
                    send_json(self, 404, {"error": {"message": f"no route {self.path}", "type": "not_found_error", "param": None, "code": "not_found"}})
                else:
                    route(self)

            do_GET = do_POST = do_PUT = do_DELETE = _handle

        self.httpd = _QuietServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __enter__(self) -> "FakeServer":
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def send_json(handler: BaseHTTPRequestHandler, status: int, body: Any, content_type: str = "application/json") -> None:
    raw = (body if isinstance(body, str) else json.dumps(body)).encode("utf-8")
    handler.send_response(status)
    handler.send_header("Content-Type", content_type)
    handler.send_header("Content-Length", str(len(raw)))
    handler.end_headers()
    handler.wfile.write(raw)


def error_body(message: str, type: str, code: str, param: Optional[str] = None) -> Dict[str, Any]:
    return {"error": {"message": message, "type": type, "param": param, "code": code}}


def start_stream(handler: BaseHTTPRequestHandler, request_id: Optional[str] = None) -> None:
    handler.send_response(200)
    if request_id is not None:
        handler.send_header("x-request-id", request_id)
    handler.send_header("Content-Type", "text/event-stream; charset=utf-8")
    handler.send_header("Cache-Control", "no-cache")
    handler.send_header("Connection", "close")
    handler.end_headers()


def write(handler: BaseHTTPRequestHandler, text: str) -> None:
    handler.wfile.write(text.encode("utf-8"))
    handler.wfile.flush()


def chunk(text: str, index: int = 0) -> str:
    return "data: " + json.dumps({"object": "text_completion", "choices": [{"text": text, "index": index, "finish_reason": None}]}) + "\n\n"


def write_until_disconnected(handler: BaseHTTPRequestHandler, server: FakeServer, seconds: float = 10.0) -> None:
    """Keeps writing comments until the client hangs up (then sets ``server.disconnected``) or time runs out."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            write(handler, ": keep-alive\n\n")
        except OSError:
            server.disconnected.set()
            return
        time.sleep(0.02)


class FakeServerTest(unittest.TestCase):
    def setUp(self) -> None:
        self.server = FakeServer().__enter__()
        self.addCleanup(self.server.__exit__)
        patcher = mock.patch.multiple(
            hearth.client, api_key="hth_fake_key", api_base=self.server.url + "/v1", request_timeout=5.0, max_retries=0
        )
        patcher.start()
        self.addCleanup(patcher.stop)
        env = mock.patch.dict(os.environ, {}, clear=False)
        env.start()
        self.addCleanup(env.stop)
        for name in ("HEARTH_API_KEY", "SERVICE_API_KEY", "HEARTH_BASE_URL"):
            os.environ.pop(name, None)

    def route(self, key: str, handler: Any) -> None:
        self.server.routes[key] = handler
