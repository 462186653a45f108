import type { Session } from "../../auth/sessions.js";
import type { BatchRow } from "../../db/schema/batches.js";
import { CANCELLABLE_BATCH_STATUSES, OPEN_BATCH_STATUSES } from "../../domain/batch.js";
import { When } from "./page-time.js";
import { Table } from "./table.js";

/**
 * What the batches' pages (batch-pages.tsx) and the operators' console show of a batch. The
 * status and the progress carry the batch's ID (`data-batch`), so that static/batches.js can
 * update them from the API while the batch runs.
 */

export const isOpen = (batch: Pick<BatchRow, "status">) => OPEN_BATCH_STATUSES.includes(batch.status);
export const isCancellable = (batch: Pick<BatchRow, "status">) => CANCELLABLE_BATCH_STATUSES.includes(batch.status);

/** The batch's state as a badge: green when it completed, red when it ended otherwise. */
export function BatchStatusBadge(props: { batch: Pick<BatchRow, "id" | "status"> }) {
  const { id, status } = props.batch;
  const tone = status === "completed" ? "ready" : isOpen(props.batch) ? "running" : "failed";
  return (
    <span class={`badge state-${tone}`} data-batch={id} data-status={status}>
      {status}
    </span>
  );
}

/**
 * How many of the batch's lines have a result, of how many: a progress bar (indeterminate while
 * the batch is validating and its lines are not counted yet), and the counts as `<data>`.
 */
export function BatchProgress(props: { batch: Pick<BatchRow, "id" | "status" | "total" | "completed" | "failed"> }) {
  const { id, total, completed, failed } = props.batch;
  const counted = total > 0 || !isOpen(props.batch);
  return (
    <div class="batch-progress" data-batch={id}>
      <progress
        max={Math.max(total, 1)}
        value={counted ? completed + failed : undefined}
        aria-label={`Lines of ${id} done`}
      />
      <span class="small">
        <data class="completed" value={String(completed)}>
          {completed}
        </data>{" "}
        completed,{" "}
        <data class="failed" value={String(failed)}>
          {failed}
        </data>{" "}
        failed, of{" "}
        <data class="total" value={String(total)}>
          {total}
        </data>
      </span>
    </div>
  );
}

/** A link that downloads a file of the session's account (GET /files/<id>/content). */
export function FileLink(props: { fileId: string; label: string; of: string }) {
  return (
    <a
      href={`/files/${encodeURIComponent(props.fileId)}/content`}
      download
      aria-label={`${props.label} of ${props.of}`}
    >
      {props.label}
    </a>
  );
}

/** The form that cancels the session's batch (it carries the session's CSRF token). */
export function CancelBatchForm(props: { session: Session; batch: Pick<BatchRow, "id"> }) {
  const { id } = props.batch;
  return (
    <form method="post" action={`/batches/${encodeURIComponent(id)}/cancel`} class="inline">
      <input type="hidden" name="csrf" value={props.session.csrf} />
      <button type="submit" class="secondary" aria-label={`Cancel ${id}`}>
        Cancel
      </button>
    </form>
  );
}

/**
 * Batches, newest first. The account's own (`own`): each links to its page, with its files to
 * download and Cancel while it may be cancelled, and its endpoint. The operators' (`operators`):
 * each with its account (`withAccount`) and the API process that runs it.
 */
export function BatchTable(
  props: { batches: BatchRow[]; caption?: string; now: number } & (
    | { own: Session }
    | { operators: true; withAccount: boolean }
  ),
) {
  const { batches, now } = props;
  if (batches.length === 0) return <p class="muted">No batches.</p>;
  const own = "own" in props ? props.own : undefined;
  const withAccount = "operators" in props && props.withAccount;
  const headers = [
    ...(withAccount ? ["Account"] : []),
    "Batch",
    "Status",
    ...(own ? ["Endpoint"] : []),
    "Created",
    "Progress",
    ...(own ? ["Files", ""] : ["Runner"]),
  ];
  return (
    <Table
      caption={props.caption}
      headers={headers}
      rows={batches.map((b) => [
        ...(withAccount ? [<a href={`/admin/accounts/${encodeURIComponent(b.accountId)}`}>{b.accountId}</a>] : []),
        own ? (
          <a href={`/batches/${encodeURIComponent(b.id)}`}>
            <code class="batch-id">{b.id}</code>
          </a>
        ) : (
          <code class="batch-id">{b.id}</code>
        ),
        <BatchStatusBadge batch={b} />,
        ...(own ? [<code class="nowrap">{b.endpoint}</code>] : []),
        <When at={b.createdAt} />,
        <BatchProgress batch={b} />,
        ...(own
          ? [<BatchFileLinks batch={b} />, isCancellable(b) ? <CancelBatchForm session={own} batch={b} /> : ""]
          : [<RunnerCell batch={b} now={now} />]),
      ])}
    />
  );
}

/** The batch's output and error files, once it has them. */
export function BatchFileLinks(props: { batch: BatchRow }) {
  const { id, outputFileId, errorFileId } = props.batch;
  if (!outputFileId && !errorFileId) return <span class="muted">—</span>;
  return (
    <span class="row">
      {outputFileId && <FileLink fileId={outputFileId} label="Output" of={id} />}
      {errorFileId && <FileLink fileId={errorFileId} label="Errors" of={id} />}
    </span>
  );
}

/** Which API process holds the batch, and whether its lease lapsed (that process died). */
function RunnerCell(props: { batch: BatchRow; now: number }) {
  const { runner, runnerUntil } = props.batch;
  if (!isOpen(props.batch)) return <span class="muted">—</span>;
  if (!runner) return <span class="muted">none yet</span>;
  const lapsed = runnerUntil !== null && runnerUntil.getTime() < props.now;
  return (
    <>
      <code class="small">{runner}</code>
      {lapsed && <div class="error small">lease lapsed</div>}
    </>
  );
}
