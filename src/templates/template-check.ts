import { plainText, type TemplateTurn } from "./template-protocol.js";
import { TemplateError } from "./template-error.js";
import type { TemplateSandbox } from "./template-sandbox.js";

const USER = "\u27e6user-turn\u27e7";
const ASSISTANT = "\u27e6assistant-turn\u27e7";
const SYSTEM = "\u27e6system-turn\u27e7";

/** Conversations a template must render within the sandbox's bounds, whatever it says of them. */
function adversarialProbes(): { name: string; messages: TemplateTurn[] }[] {
  const long = (count: number, size: number): TemplateTurn[] =>
    Array.from({ length: count }, (_, i) => ({
      role: i % 2 === 0 ? "user" : "assistant",
      content: `${i} ${"lorem ipsum ".repeat(size)}`,
    }));
  return [
    { name: "a 64-message conversation", messages: long(64, 4) },
    { name: "a 512-message conversation", messages: [{ role: "system", content: "be brief" }, ...long(512, 1)] },
    // Long chats cost the sandbox little to try (a few ms), and catch templates that misbehave
    // only past a few hundred messages; what no probe catches, the quarantine stops.
    { name: "a 2,049-message conversation", messages: long(2049, 0) },
    { name: "a 64 KB message", messages: [{ role: "user", content: "x".repeat(64 * 1024) }] },
    { name: "a lone system message", messages: [{ role: "system", content: SYSTEM }] },
    { name: "a lone assistant message", messages: [{ role: "assistant", content: ASSISTANT }] },
    {
      name: "every role in turn, twice",
      messages: (["system", "user", "assistant", "system", "user", "assistant"] as const).map(
        (role): TemplateTurn => ({ role, content: role }),
      ),
    },
  ];
}

/**
 * Checks a chat template when it is saved rather than on its first chat, in the sandbox: it
 * must render a sample conversation with every message's content in it (the turns are found
 * that way), and render long conversations and every role within the sandbox's time, memory
 * and size bounds. A template may refuse some shapes (raise_exception); it may not hang or
 * blow up on them. Returns the problem, or undefined.
 */
export async function chatTemplateProblem(
  sandbox: TemplateSandbox,
  template: string,
  owner: string,
): Promise<string | undefined> {
  const sample: TemplateTurn[] = [
    { role: "user", content: USER },
    { role: "assistant", content: ASSISTANT },
    { role: "user", content: USER },
  ];
  let text: string;
  try {
    text = plainText((await sandbox.render(template, sample, owner)).text);
  } catch (error) {
    if (!(error instanceof TemplateError) || error.kind === "unavailable") throw error;
    if (error.kind === "quarantined") return error.message;
    return error.kind === "template"
      ? `rendering a sample conversation failed: ${error.message}`
      : `rendering a sample conversation: ${error.message}`;
  }
  if (!text.includes(USER) || !text.includes(ASSISTANT)) {
    return "it must write each message's content (e.g. {{ message.content }} in a loop over messages)";
  }
  for (const probe of adversarialProbes()) {
    try {
      await sandbox.render(template, probe.messages, owner);
    } catch (error) {
      if (!(error instanceof TemplateError) || error.kind === "unavailable") throw error;
      if (error.kind === "quarantined") return error.message;
      if (error.outOfBounds) return `rendering ${probe.name}: ${error.message}`;
    }
  }
  return undefined;
}
