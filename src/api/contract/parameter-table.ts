import { openApiDocument } from "./document.js";
import { type Endpoint, PARAMETER_POLICY } from "./openai/parameter-policy.js";

/** Each endpoint's request schema, by its name in the OpenAPI document. */
const REQUESTS: Record<Endpoint, { schema: string; title: string }> = {
  completions: { schema: "CompletionRequest", title: "completions" },
  chat: { schema: "ChatCompletionRequest", title: "chat" },
  embeddings: { schema: "EmbeddingRequest", title: "embeddings" },
};

type Status = "honoured" | "no effect" | "refused";

interface Row {
  status: Partial<Record<Endpoint, Status>>;
  notes: Map<string, Endpoint[]>;
}

/**
 * docs/api.md's table of every request parameter of the OpenAI endpoints and what becomes of
 * it (parameter-policy.ts): made from the OpenAPI document, so what the table says is what the
 * schemas do. A parameter absent from an endpoint's column is unknown there: a 400.
 */
export function parameterTable(): string {
  const schemas = (openApiDocument().components as { schemas: Record<string, { properties: object }> }).schemas;
  const rows = new Map<string, Row>();
  const endpoints = Object.keys(REQUESTS) as Endpoint[];
  for (const endpoint of endpoints) {
    const properties = schemas[REQUESTS[endpoint].schema]!.properties as Record<string, { description?: string }>;
    for (const [name, property] of Object.entries(properties)) {
      const rule = PARAMETER_POLICY[endpoint][name];
      const row: Row = rows.get(name) ?? { status: {}, notes: new Map() };
      row.status[endpoint] = rule?.status ?? "honoured";
      const note = rule ? rule.why : (property.description ?? "");
      row.notes.set(note, [...(row.notes.get(note) ?? []), endpoint]);
      rows.set(name, row);
    }
  }
  const order: Status[] = ["honoured", "no effect", "refused"];
  const rank = (row: Row) => Math.min(...Object.values(row.status).map((s) => order.indexOf(s)));
  const sorted = [...rows].sort(([a, ra], [b, rb]) => rank(ra) - rank(rb) || a.localeCompare(b));
  const lines = [
    `| Parameter | ${endpoints.map((e) => REQUESTS[e].title).join(" | ")} | What it does |`,
    `|---|${endpoints.map(() => "---").join("|")}|---|`,
  ];
  for (const [name, row] of sorted) {
    const cells = endpoints.map((e) => row.status[e] ?? "—");
    const notes = [...row.notes].map(([note, where]) =>
      row.notes.size > 1 ? `${where.map((e) => REQUESTS[e].title).join(", ")}: ${note}` : note,
    );
    lines.push(
      `| \`${name}\` | ${cells.join(" | ")} | ${notes.join(" ").replaceAll("|", "\\|").replaceAll("\n", " ")} |`,
    );
  }
  return lines.join("\n");
}
