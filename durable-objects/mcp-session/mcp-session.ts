/**
 * Remembers that an MCP 2025-11-25 session was terminated (HTTP DELETE), so its id is a
 * 404 afterwards, and which invocation a request named by its own `_meta` id is, so a
 * later `notifications/cancelled { requestId }` finds it, and the SSE events of its
 * streams, so a reconnect with `Last-Event-ID` replays them on any isolate
 * (docs/decisions/107), and the sandbox a session opened on `/mcp/sandbox/new` owns,
 * which its termination removes (decision 222). Session ids are signed and
 * checked without a lookup (docs/decisions/101); these are all a session stores. One
 * object per session, named by its id; an unknown id costs a read that finds nothing.
 */
import { DurableObject } from "cloudflare:workers";
import type { McpSessionApi, SandboxApi } from "../../src/protocol/index.ts";

/** How long a session's records are kept after their last write: 7 days, like settled invocations. */
const RETENTION_MS = 7 * 86_400_000;

/** Storage key of event `seq` of a stream; zero-padded so keys list in order. */
function eventKey(streamId: string, seq: number): string {
  return `event:${streamId}:${String(seq).padStart(10, "0")}`;
}

function sandboxRecord(env: Env, id: string): SandboxApi {
  return env.SANDBOX_RECORDS.getByName(id) as unknown as SandboxApi;
}

export class McpSessionDO extends DurableObject<Env> implements McpSessionApi {
  async isTerminated(): Promise<boolean> {
    return (await this.ctx.storage.get<boolean>("terminated")) === true;
  }

  async terminate(): Promise<void> {
    await this.ctx.storage.put("terminated", true);
    await this.ctx.storage.setAlarm(Date.now() + RETENTION_MS);
    const sandbox = await this.sandbox();
    // An ended sandbox answers a refusal here, which changes nothing: it is gone either way.
    if (sandbox !== null) await sandboxRecord(this.env, sandbox).remove();
  }

  async ownSandbox(sandboxId: string): Promise<void> {
    await this.ctx.storage.put("sandbox", sandboxId);
    await this.ctx.storage.setAlarm(Date.now() + RETENTION_MS);
  }

  async sandbox(): Promise<string | null> {
    return (await this.ctx.storage.get<string>("sandbox")) ?? null;
  }

  async rememberCall(requestId: string | number, invocationId: string): Promise<void> {
    await this.ctx.storage.put(`call:${JSON.stringify(requestId)}`, invocationId);
    await this.ctx.storage.setAlarm(Date.now() + RETENTION_MS);
  }

  async callOf(requestId: string | number): Promise<string | null> {
    return (await this.ctx.storage.get<string>(`call:${JSON.stringify(requestId)}`)) ?? null;
  }

  async appendEvent(streamId: string, message: string): Promise<number> {
    const counter = `seq:${streamId}`;
    const seq = ((await this.ctx.storage.get<number>(counter)) ?? 0) + 1;
    await this.ctx.storage.put({ [counter]: seq, [eventKey(streamId, seq)]: message });
    await this.ctx.storage.setAlarm(Date.now() + RETENTION_MS);
    return seq;
  }

  async eventsAfter(
    streamId: string,
    seq: number,
  ): Promise<Array<{ seq: number; message: string }>> {
    const events = await this.ctx.storage.list<string>({
      start: eventKey(streamId, seq + 1),
      prefix: `event:${streamId}:`,
    });
    return [...events].map(([key, message]) => ({
      seq: Number(key.slice(key.lastIndexOf(":") + 1)),
      message,
    }));
  }

  override async alarm(): Promise<void> {
    await this.ctx.storage.deleteAll();
  }
}
