import fs from "node:fs/promises";
import path from "node:path";
import { chromium, type Browser } from "playwright-core";

/** Debian's Chromium (.ci/run installs it with apt-get); tests never skip for lack of it. */
export const CHROMIUM = process.env.HEARTH_TEST_CHROMIUM ?? "/usr/bin/chromium";

/** Where browser tests leave their screenshots (ignored by git): look at them. */
export const SCREENSHOT_DIR = path.resolve(import.meta.dirname, "../../test-output/screenshots");

/** A headless Chromium; --no-sandbox only when running as root, where its sandbox cannot start. */
export async function launchChromium(): Promise<Browser> {
  await fs.mkdir(SCREENSHOT_DIR, { recursive: true });
  const root = process.getuid?.() === 0;
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: root ? ["--no-sandbox"] : [] });
}
