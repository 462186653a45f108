import type { StreamTiming } from "../http-client.js";
import { runClients } from "../load.js";
import { figure, target, type BenchContext, type Figure, type ScenarioResult } from "../scenario.js";
import { round } from "../stats.js";

type Mode = "free" | "schema";

interface Run {
  streams: number;
  mode: Mode;
  tokensPerS: number;
  tokens: number;
  wallMs: number;
}

/**
 * A schema whose values are long (a list of records), so that a request generates its
 * `max_tokens` under the grammar as it does without: the comparison is per token.
 */
const SCHEMA = {
  type: "array",
  minItems: 200,
  maxItems: 200,
  items: {
    type: "object",
    properties: {
      name: { type: "string", maxLength: 24 },
      score: { type: "number" },
      tags: { type: "array", items: { enum: ["red", "green", "blue"] }, maxItems: 3 },
      active: { type: "boolean" },
    },
    required: ["name", "score", "tags", "active"],
  },
};

/**
 * 13. Structured output: streams on the bench model, free text and then the same under a JSON
 * schema's grammar (response_format json_schema), at 1 and at 16 concurrent streams; the target
 * is grammar tokens/s ÷ free tokens/s. The two modes alternate which goes first from level to
 * level, so that drift in the machine's load does not favour one. Hot sampling (temperature 1),
 * since a grammar's cost is in sampling: llama.cpp checks the candidate tokens against the
 * grammar's live parses on the CPU, for every sequence, between decodes.
 */
export async function structuredScenario(ctx: BenchContext): Promise<ScenarioResult> {
  const { sizes, progress } = ctx;
  const levels = [1, 16];
  const body = (mode: Mode, seed: number) => ({
    model: ctx.bench.name,
    prompt: ctx.prompt,
    max_tokens: sizes.structuredTokens,
    temperature: 1,
    seed,
    ...(mode === "schema"
      ? { response_format: { type: "json_schema", json_schema: { name: "records", schema: SCHEMA } } }
      : {}),
  });
  progress.step("structured: warming up (and compiling the schema's grammar)");
  for (const mode of ["free", "schema"] as const) await ctx.http.stream({ ...body(mode, 0), max_tokens: 4 });

  const runs: Run[] = [];
  for (const [i, streams] of levels.entries()) {
    const order: Mode[] = i % 2 === 0 ? ["free", "schema"] : ["schema", "free"];
    for (const mode of order) {
      progress.step(`structured: ${streams} stream(s), ${mode === "free" ? "free text" : "under the schema"}`);
      const { results, wallMs } = await runClients<StreamTiming>(streams, sizes.structuredRounds, (client) =>
        ctx.http.stream(body(mode, client)),
      );
      const tokens = results.reduce((sum, r) => sum + r.tokens, 0);
      runs.push({ streams, mode, tokensPerS: (tokens / wallMs) * 1000, tokens, wallMs });
    }
  }

  const figures: Figure[] = [];
  const ratios: number[] = [];
  for (const streams of levels) {
    const free = runs.find((r) => r.streams === streams && r.mode === "free")!;
    const schema = runs.find((r) => r.streams === streams && r.mode === "schema")!;
    const ratio = schema.tokensPerS / free.tokensPerS;
    ratios.push(ratio);
    figures.push(
      figure(`${streams} stream(s), free text: tokens/s`, round(free.tokensPerS), "tok/s"),
      figure(`${streams} stream(s), JSON schema: tokens/s`, round(schema.tokensPerS), "tok/s"),
      figure(`${streams} stream(s): schema ÷ free`, round(ratio), "×"),
    );
  }
  return {
    id: "structured",
    title: `Structured output: ${sizes.structuredTokens} tokens per stream, free text vs under a JSON schema's grammar`,
    figures,
    targets: levels.map((streams, i) =>
      target(`${streams} stream(s): tokens/s under the schema ÷ free text`, round(ratios[i]!), ">=", 0.8, "×"),
    ),
    notes: [
      `${sizes.structuredRounds} request(s) per stream per level, temperature 1; the schema: a list of 200 records ` +
        `(a bounded string, a number, an enum list, a boolean), so every request runs to max_tokens; worker: ` +
        `${ctx.workerSettings.sequences} sequences per context, ${ctx.workerSettings.threads} thread(s)`,
    ],
    details: { schema: SCHEMA, runs },
  };
}
