/**
 * The list behind `GET /v1/sandboxes`: one line per sandbox record, written by its
 * Sandbox DO whenever the record changes and removed when the record is forgotten.
 * One object (named "all"); a sandbox's own DO stays the source of truth.
 */
import { DurableObject } from "cloudflare:workers";
import type { SandboxDirectoryApi, SandboxView } from "../../src/protocol/index.ts";

/** Most lines `list` answers with (newest first). */
const MAX_LISTED_SANDBOXES = 1000;

export class SandboxDirectoryDO extends DurableObject<Env> implements SandboxDirectoryApi {
  async put(view: SandboxView): Promise<void> {
    await this.ctx.storage.put(`sbx:${view.id}`, view);
  }

  async forget(id: string): Promise<void> {
    await this.ctx.storage.delete(`sbx:${id}`);
  }

  async list(): Promise<SandboxView[]> {
    const rows = await this.ctx.storage.list<SandboxView>({ prefix: "sbx:" });
    return [...rows.values()]
      .sort((a, b) => b.createdAt.localeCompare(a.createdAt))
      .slice(0, MAX_LISTED_SANDBOXES);
  }
}
