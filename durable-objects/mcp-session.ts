/**
 * Remembers that an MCP 2025-11-25 session was terminated (HTTP DELETE), so its id is a
 * 404 afterwards. Session ids are signed and checked without a lookup
 * (docs/decisions/101); this one flag is all a session stores. One object per session,
 * named by its id; an id never terminated costs a read that finds nothing.
 */
import { DurableObject } from "cloudflare:workers";

/** Days a terminated session's flag is kept; an id older than its retention is unusable anyway. */
const TERMINATED_RETENTION_MS = 7 * 86_400_000;

export class McpSessionDO extends DurableObject<Env> {
  async isTerminated(): Promise<boolean> {
    return (await this.ctx.storage.get<boolean>("terminated")) === true;
  }

  async terminate(): Promise<void> {
    await this.ctx.storage.put("terminated", true);
    await this.ctx.storage.setAlarm(Date.now() + TERMINATED_RETENTION_MS);
  }

  override async alarm(): Promise<void> {
    await this.ctx.storage.deleteAll();
  }
}
