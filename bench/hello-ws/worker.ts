/**
 * The floor of the subscribers-at-scale bench (bench/subscribers.bench.ts): a Worker
 * that accepts a WebSocket and sends one message, and the same through a Durable
 * Object that accepts it as a hibernatable socket (what Toolwire's invocation does),
 * so the bench can tell workerd's own cost from Toolwire's.
 */
import { DurableObject } from "cloudflare:workers";

interface HelloEnv {
  HELLO: DurableObjectNamespace<HelloDO>;
}

const HELLO = JSON.stringify({ type: "hello" });

export class HelloDO extends DurableObject<HelloEnv> {
  override async fetch(): Promise<Response> {
    const [client, server] = Object.values(new WebSocketPair()) as [WebSocket, WebSocket];
    this.ctx.acceptWebSocket(server);
    server.serializeAttachment({ subscriberId: crypto.randomUUID() });
    server.send(HELLO);
    return new Response(null, { status: 101, webSocket: client });
  }
}

export default {
  fetch(request: Request, env: HelloEnv): Response | Promise<Response> {
    if (request.headers.get("Upgrade")?.toLowerCase() !== "websocket") return new Response("ok");
    if (new URL(request.url).pathname === "/do") return env.HELLO.getByName("hello").fetch(request);
    const [client, server] = Object.values(new WebSocketPair()) as [WebSocket, WebSocket];
    server.accept();
    server.send(HELLO);
    return new Response(null, { status: 101, webSocket: client });
  },
} satisfies ExportedHandler<HelloEnv>;
