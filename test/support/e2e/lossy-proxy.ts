/**
 * A loopback HTTP proxy that forwards every request to `target` and, for the requests
 * `drop` picks, lets the request reach the server but cuts the client's connection
 * instead of passing the answer on: a response lost on the way back.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";

export interface LossyProxy {
  url: string;
  /** Answers that were cut, and answers that were passed on. */
  readonly dropped: number;
  readonly passed: number;
  close(): Promise<void>;
}

export async function startLossyProxy(
  target: string,
  drop: (req: IncomingMessage) => boolean,
): Promise<LossyProxy> {
  let dropped = 0;
  let passed = 0;
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (typeof value === "string" && name !== "host" && name !== "connection")
        headers.set(name, value);
    }
    const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
    const upstream = await fetch(new URL(req.url ?? "/", target), {
      method: req.method ?? "GET",
      headers,
      ...(body && req.method !== "GET" ? { body } : {}),
    });
    const answer = Buffer.from(await upstream.arrayBuffer());
    if (drop(req)) {
      // The server has answered (and applied the request); the client never hears it.
      dropped++;
      req.socket.destroy();
      return;
    }
    passed++;
    const out: Record<string, string> = {};
    upstream.headers.forEach((value, name) => {
      if (name !== "content-encoding" && name !== "content-length" && name !== "transfer-encoding")
        out[name] = value;
    });
    res.writeHead(upstream.status, out);
    res.end(answer);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    get dropped() {
      return dropped;
    },
    get passed() {
      return passed;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
