import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";

/**
 * Commit subjects of at most 72 characters, the why in the body (../shared/STYLE.md): a
 * history one can scan. Checked for every commit since the rule began; the ones before it
 * stay as they landed (rewriting landed history is worse than long subjects).
 */
const RULE_SINCE = "75dd861";
const MAX_SUBJECT = 72;

describe("commit messages", () => {
  it(`have subjects of at most ${MAX_SUBJECT} characters since ${RULE_SINCE}`, () => {
    const root = new URL("..", import.meta.url);
    const log = execFileSync("git", ["log", "--format=%h %s", `${RULE_SINCE}..HEAD`], { cwd: root, encoding: "utf8" });
    const long = log
      .split("\n")
      .filter((line) => line.length > 0)
      .filter((line) => line.slice(line.indexOf(" ") + 1).length > MAX_SUBJECT);
    expect(long).toEqual([]);
  });
});
