import { parentPort } from "node:worker_threads";
import { JinjaTemplateChatWrapper } from "node-llama-cpp";
import {
  textLength,
  textPieces,
  type RenderReply,
  type RenderRequest,
  type TemplateTextJSON,
} from "./template-protocol.js";
import { chatForWrapper } from "./wrapper-tools.js";

/**
 * A thread of the template sandbox (template-sandbox.ts): renders users' Jinja chat templates
 * with node-llama-cpp's JinjaTemplateChatWrapper, the same code that would otherwise run on
 * the worker's main thread. The sandbox bounds this thread's heap and kills it past its time
 * limit; here, a render's output is bounded before it is sent back.
 */

const wrappers = new Map<string, JinjaTemplateChatWrapper>();
const MAX_WRAPPERS = 16;

function wrapperFor(template: string): JinjaTemplateChatWrapper {
  let wrapper = wrappers.get(template);
  if (wrapper) {
    wrappers.delete(template);
  } else {
    // The constructor already renders the template (it probes how tool calls are written).
    wrapper = new JinjaTemplateChatWrapper({ template });
    if (wrappers.size >= MAX_WRAPPERS) wrappers.delete(wrappers.keys().next().value!);
  }
  wrappers.set(template, wrapper);
  return wrapper;
}

function render(request: RenderRequest): RenderReply {
  const { id } = request;
  try {
    const wrapper = wrapperFor(request.template);
    // Tools in the template's own format or Hearth's default one (wrapper-tools.ts).
    const { chat, toolCallFormat } = chatForWrapper(wrapper, request.messages, request.tools);
    const state = wrapper.generateContextState(chat);
    const text = textPieces(state.contextText.toJSON() as string | TemplateTextJSON);
    const length = textLength(text);
    if (length > request.maxChars) {
      return {
        id,
        ok: false,
        kind: "bounds",
        message: `its output has ${length} characters, more than ${request.maxChars}`,
      };
    }
    const stops = state.stopGenerationTriggers.map((trigger) =>
      textPieces(trigger.toJSON() as string | TemplateTextJSON),
    );
    return { id, ok: true, text, stops, ...(request.tools ? { toolCallFormat } : {}) };
  } catch (error) {
    const message = unwrapped(error instanceof Error ? error.message : String(error));
    // An array or string past V8's limits is the template's size, not its logic (node-llama-cpp
    // rewraps errors of its sanity render, so the message is what is left to go by).
    const kind = /RangeError: invalid (array|string) length|^invalid (array|string) length/i.test(message)
      ? "bounds"
      : "template";
    return { id, ok: false, kind, message: message.slice(0, 500) };
  }
}

/** node-llama-cpp's words around the template's own error, taken off (kept when they change). */
function unwrapped(message: string): string {
  const inner =
    /^The provided Jinja template failed the sanity test: (.*?)\.? Inspect the Jinja template to find out what went wrong\.?$/s.exec(
      message,
    );
  return inner ? inner[1]!.replace(/^Error: /, "") : message;
}

parentPort!.on("message", (request: RenderRequest) => parentPort!.postMessage(render(request)));
parentPort!.postMessage({ ready: true });
