import type { ChatMessage, ToolUse } from "../../domain/generation.js";
import { checkJsonSchema } from "../../domain/json-schema-subset.js";
import { AppError } from "../../errors.js";
import type { ChatRequest } from "../contract/openai/requests.js";

type RequestMessage = ChatRequest["messages"][number];

const textOf = (content: string | { text: string }[]) =>
  typeof content === "string" ? content : content.map((p) => p.text).join("");

/**
 * OpenAI messages → Hearth's: "developer" is a system message; text parts are joined; an
 * assistant's tool calls and a tool message's call ID come along. A tool message must answer
 * a call an earlier assistant message made, and an assistant message must say something.
 */
export function toMessages(messages: ChatRequest["messages"]): ChatMessage[] {
  const callIds = new Set<string>();
  return messages.map((m: RequestMessage, i): ChatMessage => {
    if (m.role === "tool") {
      if (!callIds.has(m.tool_call_id)) {
        throw new AppError(
          "invalid_request",
          `messages[${i}] answers tool call ${JSON.stringify(m.tool_call_id)}, which no earlier assistant message made.`,
          { param: `messages[${i}].tool_call_id` },
        );
      }
      return { role: "tool", content: textOf(m.content), toolCallId: m.tool_call_id };
    }
    if (m.role !== "assistant") return { role: m.role === "developer" ? "system" : m.role, content: textOf(m.content) };
    const calls = m.tool_calls ?? [];
    if (m.content == null && calls.length === 0) {
      throw new AppError(
        "invalid_request",
        `messages[${i}] is an assistant message with neither content nor tool_calls.`,
        {
          param: `messages[${i}].content`,
        },
      );
    }
    for (const call of calls) callIds.add(call.id);
    return {
      role: "assistant",
      content: m.content == null ? "" : textOf(m.content),
      ...(calls.length > 0
        ? { toolCalls: calls.map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments })) }
        : {}),
    };
  });
}

/**
 * The request's tools and tool_choice as Hearth's tool use; none when no tools are offered
 * (absent, or tool_choice `none`: the model then answers in text, with no tools in its prompt).
 */
export function toToolUse(
  req: Pick<ChatRequest, "tools" | "tool_choice" | "parallel_tool_calls">,
): ToolUse | undefined {
  const choice = req.tool_choice ?? (req.tools ? "auto" : "none");
  if (!req.tools) {
    if (choice === "none") return undefined;
    throw new AppError("invalid_request", "tool_choice needs tools to choose from.", { param: "tool_choice" });
  }
  const names = new Set<string>();
  for (const [i, t] of req.tools.entries()) {
    if (names.has(t.function.name)) {
      throw new AppError("invalid_request", `Two tools are named ${t.function.name}.`, {
        param: `tools[${i}].function.name`,
      });
    }
    names.add(t.function.name);
    if (t.function.parameters != null) {
      const check = checkJsonSchema(t.function.parameters);
      if (!check.ok) {
        throw new AppError(
          "invalid_request",
          `tools[${i}].function.parameters at ${check.at}: ${check.reason} docs/api.md lists the supported keywords.`,
          { param: `tools[${i}].function.parameters` },
        );
      }
    }
  }
  if (choice === "none") return undefined;
  if (typeof choice === "object" && !names.has(choice.function.name)) {
    throw new AppError("invalid_request", `tool_choice names ${choice.function.name}, which is not among the tools.`, {
      param: "tool_choice",
    });
  }
  return {
    tools: req.tools.map((t) => ({
      name: t.function.name,
      ...(t.function.description != null ? { description: t.function.description } : {}),
      ...(t.function.parameters != null ? { parameters: t.function.parameters } : {}),
    })),
    choice: typeof choice === "object" ? { name: choice.function.name } : choice,
    parallel: req.parallel_tool_calls ?? true,
  };
}
