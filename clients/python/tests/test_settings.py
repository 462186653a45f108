"""Settings (key, base URL), request shape and answer objects, against a scripted local server."""

from __future__ import annotations

import os
import pickle
import unittest
from typing import Any, Dict

import in_tree  # noqa: F401 - before hearth: the package beside these tests

import hearth
import hearth.client
from hearth import error
from hearth.hearth_object import HearthObject

from fake_server import FakeServerTest, send_json

MODEL = "accounts/me/models/my-lora"


class SettingsTest(FakeServerTest):
    def setUp(self) -> None:
        super().setUp()
        self.route("GET /v1/models", lambda h: send_json(h, 200, {"object": "list", "data": []}))

    def sent_key(self) -> str:
        hearth.client.Model.list()
        return str(self.server.requests[-1]["headers"]["authorization"])

    def test_key_precedence_call_module_hearth_api_key_service_api_key(self) -> None:
        os.environ["SERVICE_API_KEY"] = "from-service"
        os.environ["HEARTH_API_KEY"] = "from-hearth"
        hearth.client.Model.list(api_key="from-call")
        self.assertEqual(self.server.requests[-1]["headers"]["authorization"], "Bearer from-call")
        self.assertEqual(self.sent_key(), "Bearer hth_fake_key")
        hearth.client.api_key = None
        self.assertEqual(self.sent_key(), "Bearer from-hearth")
        del os.environ["HEARTH_API_KEY"]
        self.assertEqual(self.sent_key(), "Bearer from-service")

    def test_no_key_at_all_raises_before_sending(self) -> None:
        hearth.client.api_key = None
        with self.assertRaises(error.AuthenticationError) as caught:
            hearth.client.Model.list()
        self.assertIsNone(caught.exception.http_status)
        self.assertEqual(self.server.requests, [])

    def test_base_url_with_or_without_v1(self) -> None:
        for base in (self.server.url, self.server.url + "/", self.server.url + "/v1", self.server.url + "/v1/"):
            with self.subTest(base=base):
                hearth.client.Model.list(api_base=base)
                self.assertEqual(self.server.requests[-1]["path"], "/v1/models")

    def test_base_url_from_the_environment(self) -> None:
        hearth.client.api_base = None
        os.environ["HEARTH_BASE_URL"] = self.server.url
        hearth.client.Model.list()
        self.assertEqual(self.server.requests[-1]["path"], "/v1/models")

    def test_default_base_url(self) -> None:
        from hearth.settings import resolve_api_base

        hearth.client.api_base = None
        self.assertEqual(resolve_api_base(), "http://localhost:8080/v1")

    def test_a_base_url_that_is_not_http_is_refused(self) -> None:
        with self.assertRaises(error.InvalidRequestError) as caught:
            hearth.client.Model.list(api_base="localhost:8080")
        self.assertEqual(caught.exception.param, "api_base")

    def test_requests_carry_json_and_a_user_agent(self) -> None:
        self.route("POST /v1/embeddings", lambda h: send_json(h, 200, {"object": "list", "data": [{"index": 0, "embedding": [1.0]}]}))
        r = hearth.client.Embedding.create(model=MODEL, input="é", dimensions=1)
        self.assertEqual(r.data[0].embedding, [1.0])
        sent = self.server.requests[-1]
        self.assertEqual(sent["body"], {"model": MODEL, "input": "é", "dimensions": 1})
        self.assertEqual(sent["headers"]["content-type"], "application/json")
        self.assertEqual(sent["headers"]["user-agent"], f"hearth-python/{hearth.__version__}")

    def test_retrieve_asks_the_management_api(self) -> None:
        self.route("GET /v1/accounts/me/models/my-lora", lambda h: send_json(h, 200, {"name": MODEL, "state": "READY"}))
        self.assertEqual(hearth.client.Model.retrieve(MODEL).state, "READY")
        with self.assertRaises(error.InvalidRequestError):
            hearth.client.Model.retrieve("my-lora")


class HearthObjectTest(unittest.TestCase):
    def test_attribute_and_key_access_all_the_way_down(self) -> None:
        raw: Dict[str, Any] = {"choices": [{"text": "hi", "index": 0}], "usage": {"total_tokens": 3}, "items": 1}
        r = HearthObject(raw)
        self.assertEqual(r.choices[0].text, "hi")
        self.assertEqual(r["choices"][0]["text"], "hi")
        self.assertEqual(r.usage.total_tokens, 3)
        self.assertEqual(r["items"], 1)
        self.assertEqual(r.to_dict(), raw)
        self.assertIs(type(r.to_dict()["choices"][0]), dict)
        with self.assertRaises(AttributeError):
            r.missing
        r.extra = {"a": 1}
        self.assertEqual(r["extra"].a, 1)
        self.assertEqual(pickle.loads(pickle.dumps(r)), r)
        self.assertIn('"text": "hi"', str(r))



if __name__ == "__main__":
    unittest.main()
