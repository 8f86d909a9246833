/**
 * The Run Durable Object: one per `runId`, the durable index of a run's calls
 * (docs/decisions/122). Each Invocation DO of the run notes its call here as it starts,
 * every heartbeat while it runs, and when it settles; run pages and `toolwire watch
 * --run` follow it over a hibernatable WebSocket.
 *
 * Socket messages (JSON text): `{"type":"calls","calls":[…]}` batches of the current
 * list (at most 500 calls each, oldest first), then `{"type":"synced"}`, then one
 * `{"type":"call","call":{…}}` per change. `{"type":"ping"}` is answered
 * `{"type":"pong"}` by the runtime.
 */
import { DurableObject } from "cloudflare:workers";
import { workerConfig } from "../../src/protocol/index.ts";
import { PING_MESSAGE, PONG_MESSAGE } from "../invocation/fanout/keep-alive.ts";
import type { RunApi, RunCall, RunNote } from "./run-notes.ts";
import { RunStore } from "./run-store.ts";

/** Calls per `calls` message: ~150 KB, well under the 1 MiB message limit. */
export const CALLS_PER_MESSAGE = 500;

/** Storage key of the sandbox the run owns (decision 221); kept until the run is retired. */
const SANDBOX_KEY = "sandbox";

export class RunDO extends DurableObject<Env> implements RunApi {
  readonly #store: RunStore;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#store = new RunStore(ctx.storage);
    ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair(PING_MESSAGE, PONG_MESSAGE));
  }

  /** Records a call's start, progress or end and tells every follower. */
  async note(note: RunNote): Promise<void> {
    const call = this.#store.apply(note);
    if (call === null) return;
    const message = JSON.stringify({ type: "call", call });
    for (const ws of this.ctx.getWebSockets()) {
      try {
        ws.send(message);
      } catch {}
    }
    // The index is kept as long as its calls are: a retention period after the last end.
    if (note.kind === "settled") {
      await this.ctx.storage.setAlarm(Date.now() + workerConfig(this.env).settledRetentionMs);
    }
  }

  async calls(): Promise<RunCall[]> {
    return this.#store.calls();
  }

  async sandbox(): Promise<string | null> {
    return (await this.ctx.storage.get<string>(SANDBOX_KEY)) ?? null;
  }

  async claimSandbox(id: string): Promise<string> {
    const owned = await this.ctx.storage.get<string>(SANDBOX_KEY);
    if (owned !== undefined) return owned;
    await this.ctx.storage.put(SANDBOX_KEY, id);
    return id;
  }

  /** `/socket`: the Worker checked the credential; upgrade and send the list. */
  override async fetch(request: Request): Promise<Response> {
    if (new URL(request.url).pathname !== "/socket")
      return new Response("Not found", { status: 404 });
    if (request.headers.get("Upgrade")?.toLowerCase() !== "websocket") {
      return new Response("Expected Upgrade: websocket", { status: 426 });
    }
    const pair = new WebSocketPair();
    const [client, server] = [pair[0], pair[1]];
    this.ctx.acceptWebSocket(server);
    const calls = this.#store.calls();
    for (let at = 0; at < calls.length; at += CALLS_PER_MESSAGE) {
      server.send(
        JSON.stringify({ type: "calls", calls: calls.slice(at, at + CALLS_PER_MESSAGE) }),
      );
    }
    server.send(JSON.stringify({ type: "synced" }));
    return new Response(null, { status: 101, webSocket: client });
  }

  override async webSocketClose(ws: WebSocket, code: number, reason: string): Promise<void> {
    try {
      ws.close(code === 1005 ? 1000 : code, reason);
    } catch {}
  }

  /** Retirement: once no call runs and the retention period passed, everything goes. */
  override async alarm(): Promise<void> {
    if (this.#store.calls().some((c) => c.status === "running")) {
      await this.ctx.storage.setAlarm(Date.now() + workerConfig(this.env).settledRetentionMs);
      return;
    }
    await this.ctx.storage.deleteAll();
    this.#store.reset();
  }
}
