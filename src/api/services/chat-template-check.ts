import { AppError } from "../../errors.js";
import { chatTemplateProblem } from "../../templates/template-check.js";
import { TemplateError } from "../../templates/template-error.js";
import { quarantineMessage, templateHash, type QuarantineEntry } from "../../templates/template-quarantine.js";
import type { TemplateSandbox } from "../../templates/template-sandbox.js";

/**
 * Users' chat templates, in the API: checked before they are saved, in the API's template
 * sandbox (never on the API's main thread): they must render, and stay within bounds on
 * adversarial conversations (templates/template-check.ts). A template quarantined by any
 * process (it went past the time or memory bound) is refused at once, at save and at chat.
 */
export class ChatTemplateCheck {
  constructor(private readonly sandbox: TemplateSandbox) {}

  /** The template's problem, or undefined. `owner`: the account whose model it is (its share of the sandbox). */
  async problem(template: string, owner: string): Promise<string | undefined> {
    const quarantined = await this.quarantine(template);
    if (quarantined) return quarantineMessage(quarantined);
    try {
      return await chatTemplateProblem(this.sandbox, template, owner);
    } catch (cause) {
      if (cause instanceof TemplateError) {
        throw new AppError("unavailable", `The chat template could not be checked now: ${cause.message}`, { cause });
      }
      throw cause;
    }
  }

  /** A template about to be saved from a request: a 400 naming `param` when it does not pass. */
  async check(template: string, owner: string, param: string): Promise<void> {
    const problem = await this.problem(template, owner);
    if (problem) throw new AppError("invalid_request", `Invalid ${param}: ${problem}`, { param });
  }

  /** Before a chat with a model's own template is queued: a 400 while the template is quarantined. */
  async beforeChat(template: string | undefined): Promise<void> {
    const quarantined = template === undefined ? undefined : await this.quarantine(template);
    if (quarantined) {
      throw new AppError(
        "invalid_request",
        `The model's chat template is quarantined. ${quarantineMessage(quarantined)}`,
        {
          param: "model",
        },
      );
    }
  }

  /** The template's quarantine, as any process knows it. */
  quarantine(template: string): Promise<QuarantineEntry | undefined> {
    return this.sandbox.quarantine.lookup(templateHash(template));
  }
}
