import type { BenchHttp } from "./http-client.js";
import type { SteadyClient } from "./steady-client.js";

/** How often a batch's state is read while it runs. */
const POLL_MS = 50;

/** A batch run to its end: its lines answered and failed, its times, the tokens its output counts. */
export interface BatchTiming {
  lines: number;
  failed: number;
  /** From its creation to its completion (validation and output files included). */
  seconds: number;
  /** While it was seen in progress: its lines running. */
  inProgressSeconds: number;
  tokens: number;
}

/** The batch scenario's client of the files and batches API, as one account. */
export class BatchClient {
  constructor(
    private readonly url: string,
    private readonly apiKey: string,
    private readonly http: BenchHttp,
  ) {}

  /** Uploads `text` as a batch input file; its ID. */
  async upload(text: string): Promise<string> {
    const form = new FormData();
    form.set("purpose", "batch");
    form.set("file", new Blob([text], { type: "application/jsonl" }), "bench.jsonl");
    const res = await fetch(`${this.url}/v1/files`, {
      method: "POST",
      headers: { authorization: `Bearer ${this.apiKey}` },
      body: form,
    });
    const body = (await res.json()) as { id?: string };
    if (res.status !== 200 || !body.id) {
      throw new Error(`could not upload a batch file: HTTP ${res.status} ${JSON.stringify(body)}`);
    }
    return body.id;
  }

  /**
   * Runs a batch of chat completions from `fileId` to its end. With `interactive`, its client
   * sends a request every `periodMs` while the batch runs (from its creation, validation taking
   * milliseconds, until nine tenths of its lines have a result; at least one request), their
   * times to first token added to `ttfts`.
   */
  async run(
    fileId: string,
    interactive?: { client: SteadyClient; periodMs: number; ttfts: number[] },
  ): Promise<BatchTiming> {
    const started = performance.now();
    const created = await this.http.postJson("/v1/batches", {
      input_file_id: fileId,
      endpoint: "/v1/chat/completions",
      completion_window: "24h",
    });
    if (created.status !== 200) throw new Error(`could not create a batch: ${JSON.stringify(created.body)}`);
    const { id } = created.body as BatchState;
    const steady = interactive?.client.steady(interactive.periodMs);
    let stopped = false;
    let inProgressAt: number | undefined;
    let inProgressUntil: number | undefined;
    let state: BatchState;
    for (;;) {
      state = (await this.http.getJson(`/v1/batches/${id}`)).body as BatchState;
      const now = performance.now();
      if (state.status === "in_progress") inProgressAt ??= now;
      else if (inProgressAt !== undefined) inProgressUntil ??= now;
      const done = state.request_counts.completed + state.request_counts.failed;
      const running = state.status === "validating" || state.status === "in_progress";
      if (
        steady &&
        !stopped &&
        (!running || (state.request_counts.total > 0 && done >= 0.9 * state.request_counts.total))
      ) {
        stopped = true;
        interactive!.ttfts.push(...(await steady.stop()));
      }
      if (ENDED.includes(state.status)) break;
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
    const ended = performance.now();
    if (state.status !== "completed") throw new Error(`the batch ended ${state.status}: ${JSON.stringify(state)}`);
    let tokens = 0;
    if (state.output_file_id) {
      const text = await this.http.getText(`/v1/files/${state.output_file_id}/content`);
      for (const line of text.trim().split("\n")) {
        const parsed = JSON.parse(line) as { response: { body: { usage?: { completion_tokens: number } } } | null };
        tokens += parsed.response?.body.usage?.completion_tokens ?? 0;
      }
    }
    return {
      lines: state.request_counts.completed,
      failed: state.request_counts.failed,
      seconds: (ended - started) / 1000,
      inProgressSeconds: ((inProgressUntil ?? ended) - (inProgressAt ?? started)) / 1000,
      tokens,
    };
  }
}

const ENDED = ["completed", "failed", "expired", "cancelled"];

interface BatchState {
  id: string;
  status: string;
  output_file_id: string | null;
  request_counts: { total: number; completed: number; failed: number };
}
