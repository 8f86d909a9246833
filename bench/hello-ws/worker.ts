/**
 * The floor of the subscribers bench (bench/subscribers.bench.ts, decision 235): the
 * real Toolwire Worker plus a hello Durable Object that accepts a hibernatable
 * WebSocket and sends it 2 KB at once. It is reached as a subscription is,
 * `GET /v1/hello/:id/socket` → that id's object → 101, so one `wrangler dev` serves
 * both and the bench interleaves them. Never deployed: only the bench's generated
 * config (bench/hello-config.ts) names this entry; wrangler.toml names worker-entry.ts.
 */
import { DurableObject } from "cloudflare:workers";
import app from "../../worker-entry.ts";

export {
  InvocationDO,
  McpSessionDO,
  RunDO,
  SandboxDirectoryDO,
  SandboxDO,
} from "../../worker-entry.ts";

interface HelloEnv extends Env {
  HELLO: DurableObjectNamespace<HelloDO>;
}

/** Bytes of the hello message: about what a running call's first state weighs. */
const HELLO_BYTES = 2048;

const HELLO = (() => {
  const head = '{"type":"hello","pad":"';
  return `${head}${"x".repeat(HELLO_BYTES - head.length - 2)}"}`;
})();

const HELLO_ROUTE = /^\/v1\/hello\/([\w-]{1,64})\/socket$/;

export class HelloDO extends DurableObject<HelloEnv> {
  override async fetch(): Promise<Response> {
    const [client, server] = Object.values(new WebSocketPair()) as [WebSocket, WebSocket];
    this.ctx.acceptWebSocket(server);
    server.send(HELLO);
    return new Response(null, { status: 101, webSocket: client });
  }
}

export default {
  fetch(request: Request, env: HelloEnv, ctx: ExecutionContext): Response | Promise<Response> {
    const hello = HELLO_ROUTE.exec(new URL(request.url).pathname);
    if (hello) return env.HELLO.getByName(hello[1]!).fetch(request);
    return app.fetch(request, env, ctx);
  },
} satisfies ExportedHandler<HelloEnv>;
