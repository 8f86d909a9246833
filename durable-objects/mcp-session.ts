/**
 * Remembers that an MCP 2025-11-25 session was terminated (HTTP DELETE), so its id is a
 * 404 afterwards, and which invocation a request named by its own `_meta` id is, so a
 * later `notifications/cancelled { requestId }` finds it. Session ids are signed and
 * checked without a lookup (docs/decisions/101); these are all a session stores. One
 * object per session, named by its id; an unknown id costs a read that finds nothing.
 */
import { DurableObject } from "cloudflare:workers";

/** How long a session's records are kept after their last write: 7 days, like settled invocations. */
const RETENTION_MS = 7 * 86_400_000;

export class McpSessionDO extends DurableObject<Env> {
  async isTerminated(): Promise<boolean> {
    return (await this.ctx.storage.get<boolean>("terminated")) === true;
  }

  async terminate(): Promise<void> {
    await this.ctx.storage.put("terminated", true);
    await this.ctx.storage.setAlarm(Date.now() + RETENTION_MS);
  }

  /** Records that JSON-RPC request `requestId` of this session is invocation `invocationId`. */
  async rememberCall(requestId: string | number, invocationId: string): Promise<void> {
    await this.ctx.storage.put(`call:${JSON.stringify(requestId)}`, invocationId);
    await this.ctx.storage.setAlarm(Date.now() + RETENTION_MS);
  }

  async callOf(requestId: string | number): Promise<string | null> {
    return (await this.ctx.storage.get<string>(`call:${JSON.stringify(requestId)}`)) ?? null;
  }

  override async alarm(): Promise<void> {
    await this.ctx.storage.deleteAll();
  }
}
