import { Template } from "@huggingface/jinja";
import { AppError } from "../../errors.js";

const USER = "\u27e6user-turn\u27e7";
const ASSISTANT = "\u27e6assistant-turn\u27e7";
const SYSTEM = "\u27e6system-turn\u27e7";

/**
 * Checks an adapter's chat template when it is saved rather than on its first chat: it
 * must parse as Jinja and render a sample conversation with every message's content in
 * it (the worker finds the turns that way). Templates that refuse system messages are
 * fine. Returns the problem, or undefined.
 */
export function chatTemplateProblem(template: string): string | undefined {
  let parsed: Template;
  try {
    parsed = new Template(template);
  } catch (error) {
    return `not a valid Jinja template: ${(error as Error).message}`;
  }
  const render = (messages: { role: string; content: string }[]) =>
    parsed.render({ messages, add_generation_prompt: true, bos_token: "", eos_token: "" });
  const turns = [
    { role: "user", content: USER },
    { role: "assistant", content: ASSISTANT },
    { role: "user", content: USER },
  ];
  let text: string;
  try {
    text = render(turns);
  } catch (error) {
    return `rendering a sample conversation failed: ${(error as Error).message}`;
  }
  if (!text.includes(USER) || !text.includes(ASSISTANT)) {
    return "it must write each message's content (e.g. {{ message.content }} in a loop over messages)";
  }
  try {
    // A system message may be refused (raise_exception) but, if accepted, must appear.
    const withSystem = render([{ role: "system", content: SYSTEM }, ...turns]);
    if (!withSystem.includes(SYSTEM)) return "it accepts a system message but leaves its content out";
  } catch {
    // The template does not take system messages: the worker folds them into the first user turn.
  }
  return undefined;
}

/** A template about to be saved from a request: a 400 naming `param` when it does not render. */
export function checkChatTemplate(template: string, param: string): void {
  const problem = chatTemplateProblem(template);
  if (problem) throw new AppError("invalid_request", `Invalid ${param}: ${problem}`, { param });
}
