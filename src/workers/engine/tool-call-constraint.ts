import { type LlamaGrammar, LlamaGrammarEvaluationState, type LlamaModel } from "node-llama-cpp";

/**
 * A tool-call grammar's state through one generation: in force from the first token when
 * there is no trigger, else from the token after the one that completes the trigger in the
 * generated text. It is never lifted: the answer ends with its calls.
 */
export class ToolCallConstraint {
  private active: LlamaGrammarEvaluationState | undefined;
  private text = "";

  constructor(
    private readonly model: LlamaModel,
    private readonly grammar: LlamaGrammar,
    private readonly trigger: string | undefined,
  ) {
    if (trigger === undefined) this.active = this.start();
  }

  /** The state to sample the next token with (none while the model writes text). */
  state(): LlamaGrammarEvaluationState | undefined {
    return this.active;
  }

  /** Text the model generated, in order. */
  see(text: string): void {
    if (this.active || this.trigger === undefined) return;
    // Only the tail that could hold the trigger is kept.
    this.text = (this.text + text).slice(-(this.trigger.length + text.length));
    if (this.text.includes(this.trigger)) this.active = this.start();
  }

  private start(): LlamaGrammarEvaluationState {
    return new LlamaGrammarEvaluationState({ model: this.model, grammar: this.grammar });
  }
}
