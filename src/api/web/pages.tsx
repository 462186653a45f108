import type { Session } from "../../auth/sessions.js";
import type { ModelFile } from "../contract/management/resources.js";
import type { ModelView } from "../services/model-catalog.js";
import { modelName } from "../../domain/model-name.js";
import { Layout } from "./layout.js";
import { Table } from "./table.js";

/** `/`: sign in with an API key. `error` says why the last try failed. */
export function SignInPage(props: { error?: string; next?: string }) {
  return (
    <Layout title="Sign in">
      <section class="card narrow">
        <h1>Sign in</h1>
        <p class="muted">With an API key of your account. Hearth keeps a session; the page never holds the key.</p>
        <form method="post" action="/signin" class="stack">
          <label for="api-key">API key</label>
          <input
            id="api-key"
            name="api_key"
            type="password"
            autocomplete="current-password"
            required
            autofocus
            aria-describedby={props.error ? "sign-in-error" : undefined}
          />
          {props.next && <input type="hidden" name="next" value={props.next} />}
          {props.error && (
            <p id="sign-in-error" class="error" role="alert">
              {props.error}
            </p>
          )}
          <button type="submit">Sign in</button>
        </form>
      </section>
    </Layout>
  );
}

/** `/models`: the account's own models and the base models. */
export function ModelsPage(props: { session: Session; own: ModelView[]; base: ModelView[] }) {
  return (
    <Layout title="Models" session={props.session}>
      <h1>Models</h1>
      <ModelTable caption={`Account ${props.session.accountId}`} views={props.own} empty="No models of your own yet." />
      <ModelTable caption="Base models" views={props.base} empty="No base models." />
    </Layout>
  );
}

function ModelTable(props: { caption: string; views: ModelView[]; empty: string }) {
  if (props.views.length === 0) {
    return (
      <section>
        <h2>{props.caption}</h2>
        <p class="muted">{props.empty}</p>
      </section>
    );
  }
  return (
    <section>
      <h2>{props.caption}</h2>
      <Table
        headers={["Model", "Kind", "State", "Deployment", "Base"]}
        rows={props.views.map(({ model, deployment }) => [
          <>
            <a href={`/${modelName(model.accountId, model.modelId)}`}>{model.displayName}</a>
            <div class="muted small">{modelName(model.accountId, model.modelId)}</div>
          </>,
          model.kind,
          <span class={`badge state-${model.state.toLowerCase()}`}>{model.state}</span>,
          deployment ? <span class="badge">{deployment.state}</span> : model.kind === "lora" ? "—" : "serving",
          <span class="small">{model.baseModel ?? "—"}</span>,
        ])}
      />
    </section>
  );
}

/** A model's page: what it is, and a playground when it can answer. */
export function ModelPage(props: {
  session: Session;
  view: ModelView;
  files: ModelFile[];
  servable: boolean;
  /** Why the model's chat template is refused for now (templates/template-quarantine.ts). */
  templateQuarantine?: string;
}) {
  const { model, deployment } = props.view;
  const name = modelName(model.accountId, model.modelId);
  const chat = model.kind !== "image";
  return (
    <Layout title={model.displayName} session={props.session}>
      <p class="crumbs">
        <a href="/models">Models</a> / <span>{name}</span>
      </p>
      <h1>{model.displayName}</h1>
      {model.description && <p>{model.description}</p>}
      <dl class="facts">
        <dt>Name</dt>
        <dd>
          <code>{name}</code>
        </dd>
        <dt>Kind</dt>
        <dd>{model.kind}</dd>
        <dt>State</dt>
        <dd>
          {model.state}
          {model.stateReason && <span class="muted"> — {model.stateReason}</span>}
        </dd>
        {model.baseModel && (
          <>
            <dt>Base</dt>
            <dd>
              <a href={`/${model.baseModel}`}>{model.baseModel}</a>
            </dd>
          </>
        )}
        <dt>Deployment</dt>
        <dd>
          {deployment
            ? `${deployment.state}${deployment.reason ? ` — ${deployment.reason}` : ""}`
            : model.kind === "lora"
              ? "not deployed"
              : "served by the workers"}
        </dd>
        {props.files.length > 0 && (
          <>
            <dt>Files</dt>
            <dd>
              <ul class="files">
                {props.files.map((f) => (
                  <li>
                    <code>{f.name}</code> <span class="muted small">{formatBytes(f.size)}</span>
                  </li>
                ))}
              </ul>
            </dd>
          </>
        )}
      </dl>
      <section class="card" aria-labelledby="playground-title">
        <h2 id="playground-title">Playground</h2>
        {props.templateQuarantine && (
          <p class="notice" role="alert">
            Chats with this model are refused for now. {props.templateQuarantine}
          </p>
        )}
        {!props.servable && (
          <p class="notice">
            This model is not deployed: deploy it (<code>hearth deploy {name}</code>) to query it here.
          </p>
        )}
        {chat ? <TextPlayground name={name} /> : <ImagePlayground name={name} />}
      </section>
      <script src="/static/playground.js" defer />
    </Layout>
  );
}

function TextPlayground(props: { name: string }) {
  return (
    <div class="playground" data-model={props.name} data-kind="text">
      <div class="tabs" role="tablist" aria-label="Mode">
        <button type="button" role="tab" id="tab-complete" aria-selected="true" aria-controls="panel-complete">
          Complete
        </button>
        <button type="button" role="tab" id="tab-chat" aria-selected="false" aria-controls="panel-chat" tabindex={-1}>
          Chat
        </button>
      </div>
      <form id="panel-complete" role="tabpanel" aria-labelledby="tab-complete" class="stack generate-form">
        <label for="prompt">Prompt</label>
        <textarea id="prompt" name="prompt" rows={4} required placeholder="The hearth " />
        <Sampling />
        <Buttons />
        <h3 id="output-title" class="small muted">
          Output
        </h3>
        <output id="output" class="output" aria-live="polite" aria-labelledby="output-title" tabindex={-1} />
      </form>
      <form id="panel-chat" role="tabpanel" aria-labelledby="tab-chat" class="stack chat-form" hidden>
        <ol id="conversation" class="conversation" aria-live="polite" aria-label="Conversation" />
        <label for="message">Message</label>
        <textarea id="message" name="message" rows={2} required />
        <Sampling />
        <Buttons />
      </form>
      <p class="error" role="alert" hidden />
      <div id="alternatives" class="alternatives" role="tooltip" hidden />
    </div>
  );
}

function ImagePlayground(props: { name: string }) {
  return (
    <div class="playground" data-model={props.name} data-kind="image">
      <form class="stack image-form">
        <label for="image-prompt">Prompt</label>
        <textarea id="image-prompt" name="prompt" rows={3} required placeholder="a red circle above a blue square" />
        <Buttons />
        <progress id="image-progress" max={1} value={0} aria-label="Progress" hidden />
        <output id="image-output" class="image-output" aria-live="polite" />
      </form>
      <p class="error" role="alert" hidden />
    </div>
  );
}

function Sampling() {
  return (
    <div class="row">
      <label>
        Max tokens <input name="max_tokens" type="number" min={1} max={4096} value="64" />
      </label>
      <label>
        Temperature <input name="temperature" type="number" min={0} max={2} step="0.1" value="0" />
      </label>
      <label class="switch">
        <input name="json" type="checkbox" /> JSON
      </label>
    </div>
  );
}

function Buttons() {
  return (
    <div class="row">
      <button type="submit" class="generate">
        Generate
      </button>
      <button type="button" class="stop secondary" disabled>
        Stop
      </button>
    </div>
  );
}

/** A plain page for a missing thing (404), a refused one (403) or a failure. */
export function MessagePage(props: { session?: Session; title: string; message: string }) {
  return (
    <Layout title={props.title} session={props.session}>
      <section class="card narrow">
        <h1>{props.title}</h1>
        <p>{props.message}</p>
        <p>
          <a href={props.session ? "/models" : "/"}>{props.session ? "Back to the models" : "Sign in"}</a>
        </p>
      </section>
    </Layout>
  );
}

function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}
