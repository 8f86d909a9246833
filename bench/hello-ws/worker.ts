/**
 * The floor of the subscribers bench (bench/subscribers.bench.ts, decision 235): the
 * real Toolwire Worker plus a hello Durable Object that accepts a hibernatable
 * WebSocket and sends it 2 KB at once. It is reached as a subscription is,
 * `GET /v1/hello/:id/socket` → that id's object → 101, so one `wrangler dev` serves
 * both and the bench interleaves them; `?relays=K` spreads the sockets over K such
 * objects (the floor of a relay fan-out). Never deployed: only the bench's generated
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

/** Bytes of the hello message: the 2 KB (a running call's first state was 475–2,839 B). */
const HELLO_BYTES = 2048;

const HELLO = (() => {
  const head = '{"type":"hello","pad":"';
  return `${head}${"x".repeat(HELLO_BYTES - head.length - 2)}"}`;
})();

const HELLO_ROUTE = /^\/v1\/hello\/([\w-]{1,64})\/socket$/;

export class HelloDO extends DurableObject<HelloEnv> {
  override async fetch(request: Request): Promise<Response> {
    if (request.headers.get("Upgrade")?.toLowerCase() !== "websocket") return new Response("awake");
    const [client, server] = Object.values(new WebSocketPair()) as [WebSocket, WebSocket];
    this.ctx.acceptWebSocket(server);
    server.send(HELLO);
    return new Response(null, { status: 101, webSocket: client });
  }
}

/**
 * The objects a hello route reaches: `<id>`, or with `?relays=K` the K objects
 * `<id>-0` … `<id>-(K-1)`, among which each socket goes to one at random (the floor of a
 * fan-out through K relay objects that each hold part of the sockets).
 */
function helloObjects(env: HelloEnv, id: string, url: URL): DurableObjectStub<HelloDO>[] {
  const relays = Number(url.searchParams.get("relays") ?? 0);
  if (!Number.isInteger(relays) || relays < 2 || relays > 64) return [env.HELLO.getByName(id)];
  return Array.from({ length: relays }, (_, n) => env.HELLO.getByName(`${id}-${n}`));
}

/**
 * A socket goes to one of the route's objects. A plain GET wakes them all first, as a
 * call's object is awake before its subscribers come: a new object's first request
 * waits for its SQLite file (miniflare's wrapper writes its name there), which is no
 * part of a subscription.
 */
async function hello(request: Request, objects: DurableObjectStub<HelloDO>[]): Promise<Response> {
  if (request.headers.get("Upgrade")?.toLowerCase() === "websocket") {
    return objects[Math.floor(Math.random() * objects.length)]!.fetch(request);
  }
  await Promise.all(objects.map((o) => o.fetch(request.url)));
  return new Response(`${objects.length} awake`);
}

export default {
  fetch(request: Request, env: HelloEnv, ctx: ExecutionContext): Response | Promise<Response> {
    const url = new URL(request.url);
    const route = HELLO_ROUTE.exec(url.pathname);
    if (route) return hello(request, helloObjects(env, route[1]!, url));
    return app.fetch(request, env, ctx);
  },
} satisfies ExportedHandler<HelloEnv>;
