import { readdir } from "node:fs/promises";
import path from "node:path";
import { loadConfig } from "../../src/config.js";
import type { DecodeSample, EngineAdapter, EngineContext, EngineModel } from "../../src/workers/engine/engine.js";
import { LlamaEngine } from "../../src/workers/engine/llama-engine.js";
import { summarize } from "./stats.js";

/**
 * What one adapter switch costs a step, through the worker's own engine in the bench process:
 * one context shared by adapters (as HEARTH_ADAPTER_CONTEXTS below the warm adapters makes it),
 * `sequences` requests on adapter A, then `sequences` on A beside as many on B. With two
 * adapters each batch holds one adapter's sequences and switches the context's adapter, so every
 * decode of the mixed run follows a switch (but perhaps its first), and of the steady run none, each of
 * `sequences` sequences: the difference per decode is the switch (llama.cpp reserving its graph
 * again, and the adapter set), measured as the decode's own time and as the whole step's
 * (decode, samplings and the engine's loop).
 */
export interface SwitchCost {
  sequences: number;
  /** Decodes of each kind of run (prompts' included), and the switches each made. */
  decodes: { steady: number; switching: number };
  switches: { steady: number; switching: number };
  /** Median native decode time of a generation step, without and after a switch. */
  decodeMs: { steady: number; switching: number };
  /** Wall time per generation step: the run's time over its decodes. */
  stepMs: { steady: number; switching: number };
}

export interface SwitchCostSettings {
  modelPath: string;
  /** Two GGUF LoRA files made for the model (the worker's converted artifacts). */
  adapterPaths: [string, string];
  threads: number;
  contextSize: number;
  sequences: number;
  tokens: number;
  rounds: number;
}

/** The converted adapter files of a Hearth storage folder (`artifacts/lora`), at most `count`. */
export async function convertedAdapters(storageDir: string, count: number): Promise<string[]> {
  const dir = path.join(storageDir, "artifacts", "lora");
  const names = (await readdir(dir).catch(() => [] as string[])).sort();
  return names.slice(0, count).map((name) => path.join(dir, name));
}

export async function measureSwitchCost(settings: SwitchCostSettings): Promise<SwitchCost> {
  const config = loadConfig(process.env);
  const engine = await LlamaEngine.create({
    gpu: config.worker.gpu,
    gpuLayers: config.worker.gpuLayers,
    gpuCheck: false,
    maxThreads: settings.threads,
  });
  const adapters: EngineAdapter[] = [];
  let model: EngineModel | undefined;
  let context: EngineContext | undefined;
  try {
    model = await engine.loadModel({ id: "switch-cost", path: settings.modelPath, threads: settings.threads });
    for (const file of settings.adapterPaths) adapters.push(await model.loadAdapter(file));
    let decodes: DecodeSample[] = [];
    context = await model.createContext({
      sequences: settings.sequences * 2,
      contextSize: settings.contextSize,
      threads: settings.threads,
      adapters: true,
      promptCacheTokens: 0,
      onDecode: (sample) => decodes.push(sample),
    });
    const prompt = model.tokenize("The quick brown fox jumps over the lazy dog.");
    const [a, b] = adapters as [EngineAdapter, EngineAdapter];
    const run = async (mix: EngineAdapter[]) => {
      decodes = [];
      const switchesBefore = switchCount(context!);
      const started = performance.now();
      const signal = new AbortController().signal;
      await Promise.all(
        mix.map((adapter) =>
          context!.generate(
            { promptTokens: prompt, adapter, sampling: { maxTokens: settings.tokens, temperature: 0, stop: [] } },
            signal,
            () => {},
          ),
        ),
      );
      const wallMs = performance.now() - started;
      // Generation steps: one token per sequence (prompt decodes left out).
      const steps = decodes.filter((d) => d.tokens === d.sequences && d.sequences === settings.sequences);
      return {
        wallMs,
        steps: steps.map((d) => d.ms),
        all: decodes.length,
        switches: switchCount(context!) - switchesBefore,
      };
    };
    const steadyMix = Array.from({ length: settings.sequences }, () => a);
    const switchingMix = [...steadyMix, ...Array.from({ length: settings.sequences }, () => b)];
    await run(switchingMix); // warm-up: both adapters' graphs, every sequence
    const tally = () => ({ ms: [] as number[], wallMs: 0, decodes: 0, switches: 0 });
    const steady = tally();
    const switching = tally();
    const kinds = [
      { mix: steadyMix, total: steady },
      { mix: switchingMix, total: switching },
    ];
    // Alternating, so that drift in the machine's load favours neither.
    for (let r = 0; r < settings.rounds; r++) {
      for (const { mix, total } of r % 2 === 0 ? kinds : [...kinds].reverse()) {
        const measured = await run(mix);
        total.ms.push(...measured.steps);
        total.wallMs += measured.wallMs;
        total.decodes += measured.all;
        total.switches += measured.switches;
      }
    }
    return {
      sequences: settings.sequences,
      decodes: { steady: steady.decodes, switching: switching.decodes },
      switches: { steady: steady.switches, switching: switching.switches },
      decodeMs: { steady: summarize(steady.ms).p50, switching: summarize(switching.ms).p50 },
      stepMs: { steady: steady.wallMs / steady.decodes, switching: switching.wallMs / switching.decodes },
    };
  } finally {
    await context?.dispose();
    for (const adapter of adapters) await adapter.dispose();
    await model?.dispose();
    await engine.close();
  }
}

function switchCount(context: EngineContext): number {
  if (context.adapterSwitches === undefined) throw new Error("the context was not created to serve adapters");
  return context.adapterSwitches;
}
