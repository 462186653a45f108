import { HearthApiError, type Model } from "../api-client.js";
import { examples, withContext, type Verbs } from "../command-kit.js";
import type { CliContext } from "../context.js";
import { CliError, EXIT, usageError } from "../exit-codes.js";
import { modelDetails, modelTable } from "../model-view.js";
import { registerCreateModel } from "./create-model.js";

/** create (create-model.ts), get, list, update and delete model. */
export function registerModelCommands(verbs: Verbs): void {
  registerCreateModel(verbs);
  const { get, list, update } = verbs;

  examples(
    get
      .command("model")
      .description("Show a model: its state, deployment and files")
      .argument("<model_id>")
      .action(withContext(getModel)),
    [
      "hearth get model my-lora",
      "hearth get model hearth-tiny --account-id hearth",
      "hearth get model my-lora --output json",
    ],
  );

  examples(
    list
      .command("models")
      .description("List the account's models (every page): ID, base model, state, deployment state, created")
      .option("--filter <expression>", "field=value terms joined by AND over state, kind and baseModel")
      .option("--page-size <n>", "models per request (1–200); every page is fetched either way", "200")
      .action(withContext(listModels)),
    [
      "hearth list models",
      'hearth list models --filter "state=READY AND kind=lora"',
      "hearth list models --account-id hearth      # the public base and image models",
      "hearth list models --quiet                  # IDs only",
    ],
  );

  examples(
    update
      .command("model")
      .description("Change a model's display name or description")
      .argument("<model_id>")
      .option("--display-name <text>", "the new display name")
      .option("--description <text>", "the new description")
      .action(withContext(updateModel)),
    [
      'hearth update model my-lora --display-name "My LoRA v2"',
      'hearth update model my-lora --description "Talks like the corpus"',
    ],
  );

  examples(
    verbs.delete
      .command("model")
      .description("Delete an adapter model and its files")
      .argument("<model_id>")
      .option("--force", "undeploy it first if it is deployed")
      .action(withContext(deleteModel)),
    ["hearth delete model my-lora", "hearth delete model my-lora --force"],
  );
}

async function getModel(ctx: CliContext, modelId: string): Promise<void> {
  const model = await ctx.client().getModel(await ctx.accountId(), modelId);
  ctx.out.result(
    model,
    () => modelDetails(ctx.out, model),
    () => model.name,
  );
}

async function listModels(ctx: CliContext, options: { filter?: string; pageSize: string }): Promise<void> {
  const pageSize = Number(options.pageSize);
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 200)
    throw usageError(`--page-size ${options.pageSize} is not a whole number from 1 to 200.`);
  const client = ctx.client();
  const accountId = await ctx.accountId();
  const models: Model[] = [];
  for await (const model of client.allModels(accountId, { filter: options.filter, pageSize })) models.push(model);
  const { out } = ctx;
  out.result(
    { models },
    () =>
      models.length
        ? modelTable(out, models)
        : [
            `Account ${accountId} has no models${options.filter ? " matching the filter" : ""}. Create one with \`hearth create model\`.`,
          ],
    () => models.map((m) => m.modelId),
  );
}

async function updateModel(
  ctx: CliContext,
  modelId: string,
  options: { displayName?: string; description?: string },
): Promise<void> {
  if (options.displayName === undefined && options.description === undefined) {
    throw usageError("Nothing to update.", "Pass --display-name and/or --description.");
  }
  const model = await ctx.client().updateModel(await ctx.accountId(), modelId, options);
  ctx.out.result(
    model,
    () => [`Updated ${model.name}.`, ...modelDetails(ctx.out, model)],
    () => model.name,
  );
}

async function deleteModel(ctx: CliContext, modelId: string, options: { force?: boolean }): Promise<void> {
  const accountId = await ctx.accountId();
  try {
    await ctx.client().deleteModel(accountId, modelId, { force: options.force === true });
  } catch (e) {
    if (e instanceof HearthApiError && e.status === 409) {
      throw new CliError(
        EXIT.failure,
        `accounts/${accountId}/models/${modelId} is deployed (or deploying or undeploying), so it was not deleted.`,
        `Undeploy it first (\`hearth undeploy ${modelId} --wait\`), or pass --force to undeploy and delete it.`,
      );
    }
    throw e;
  }
  const name = `accounts/${accountId}/models/${modelId}`;
  ctx.out.result({ deleted: name }, () => `Deleted ${name}.`);
}
