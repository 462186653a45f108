import cliProgress from "cli-progress";
import { type Batch, type BatchClient, hasEnded } from "./batch-client.js";
import { batchDetails, batchEnding, batchProgress, batchStatus, errorLine, resultHints } from "./batch-view.js";
import { interruptSignal } from "./command-kit.js";
import type { CliContext } from "./context.js";
import { CliError, EXIT } from "./exit-codes.js";
import type { Output } from "./output.js";

/**
 * `--wait` on a batch: its progress until it ends (a bar of the requests with a result on a
 * terminal, a line per status otherwise), then its end. Ctrl-C stops the waiting, never the
 * batch. A batch that ends other than completed ends the command with exit code 1.
 */
export async function waitForBatch(ctx: CliContext, client: BatchClient, start: Batch): Promise<Batch> {
  const progress = new BatchProgress(ctx.out, start);
  const interrupt = interruptSignal();
  let batch: Batch;
  try {
    batch = await client.waitForBatch(start.id, { onUpdate: (b) => progress.show(b), signal: interrupt.signal });
  } finally {
    interrupt.release();
    progress.end();
  }
  if (interrupt.signal.aborted && !hasEnded(batch)) {
    throw new CliError(
      EXIT.interrupted,
      `Stopped waiting; ${batch.id} goes on: ${batch.status}, ${batchProgress(batch)} requests run.`,
      `Wait again with \`hearth get batch ${batch.id} --wait\`, or stop it with \`hearth cancel batch ${batch.id}\`.`,
    );
  }
  return batch;
}

/** Prints an ended batch: its end, its files and how to fetch them; exit code 1 unless it completed. */
export function reportEndedBatch(ctx: CliContext, batch: Batch): void {
  const { out } = ctx;
  out.result(
    batch,
    () =>
      batch.status === "completed"
        ? [batchEnding(out, batch), ...resultHints(batch)]
        : [batchEnding(out, batch), "", ...batchDetails(out, batch)],
    () => batch.id,
  );
  if (batch.status === "completed") return;
  const { total, completed, failed } = batch.request_counts;
  const ran = `${completed + failed} of ${total} requests run`;
  const first = batch.errors?.data[0];
  const message =
    batch.status === "failed"
      ? `${batch.id} failed: its input file was refused${first ? ` (${errorLine(first)})` : ""}.`
      : batch.status === "expired"
        ? `${batch.id} expired: its window ended with ${ran}.`
        : `${batch.id} was ${batch.status} with ${ran}.`;
  throw new CliError(
    EXIT.failure,
    message,
    batch.status === "failed"
      ? "Fix the file and create the batch again."
      : "What ran is in its files; run the rest in a new batch.",
  );
}

/** On a terminal a bar of the requests with a result; otherwise a line per status change. */
class BatchProgress {
  private readonly bar: cliProgress.SingleBar | undefined;
  private last: string | undefined;

  constructor(
    private readonly out: Output,
    batch: Batch,
  ) {
    if (!out.live) return;
    this.bar = new cliProgress.SingleBar(
      {
        stream: out.stderr,
        format: "{id} [{bar}] {status} | {progress} | {duration_formatted}",
        barsize: 30,
        hideCursor: true,
        fps: 5,
      },
      cliProgress.Presets.shades_classic,
    );
    this.bar.start(Math.max(batch.request_counts.total, 1), 0, this.payload(batch));
  }

  show(batch: Batch): void {
    const { total, completed, failed } = batch.request_counts;
    if (this.bar) {
      this.bar.setTotal(Math.max(total, 1));
      this.bar.update(completed + failed, this.payload(batch));
    } else if (batch.status !== this.last) {
      this.out.note(`${batch.id}: ${batch.status}${total ? `, ${batchProgress(batch)} requests run` : ""}`);
    }
    this.last = batch.status;
  }

  end(): void {
    this.bar?.stop();
  }

  private payload(batch: Batch) {
    return {
      id: batch.id,
      status: batchStatus(this.out, batch.status, this.out.stderr),
      progress: batch.request_counts.total ? `${batchProgress(batch)} requests run` : "counting the requests",
    };
  }
}
