import { open, type FileHandle } from "node:fs/promises";
import { AppError } from "../../errors.js";

/**
 * How the model-file readers report problems: AppError("invalid_request", "<file>: <problem>"),
 * where <file> is the file's base name (server paths never reach API clients).
 */

export function fileProblem(label: string, problem: string): AppError {
  return new AppError("invalid_request", `${label}: ${problem}`);
}

export async function openModelFile(file: string, label: string): Promise<FileHandle> {
  try {
    return await open(file, "r");
  } catch (cause) {
    const code = (cause as NodeJS.ErrnoException).code ?? "error";
    throw new AppError("invalid_request", `${label}: cannot open file (${code})`, { cause });
  }
}
