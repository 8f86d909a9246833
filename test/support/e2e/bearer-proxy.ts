/**
 * A loopback HTTP proxy that adds `Authorization: Bearer <token>` to every request that
 * lacks one and passes everything else through as it streams (SSE, long bodies). What
 * the Durable Streams conformance suite, which sends no credentials, reaches the Worker
 * through: the Worker itself never opens a stream route without a credential.
 */
import { createServer, request as httpRequest, type Server } from "node:http";
import { HOST } from "../processes.ts";

export interface BearerProxy {
  url: string;
  close(): Promise<void>;
}

/** Listens on a free loopback port and forwards to `target` (an `http://host:port` origin). */
export async function startBearerProxy(target: string, token: string): Promise<BearerProxy> {
  const upstream = new URL(target);
  const server: Server = createServer((req, res) => {
    const headers = { ...req.headers, host: upstream.host };
    headers.authorization ??= `Bearer ${token}`;
    const forwarded = httpRequest(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
        answer.pipe(res);
      },
    );
    forwarded.on("error", () => res.destroy());
    res.on("close", () => forwarded.destroy());
    req.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, HOST, resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://${HOST}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
