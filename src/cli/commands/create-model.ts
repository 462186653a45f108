import { MODEL_ID_PATTERN } from "../../domain/vocabulary.js";
import { HearthApiError, type HearthClient, type Model } from "../api-client.js";
import type { AddonFolder } from "../addon-folder.js";
import { examples, interruptSignal, withContext, type Verbs } from "../command-kit.js";
import type { CliContext } from "../context.js";
import { CliError, EXIT, usageError } from "../exit-codes.js";
import { modelSummary } from "../model-view.js";
import { bytes } from "../output.js";

/**
 * `hearth create model`: checks the folder locally, creates the model, uploads its files
 * (Ctrl-C aborts the upload and leaves the model UPLOADING), then has the server validate.
 */

interface CreateOptions {
  baseModel?: string;
  displayName?: string;
  description?: string;
  resume?: boolean;
}

export function registerCreateModel({ create }: Verbs): void {
  examples(
    create
      .command("model")
      .description("Create an adapter model from a local folder: check it, upload its files, validate it")
      .argument("<model_id>", "the new model's ID: lowercase letters, digits and hyphens")
      .argument(
        "<local_directory>",
        "the adapter's folder: adapter_config.json + adapter_model.safetensors (PEFT), or adapter.gguf; hearth.json optional",
      )
      .option(
        "--base-model <name>",
        "the base model, e.g. accounts/hearth/models/hearth-tiny (default: from hearth.json or adapter_config.json)",
      )
      .option("--display-name <text>", "a name for people (default: the model ID)")
      .option("--description <text>", "what the adapter does")
      .option(
        "--resume",
        "upload into an existing model that is UPLOADING or FAILED (after an interrupted upload or a failed validation)",
      )
      .action(withContext(createModel)),
    [
      "hearth create model my-lora data/models/examples/hearth-tiny-lora",
      'hearth create model support-bot ./out/checkpoint-500 --base-model accounts/hearth/models/hearth-tiny --display-name "Support bot"',
      "hearth create model my-lora data/models/examples/hearth-tiny-lora --resume",
    ],
  );
}

async function createModel(ctx: CliContext, modelId: string, dir: string, options: CreateOptions): Promise<void> {
  if (!MODEL_ID_PATTERN.test(modelId)) {
    throw usageError(
      `Invalid model ID ${JSON.stringify(modelId)}: use 1–63 lowercase letters, digits and hyphens, starting with a letter or digit.`,
      "For example: hearth create model my-lora <folder>.",
    );
  }
  const { out } = ctx;
  // The adapter checks and the progress bar load with the command that uses them, not at every start.
  const { checkAddonFolder } = await import("../addon-folder.js");
  const folder = await checkAddonFolder(dir);
  if (folder.ignored.length) out.note(`Not uploading ${folder.ignored.join(", ")}: not adapter files.`);
  const client = ctx.client();
  const accountId = await ctx.accountId();
  const resume = `hearth create model ${modelId} ${dir} --resume`;

  let model = options.resume
    ? await existingModel(client, accountId, modelId)
    : await newModel(client, accountId, modelId, options, resume);
  const total = folder.files.reduce((sum, f) => sum + f.size, 0);
  out.note(
    `${options.resume ? "Resuming" : "Created"} ${model.name}; uploading ${folder.files.length} files (${bytes(total)}) of a ${folder.format} adapter.`,
  );
  if (options.resume) await removeStaleFiles(client, accountId, model, folder);
  await uploadFiles(ctx, client, accountId, model, folder, resume);

  out.note("Validating against the base model…");
  try {
    model = await client.validateModel(accountId, modelId);
  } catch (e) {
    if (e instanceof HearthApiError && e.status === 400) {
      throw new CliError(
        EXIT.failure,
        `The server refused the adapter: ${e.message.replace(/\.$/, "")}; ${model.name} is FAILED.`,
        `Fix the folder and run \`${resume}\`, or \`hearth delete model ${modelId}\`.`,
      );
    }
    throw e;
  }
  out.result(
    model,
    () => [modelSummary(out, model), `Deploy it with: hearth deploy ${modelId} --wait`],
    () => model.name,
  );
}

async function newModel(
  client: HearthClient,
  accountId: string,
  modelId: string,
  options: CreateOptions,
  resume: string,
): Promise<Model> {
  try {
    return await client.createModel(accountId, {
      modelId,
      model: {
        ...(options.displayName !== undefined ? { displayName: options.displayName } : {}),
        ...(options.description !== undefined ? { description: options.description } : {}),
        ...(options.baseModel !== undefined ? { baseModel: options.baseModel } : {}),
      },
    });
  } catch (e) {
    if (e instanceof HearthApiError && e.status === 409) {
      throw new CliError(
        EXIT.failure,
        `The model ID ${modelId} is taken in account ${accountId}.`,
        `Choose another ID, finish an interrupted upload with \`${resume}\`, or remove it with \`hearth delete model ${modelId}\`.`,
      );
    }
    throw e;
  }
}

async function existingModel(client: HearthClient, accountId: string, modelId: string): Promise<Model> {
  const model = await client.getModel(accountId, modelId);
  if (model.state !== "UPLOADING" && model.state !== "FAILED") {
    throw new CliError(
      EXIT.failure,
      `${model.name} is ${model.state}: there is no upload to resume.`,
      `See it with \`hearth get model ${modelId}\`; to change its files, create a new model.`,
    );
  }
  return model;
}

/** Files uploaded earlier that the folder no longer has (e.g. the other format) would confuse validation. */
async function removeStaleFiles(
  client: HearthClient,
  accountId: string,
  model: Model,
  folder: AddonFolder,
): Promise<void> {
  const wanted = new Set<string>(folder.files.map((f) => f.name));
  for (const file of model.files ?? [])
    if (!wanted.has(file.name)) await client.deleteFile(accountId, model.modelId, file.name);
}

async function uploadFiles(
  ctx: CliContext,
  client: HearthClient,
  accountId: string,
  model: Model,
  folder: AddonFolder,
  resume: string,
): Promise<void> {
  const total = folder.files.reduce((sum, f) => sum + f.size, 0);
  const { UploadProgress } = await import("../upload-progress.js");
  const progress = new UploadProgress(ctx.out, total);
  const interrupt = interruptSignal();
  try {
    for (const file of folder.files) {
      await client.uploadFile(accountId, model.modelId, file.name, file.path, {
        signal: interrupt.signal,
        onProgress: (sent) => progress.update(file.name, sent),
      });
      progress.fileDone(file.name, file.size);
    }
  } catch (e) {
    if (!interrupt.signal.aborted) throw e;
    progress.stop();
    throw new CliError(
      EXIT.interrupted,
      `Upload interrupted: ${model.name} stays UPLOADING (it cannot be deployed; the interrupted file was not kept).`,
      `Resume with \`${resume}\`, or remove it with \`hearth delete model ${model.modelId}\`.`,
    );
  } finally {
    interrupt.release();
    progress.stop();
  }
}
