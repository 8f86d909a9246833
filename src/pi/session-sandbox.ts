/**
 * The sandbox of one pi session (decision 223): made when the session starts, named
 * after it, and recorded in the session file (a `toolwire-sandbox` custom entry), so a
 * resumed session (`/resume`, `--continue`) finds it again while it is alive, and makes
 * a new one, saying so, once it has ended. On exit it is left to its idle timeout.
 * `TOOLWIRE_SANDBOX` pins one instead (`default`: the host's shared workspace).
 */
import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";
import { ToolwireError } from "../client/index.ts";
import { SandboxesClient, type SandboxView } from "../client/sandboxes.ts";
import { missingSetting, type PiToolwireSettings } from "./settings.ts";

/** The custom entry type that records a session's sandbox: `{ id }`. */
export const SANDBOX_ENTRY = "toolwire-sandbox";

/** Where a pi session's calls run, made or found once per session. */
export class SessionSandbox {
  readonly #pi: ExtensionAPI;
  readonly #settings: PiToolwireSettings;
  #id: string | null = null;
  #opening: Promise<string> | null = null;

  constructor(pi: ExtensionAPI, settings: PiToolwireSettings) {
    this.#pi = pi;
    this.#settings = settings;
  }

  /** The sandbox's name as `/toolwire` shows it, or null before it is known. */
  get current(): string | null {
    return this.#settings.sandbox ?? this.#id;
  }

  /**
   * Starts finding or making the session's sandbox (pi's `session_start`); tool calls
   * wait for it. A failure is kept for the first call to report, which tries again.
   */
  open(ctx: ExtensionContext): void {
    if (this.#settings.sandbox !== null || missingSetting(this.#settings)) return;
    this.#id = null;
    this.#opening = this.#findOrMake(ctx);
    this.#opening.catch(() => {
      this.#opening = null;
    });
  }

  /** The sandbox a call runs in: the pinned one, or the session's own. */
  async id(ctx: ExtensionContext): Promise<string> {
    if (this.#settings.sandbox !== null) return this.#settings.sandbox;
    const missing = missingSetting(this.#settings);
    if (missing) throw new Error(`Toolwire is not configured: ${missing}`);
    if (this.#id !== null) return this.#id;
    this.#opening ??= this.#findOrMake(ctx);
    try {
      return await this.#opening;
    } catch (err) {
      this.#opening = null;
      throw new Error(
        `Toolwire could not make this pi session's sandbox: ${(err as Error).message}; start Toolwire with npm start and check TOOLWIRE_URL, or set TOOLWIRE_SANDBOX=default`,
      );
    }
  }

  /** Deletes the session's own sandbox (`/toolwire delete`); the next call makes a new one. */
  async remove(): Promise<string> {
    if (this.#settings.sandbox !== null) {
      return `toolwire: sandbox "${this.#settings.sandbox}" is pinned by TOOLWIRE_SANDBOX; it is not this session's to delete`;
    }
    const id = this.#id ?? (await this.#opening?.catch(() => null)) ?? null;
    if (id === null) return "toolwire: this session has no sandbox yet";
    await this.#client().remove(id);
    this.#id = null;
    this.#opening = null;
    return `toolwire: deleted sandbox ${id}; the next tool call makes a new one`;
  }

  /** The live sandbox this session recorded, or a new one (recorded, and said when it replaces one). */
  async #findOrMake(ctx: ExtensionContext): Promise<string> {
    const client = this.#client();
    const recorded = recordedSandbox(ctx);
    let ended: SandboxView | null = null;
    if (recorded !== null) {
      const view = await client.get(recorded).catch((err: unknown) => {
        if (err instanceof ToolwireError && err.code === "not_found") return null;
        throw err;
      });
      if (view?.status === "active") {
        this.#id = view.id;
        return view.id;
      }
      ended = view;
    }
    const made = await client.create({
      ...this.#settings.newSandbox,
      name: `pi ${ctx.sessionManager.getSessionId()}`,
    });
    this.#pi.appendEntry(SANDBOX_ENTRY, { id: made.id });
    this.#id = made.id;
    if (recorded !== null) {
      const how = ended ? `is ${ended.status} (${ended.endReason})` : "is gone";
      ctx.ui.notify(
        `toolwire: this session's sandbox ${recorded} ${how}; made a new one, ${made.id}: files from before are not in it`,
        "warning",
      );
    }
    return made.id;
  }

  #client(): SandboxesClient {
    return new SandboxesClient({ baseUrl: this.#settings.url, token: this.#settings.token });
  }
}

/** The last sandbox id the session recorded, or null. */
function recordedSandbox(ctx: ExtensionContext): string | null {
  const entries = ctx.sessionManager.getEntries();
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i];
    if (entry?.type === "custom" && entry.customType === SANDBOX_ENTRY) {
      const id = (entry.data as { id?: unknown } | undefined)?.id;
      if (typeof id === "string") return id;
    }
  }
  return null;
}
