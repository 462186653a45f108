import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import sharp from "sharp";

/**
 * A small server speaking the AUTOMATIC1111 web API's request and response shapes, which
 * records what Hearth sends. How slowly it answers is set per test.
 */
export class FakeA1111 {
  readonly requests: { path: string; body: Record<string, unknown> }[] = [];
  delayMs = 0;
  failWith: number | undefined;
  extraImages = 0;
  private step = 0;
  private server: Server | undefined;
  url = "";

  async start() {
    this.server = createServer(async (req, res) => {
      const body = req.method === "POST" ? await json(req) : {};
      const path = req.url ?? "";
      this.requests.push({ path, body });
      if (path.startsWith("/sdapi/v1/progress")) {
        this.step++;
        return send(res, 200, { progress: 0.5, state: { sampling_step: this.step, sampling_steps: 20 } });
      }
      if (path === "/sdapi/v1/interrupt") return send(res, 200, {});
      if (this.failWith) return send(res, this.failWith, { error: "OutOfMemoryError", detail: "CUDA out of memory" });
      await new Promise((r) => setTimeout(r, this.delayMs));
      const count = Number(body.batch_size ?? 1) + this.extraImages;
      const seed = Number(body.seed);
      const png = await sharp({
        create: { width: Number(body.width), height: Number(body.height), channels: 3, background: "#c04020" },
      })
        .png()
        .toBuffer();
      return send(res, 200, {
        images: Array.from({ length: count }, () => png.toString("base64")),
        parameters: body,
        info: JSON.stringify({ all_seeds: Array.from({ length: count }, (_, i) => seed + 100 + i) }),
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  reset() {
    this.requests.length = 0;
    this.delayMs = 0;
    this.failWith = undefined;
    this.extraImages = 0;
    this.step = 0;
  }

  paths = () => this.requests.map((r) => r.path.split("?")[0]);

  close() {
    this.server?.closeAllConnections();
    return new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}

async function json(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}") as Record<string, unknown>;
}

function send(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}
