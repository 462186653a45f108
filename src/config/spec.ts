import type { z } from "zod";

/** One environment variable: how its text is read, its default, and what it means in one line. */
export interface VariableSpec {
  schema: z.ZodType;
  default?: string;
  /** One line (at most 120 characters) for the tables; the rest is in docs/configuration.md. */
  description: string;
}

/** A group of variables, as docs/configuration.md and the README present them. */
export interface Tier {
  id: string;
  title: string;
  variables: Record<string, VariableSpec>;
}
