import type { HearthClient, Model } from "../api-client.js";
import { examples, withContext, type Verbs } from "../command-kit.js";
import type { CliContext } from "../context.js";
import { CliError, EXIT } from "../exit-codes.js";
import { modelSummary } from "../model-view.js";
import type { Output } from "../output.js";

/** deploy and undeploy, optionally waiting until the workers have done it. */

interface WaitOptions {
  wait?: boolean;
  timeout: string;
}

export function registerDeploymentCommands({ program }: Verbs): void {
  const waitOptions = (command: ReturnType<typeof program.command>) =>
    command
      .argument("<model_id>")
      .option("--wait", "show the progress and return once it is done (or failed)")
      .option("--timeout <seconds>", "with --wait: give up after this long", "900");

  examples(
    waitOptions(program.command("deploy").description("Deploy a READY adapter so that it answers queries")).action(
      withContext(deploy),
    ),
    [
      "hearth deploy my-lora --wait",
      "hearth deploy my-lora            # returns at once; see `hearth get model my-lora`",
    ],
  );
  examples(
    waitOptions(
      program.command("undeploy").description("Undeploy an adapter; running requests finish, new ones get 404"),
    ).action(withContext(undeploy)),
    ["hearth undeploy my-lora --wait"],
  );
}

async function deploy(ctx: CliContext, modelId: string, options: WaitOptions): Promise<void> {
  const client = ctx.client();
  const accountId = await ctx.accountId();
  let model = await client.deployModel(accountId, modelId);
  if (options.wait) model = await waitFor(ctx, client, model, "DEPLOYED", options);
  const { out } = ctx;
  out.result(
    model,
    () => {
      const state = model.deployment?.state ?? null;
      if (state === "DEPLOYED")
        return [`${model.name} is ${out.state(state)}.`, `Query it with "model": "${model.name}".`];
      return [
        `${model.name}: deployment ${out.state(state)}.`,
        `Follow it with \`hearth get model ${modelId}\`, or wait with \`hearth deploy ${modelId} --wait\`.`,
      ];
    },
    () => model.name,
  );
}

async function undeploy(ctx: CliContext, modelId: string, options: WaitOptions): Promise<void> {
  const client = ctx.client();
  const accountId = await ctx.accountId();
  let model = await client.undeployModel(accountId, modelId);
  if (options.wait) model = await waitFor(ctx, client, model, null, options);
  const { out } = ctx;
  out.result(
    model,
    () =>
      model.deployment
        ? `${model.name}: deployment ${out.state(model.deployment.state)}.`
        : `${modelSummary(out, model)} Not deployed.`,
    () => model.name,
  );
}

/** Polls until the deployment is `target` (null: gone); FAILED and the timeout end the command with exit code 1. */
async function waitFor(
  ctx: CliContext,
  client: HearthClient,
  start: Model,
  target: "DEPLOYED" | null,
  options: WaitOptions,
): Promise<Model> {
  const timeoutSeconds = Number(options.timeout);
  if (!(timeoutSeconds > 0))
    throw new CliError(
      EXIT.usage,
      `--timeout ${options.timeout} is not a positive number of seconds.`,
      "For example: --timeout 600.",
    );
  const status = new StatusLine(ctx.out, target === null ? "Undeploying" : "Deploying", start.name);
  status.show(start);
  let model: Model;
  try {
    model = await client.waitForDeployment(start.accountId, start.modelId, target, {
      onUpdate: (m) => status.show(m),
      timeoutMs: timeoutSeconds * 1000,
    });
  } finally {
    status.end();
  }
  const state = model.deployment?.state ?? null;
  if (state === "FAILED") {
    throw new CliError(
      EXIT.failure,
      `The deployment of ${model.name} FAILED: ${model.deployment?.reason ?? "no reason given"}.`,
      `Clear it with \`hearth undeploy ${model.modelId}\`, then deploy again.`,
    );
  }
  if (state !== target) {
    throw new CliError(
      EXIT.failure,
      `${model.name} is still ${state ?? "not deployed"} after ${timeoutSeconds} s.`,
      `Check the workers (GET /readyz) and follow it with \`hearth get model ${model.modelId}\`.`,
    );
  }
  return model;
}

/** On a terminal one rewritten line with the elapsed time; otherwise a line per state change. */
class StatusLine {
  private last: string | undefined;
  private readonly started = Date.now();

  constructor(
    private readonly out: Output,
    private readonly verb: string,
    private readonly name: string,
  ) {}

  show(model: Model): void {
    const state = model.deployment?.state ?? "not deployed";
    if (this.out.live) {
      const seconds = Math.round((Date.now() - this.started) / 1000);
      this.out.stderr.write(
        `\r\u001b[2K${this.verb} ${this.name}: ${this.out.state(state, this.out.stderr)} (${seconds} s)`,
      );
    } else if (state !== this.last) {
      this.out.note(`${this.verb} ${this.name}: ${state}`);
    }
    this.last = state;
  }

  end(): void {
    if (this.out.live) this.out.stderr.write("\n");
  }
}
