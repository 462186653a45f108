import type { Session } from "../../auth/sessions.js";
import type { BatchRow } from "../../db/schema/batches.js";
import {
  BatchFileLinks,
  BatchProgress,
  BatchStatusBadge,
  BatchTable,
  CancelBatchForm,
  FileLink,
  isCancellable,
} from "./batch-views.js";
import { Layout } from "./layout.js";
import { When, when } from "./page-time.js";
import { Table } from "./table.js";

/**
 * `/batches`: the account's batches, newest first, a page of them (`after`: the last of the
 * page before). While one runs, static/batches.js follows it through `poll` (the API's list).
 */
export function BatchesPage(props: {
  session: Session;
  batches: BatchRow[];
  /** The next page's `after`, when there is one. */
  older?: string;
  poll: string;
  now: number;
}) {
  const { session, batches } = props;
  return (
    <Layout title="Batches" session={session}>
      <h1>Batches</h1>
      <p class="muted">
        Batches are made through the API: a file of requests (<code>POST /v1/files</code>), then a batch that runs it (
        <code>POST /v1/batches</code>), as OpenAI's SDKs call them. This page follows them as they run.
      </p>
      <section data-poll={props.poll}>
        <BatchTable batches={batches} own={session} now={props.now} caption={`Account ${session.accountId}`} />
        <Following />
      </section>
      {props.older && (
        <p>
          <a href={`/batches?after=${encodeURIComponent(props.older)}`}>Older batches</a>
        </p>
      )}
    </Layout>
  );
}

/** `/batches/<id>`: one of the account's batches: its state, counts, files, times, errors and metadata. */
export function BatchPage(props: { session: Session; batch: BatchRow }) {
  const { session, batch } = props;
  const times: [string, Date | null][] = [
    ["Created", batch.createdAt],
    ["In progress", batch.inProgressAt],
    ["Finalizing", batch.finalizingAt],
    ["Completed", batch.completedAt],
    ["Failed", batch.failedAt],
    ["Cancelling", batch.cancellingAt],
    ["Cancelled", batch.cancelledAt],
    ["Expired", batch.expiredAt],
  ];
  const metadata = Object.entries(batch.metadata ?? {});
  return (
    <Layout title={`Batch ${batch.id}`} session={session}>
      <p class="crumbs">
        <a href="/batches">Batches</a> / {batch.id}
      </p>
      <h1>Batch</h1>
      <section class="card" data-poll={`/v1/batches/${encodeURIComponent(batch.id)}`}>
        <dl class="facts">
          <dt>ID</dt>
          <dd>
            <code>{batch.id}</code>
          </dd>
          <dt>Status</dt>
          <dd>
            <BatchStatusBadge batch={batch} />
          </dd>
          <dt>Progress</dt>
          <dd>
            <BatchProgress batch={batch} />
          </dd>
          <dt>Endpoint</dt>
          <dd>
            <code>{batch.endpoint}</code>
          </dd>
          <dt>Input</dt>
          <dd>
            <FileLink fileId={batch.inputFileId} label={batch.inputFileId} of={batch.id} />
          </dd>
          <dt>Results</dt>
          <dd>
            <BatchFileLinks batch={batch} />
          </dd>
          <dt>Window</dt>
          <dd>
            {batch.completionWindow} (until {when(batch.expiresAt)})
          </dd>
          {times
            .filter(([, at]) => at !== null)
            .map(([name, at]) => (
              <>
                <dt>{name}</dt>
                <dd>
                  <When at={at!} />
                </dd>
              </>
            ))}
        </dl>
        {isCancellable(batch) && <CancelBatchForm session={session} batch={batch} />}
        <Following />
      </section>
      {batch.errors && batch.errors.length > 0 && (
        <section aria-labelledby="errors-title">
          <h2 id="errors-title">Why it failed</h2>
          <Table
            caption="The input's lines refused at validation (no line ran)"
            headers={["Line", "Code", "Field", "Message"]}
            rows={batch.errors.map((e) => [
              e.line ?? "—",
              <code>{e.code}</code>,
              e.param ? <code>{e.param}</code> : "—",
              e.message,
            ])}
          />
        </section>
      )}
      {metadata.length > 0 && (
        <section aria-labelledby="metadata-title">
          <h2 id="metadata-title">Metadata</h2>
          <Table headers={["Key", "Value"]} rows={metadata.map(([key, value]) => [<code>{key}</code>, value])} />
        </section>
      )}
    </Layout>
  );
}

/** Where static/batches.js says it could not follow the batches any more; and the script. */
function Following() {
  return (
    <>
      <p class="error follow-error" role="alert" hidden />
      <script src="/static/batches.js" defer />
    </>
  );
}
