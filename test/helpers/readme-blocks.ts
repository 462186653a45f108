/**
 * The fenced code blocks of a Markdown file, for the test that follows the README: each with
 * its language and line, and the reason it is not run when the line before it (blank lines
 * aside) is a marker `<!-- readme-test: skip: why -->`. A block runs unless so marked, so a
 * new block is run by default; one without a language is refused (tag output `text`).
 */

export type BlockKind = "sh" | "js" | "python" | "text";

export interface ReadmeBlock {
  /** The line of its opening fence, from 1. */
  line: number;
  kind: BlockKind;
  code: string;
  /** Why it is not run. */
  skip?: string;
}

const KINDS: Record<string, BlockKind> = {
  sh: "sh",
  bash: "sh",
  shell: "sh",
  js: "js",
  javascript: "js",
  python: "python",
  py: "python",
  text: "text",
};

export const SKIP_MARKER = /^<!--\s*readme-test:\s*skip:\s*(.*?)\s*-->$/;

export function readmeBlocks(markdown: string): ReadmeBlock[] {
  const lines = markdown.split("\n");
  const blocks: ReadmeBlock[] = [];
  let skip: { reason: string; line: number } | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const fence = /^(`{3,})\s*(\S*)\s*$/.exec(line);
    if (fence) {
      const tag = fence[2]!;
      const kind = KINDS[tag];
      if (!kind)
        throw new Error(
          `line ${i + 1}: a block tagged "${tag}": tag it sh, js or python to run it, or text if it is not run`,
        );
      const close = lines.findIndex((l, j) => j > i && /^`{3,}\s*$/.test(l) && l.trim().length >= fence[1]!.length);
      if (close === -1) throw new Error(`line ${i + 1}: the block is never closed`);
      if (skip && kind === "text") throw new Error(`line ${skip.line}: a text block is never run; remove the marker`);
      blocks.push({ line: i + 1, kind, code: lines.slice(i + 1, close).join("\n"), skip: skip?.reason });
      skip = undefined;
      i = close;
      continue;
    }
    const marker = SKIP_MARKER.exec(line.trim());
    if (marker) {
      if (!marker[1]) throw new Error(`line ${i + 1}: say why the block is not run`);
      skip = { reason: marker[1], line: i + 1 };
    } else if (line.trim() !== "" && skip) {
      throw new Error(`line ${skip.line}: the marker is not followed by a block`);
    }
  }
  if (skip) throw new Error(`line ${skip.line}: the marker is not followed by a block`);
  return blocks;
}
