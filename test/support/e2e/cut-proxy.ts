/**
 * A loopback TCP proxy that can be cut: every byte is passed on as it is, until
 * `stop()` destroys every live connection and stops listening; `start()` listens on the
 * same port again. What a dropped network looks like to the client on one side.
 */
import { createConnection, createServer, type Server, type Socket } from "node:net";

export interface CutProxy {
  url: string;
  /**
   * The head (request line and headers) of every HTTP request passed on, in order; a
   * kept-alive connection carries several, and Node's WebSocket may reuse one.
   */
  readonly requests: string[];
  /** Cuts every live connection and refuses new ones until `start()`. */
  stop(): Promise<void>;
  /** Accepts connections again on the same port. */
  start(): Promise<void>;
  close(): Promise<void>;
}

const REQUEST_LINE = /^(GET|POST|PUT|PATCH|DELETE|HEAD) \/\S* HTTP\/1\.1\r$/gm;

export async function startCutProxy(target: { host: string; port: number }): Promise<CutProxy> {
  const live = new Set<Socket>();
  const requests: string[] = [];
  const onConnection = (client: Socket) => {
    const upstream = createConnection(target);
    for (const socket of [client, upstream]) {
      live.add(socket);
      socket.on("close", () => live.delete(socket));
      socket.on("error", () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.on("data", (chunk: Buffer) => {
      const text = chunk.toString("latin1");
      for (const start of text.matchAll(REQUEST_LINE)) {
        const end = text.indexOf("\r\n\r\n", start.index);
        requests.push(text.slice(start.index, end === -1 ? undefined : end));
      }
    });
    client.pipe(upstream);
    upstream.pipe(client);
  };
  let server: Server = createServer(onConnection);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  const stop = async () => {
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const socket of live) socket.destroy();
    await closed;
  };
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    stop,
    start: async () => {
      server = createServer(onConnection);
      await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
    },
    close: () => (server.listening ? stop() : Promise.resolve()),
  };
}
