import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { adminKeySource, listeningPort, localUrl, readyLine } from "../../src/process/ready-announcement.js";

describe("the ready line", () => {
  it("names the address a person opens: loopback when Hearth listens on every interface", () => {
    expect(localUrl({ host: "127.0.0.1", port: 8080 })).toBe("http://127.0.0.1:8080");
    expect(localUrl({ host: "0.0.0.0", port: 9000 })).toBe("http://127.0.0.1:9000");
    expect(localUrl({ host: "::", port: 9000 })).toBe("http://[::1]:9000");
    expect(localUrl({ host: "10.1.2.3", port: 80 })).toBe("http://10.1.2.3:80");
  });

  it("is asked for at the port the API's own message names, and no other message's", () => {
    expect(listeningPort({ hearth: "api-listening", port: 8080 })).toBe(8080);
    for (const other of [{ hearth: "api-listening", port: "8080" }, { hearth: "other", port: 1 }, null, "8080", 8080]) {
      expect(listeningPort(other)).toBeUndefined();
    }
  });

  it("says where the key is: the file, HEARTH_ADMIN_KEY, or that the file is gone", async () => {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "hearth-ready-"));
    try {
      const keyFile = path.join(dataDir, "admin-api-key");
      const url = "http://127.0.0.1:8080";
      const gone = await adminKeySource({ dataDir, adminKey: undefined });
      expect(gone).toEqual({ fromEnvironment: false, file: keyFile, fileExists: false });
      expect(readyLine(url, gone)).toBe(
        `Hearth is ready: ${url} — the admin key file ${keyFile} is gone; create a key with \`npm run admin -- create-key\``,
      );
      await fs.writeFile(keyFile, "hth_x\n");
      expect(readyLine(url, await adminKeySource({ dataDir, adminKey: undefined }))).toBe(
        `Hearth is ready: ${url} — sign in with the key in ${keyFile} (npx hearth signin --server ${url} < ${keyFile})`,
      );
      expect(readyLine(url, await adminKeySource({ dataDir, adminKey: "hth_from_env_0123456789" }))).toBe(
        `Hearth is ready: ${url} — sign in with the key in HEARTH_ADMIN_KEY (npx hearth signin --server ${url})`,
      );
      // Inside the working directory, the path as a person types it there.
      const inside = await adminKeySource({ dataDir: path.join(process.cwd(), "data"), adminKey: undefined });
      expect(inside.file).toBe(path.join("data", "admin-api-key"));
    } finally {
      await fs.rm(dataDir, { recursive: true, force: true });
    }
  });
});
