import { AppError } from "../../errors.js";
import { chatTemplateProblem } from "../../templates/template-check.js";
import { TemplateError, type TemplateSandbox } from "../../templates/template-sandbox.js";

/**
 * Users' chat templates checked before they are saved, in the API's template sandbox (never
 * on the API's main thread): they must render, and stay within bounds on adversarial
 * conversations (templates/template-check.ts).
 */
export class ChatTemplateCheck {
  constructor(private readonly sandbox: TemplateSandbox) {}

  /** The template's problem, or undefined. */
  async problem(template: string): Promise<string | undefined> {
    try {
      return await chatTemplateProblem(this.sandbox, template);
    } catch (cause) {
      if (cause instanceof TemplateError) {
        throw new AppError("unavailable", `The chat template could not be checked now: ${cause.message}`, { cause });
      }
      throw cause;
    }
  }

  /** A template about to be saved from a request: a 400 naming `param` when it does not pass. */
  async check(template: string, param: string): Promise<void> {
    const problem = await this.problem(template);
    if (problem) throw new AppError("invalid_request", `Invalid ${param}: ${problem}`, { param });
  }
}
