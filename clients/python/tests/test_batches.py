"""Files and batches against a running Hearth (see test_client.py for what it needs): a file of
requests uploaded, run as a batch and its answers read back equal to the greedy texts, both
clients; a refused line; a cancel; the errors."""

from __future__ import annotations

import json
import os
import tempfile
import unittest
from typing import Any, Dict, List, Sequence, Tuple

import in_tree  # noqa: F401 - before hearth: the package beside these tests
from test_client import EXPECTED, HearthTest

import hearth.client
from hearth import error


def completion_lines(model: str, cases: Sequence[Tuple[str, int]]) -> bytes:
    """A batch input of completions, custom_id ``q<i>`` for ``(prompt, max_tokens)`` i."""
    lines = [
        json.dumps(
            {
                "custom_id": f"q{i}",
                "method": "POST",
                "url": "/v1/completions",
                "body": {"model": model, "prompt": prompt, "max_tokens": max_tokens, "temperature": 0},
            }
        )
        for i, (prompt, max_tokens) in enumerate(cases)
    ]
    return ("\n".join(lines) + "\n").encode("utf-8")


def answers(content: bytes) -> Dict[str, str]:
    """custom_id → the text of an output file's answers."""
    lines = [json.loads(line) for line in content.decode("utf-8").splitlines() if line]
    for line in lines:
        assert line["error"] is None and line["response"]["status_code"] == 200, line
    return {line["custom_id"]: line["response"]["body"]["choices"][0]["text"] for line in lines}


def greedy_cases() -> Tuple[List[Tuple[str, int]], Dict[str, str]]:
    """Three requests and the texts the server must answer them with (EXPECTED's)."""
    one, multi = EXPECTED["completion"], EXPECTED["multi"]
    cases = [(one["prompt"], one["max_tokens"])] + [(p, multi["max_tokens"]) for p in multi["prompts"]]
    return cases, {"q0": one["text"], "q1": multi["texts"][0], "q2": multi["texts"][1]}


class BatchTest(HearthTest):
    def test_a_file_of_requests_runs_to_the_expected_answers(self) -> None:
        cases, expected = greedy_cases()
        data = completion_lines(self.model, cases)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "prompts.jsonl")
            with open(path, "wb") as f:
                f.write(data)
            uploaded = hearth.client.File.create(file=path)
        self.assertEqual(
            (uploaded.object, uploaded.purpose, uploaded.filename, uploaded.bytes),
            ("file", "batch", "prompts.jsonl", len(data)),
        )
        self.assertEqual(hearth.client.File.retrieve(uploaded.id).bytes, len(data))
        self.assertEqual(hearth.client.File.content(uploaded.id), data)

        created = hearth.client.Batch.create(
            input_file_id=uploaded.id, endpoint="/v1/completions", metadata={"job": "python"}
        )
        self.assertEqual((created.object, created.status, created.completion_window), ("batch", "validating", "24h"))
        seen: List[str] = []
        batch = hearth.client.Batch.wait(created.id, poll_interval=0.2, on_update=lambda b: seen.append(b.status))
        self.assertEqual(batch.status, "completed")
        self.assertEqual(seen[-1], "completed")
        self.assertEqual(batch.request_counts.to_dict(), {"total": 3, "completed": 3, "failed": 0})
        self.assertEqual(batch.metadata.to_dict(), {"job": "python"})
        self.assertIsNone(batch.error_file_id)
        self.assertEqual(answers(hearth.client.File.content(batch.output_file_id)), expected)

        self.assertIn(batch.id, [b.id for b in hearth.client.Batch.list(limit=10).data])
        listed = hearth.client.File.list(purpose="batch_output")
        self.assertIn(batch.output_file_id, [f.id for f in listed.data])
        self.assertEqual({f.purpose for f in listed.data}, {"batch_output"})
        # An ended batch's input can go.
        self.assertEqual(hearth.client.File.delete(uploaded.id).deleted, True)
        with self.assertRaises(error.NotFoundError) as gone:
            hearth.client.File.retrieve(uploaded.id)
        self.assertEqual(gone.exception.param, "file_id")

    def test_a_bad_line_fails_the_batch_naming_it(self) -> None:
        good = completion_lines(self.model, [("The ", 4)])
        bad = json.dumps({"custom_id": "bad", "method": "POST", "url": "/v1/completions", "body": {"model": 3}})
        uploaded = hearth.client.File.create(file=("broken.jsonl", good + bad.encode("utf-8")))
        self.assertEqual(uploaded.filename, "broken.jsonl")
        batch = hearth.client.Batch.create(input_file_id=uploaded.id, endpoint="/v1/completions")
        ended = hearth.client.Batch.wait(batch.id, poll_interval=0.2)
        self.assertEqual(ended.status, "failed")
        [refused] = ended.errors.data
        self.assertEqual((refused.line, refused.param, refused.code), (2, "body.model", "invalid_request"))

    def test_waiting_gives_up_and_cancel_stops_a_running_batch(self) -> None:
        data = completion_lines(self.model, [(f"Line {i} of a long batch ", 300) for i in range(100)])
        uploaded = hearth.client.File.create(file=data)
        self.assertEqual(uploaded.filename, "input.jsonl")
        batch = hearth.client.Batch.create(input_file_id=uploaded.id, endpoint="/v1/completions")
        with self.assertRaises(error.Timeout) as waited:
            hearth.client.Batch.wait(batch.id, poll_interval=0.05, timeout=0.1)
        self.assertIn(batch.id, waited.exception.message)
        with self.assertRaises(error.ConflictError):
            hearth.client.File.delete(uploaded.id)
        self.assertIn(hearth.client.Batch.cancel(batch.id).status, ("cancelling", "cancelled"))
        ended = hearth.client.Batch.wait(batch.id, poll_interval=0.2)
        self.assertEqual(ended.status, "cancelled")
        unrun = [json.loads(line) for line in hearth.client.File.content(ended.error_file_id).decode().splitlines()]
        self.assertTrue(unrun)
        self.assertEqual(len(unrun) + ended.request_counts.completed, 100)

    def test_errors(self) -> None:
        with self.assertRaises(error.InvalidRequestError) as purpose:
            hearth.client.File.create(file=b"{}", purpose="fine-tune")
        self.assertEqual((purpose.exception.http_status, purpose.exception.param), (400, "purpose"))
        with self.assertRaises(error.NotFoundError) as missing:
            hearth.client.Batch.retrieve("batch_nope")
        self.assertEqual(missing.exception.param, "batch_id")
        with self.assertRaises(error.NotFoundError):
            hearth.client.File.content("file-nope")
        with self.assertRaises(error.InvalidRequestError) as endpoint:
            hearth.client.Batch.create(input_file_id="file-nope", endpoint="/v1/images")
        self.assertEqual(endpoint.exception.param, "endpoint")


class AsyncBatchTest(HearthTest, unittest.IsolatedAsyncioTestCase):
    async def test_the_same_batch_through_the_async_client(self) -> None:
        cases, expected = greedy_cases()
        uploaded = await hearth.client.AsyncFile.create(file=("prompts.jsonl", completion_lines(self.model, cases)))
        created = await hearth.client.AsyncBatch.create(input_file_id=uploaded.id, endpoint="/v1/completions")
        updates: List[Any] = []
        batch = await hearth.client.AsyncBatch.wait(created.id, poll_interval=0.2, on_update=updates.append)
        self.assertEqual((batch.status, batch.request_counts.completed), ("completed", 3))
        self.assertTrue(updates)
        self.assertEqual(answers(await hearth.client.AsyncFile.content(batch.output_file_id)), expected)
        self.assertEqual((await hearth.client.AsyncBatch.retrieve(batch.id)).status, "completed")
        self.assertIn(batch.id, [b.id for b in (await hearth.client.AsyncBatch.list()).data])
        self.assertEqual((await hearth.client.AsyncBatch.cancel(batch.id)).status, "completed")
        self.assertIn(uploaded.id, [f.id for f in (await hearth.client.AsyncFile.list()).data])
        self.assertEqual((await hearth.client.AsyncFile.retrieve(uploaded.id)).filename, "prompts.jsonl")
        self.assertTrue((await hearth.client.AsyncFile.delete(uploaded.id)).deleted)


if __name__ == "__main__":
    unittest.main()
