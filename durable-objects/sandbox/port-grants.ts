/**
 * The exposed ports of one sandbox, in its Sandbox DO's storage (decision 182): one grant
 * per port (`port:<n>`), with the nonce its URL's token carries and its expiry. Exposing a
 * port again replaces its grant (the old URL stops working); revoking deletes it.
 * The Worker checks a preview token's grant here on each request.
 */
import { type Outcome, ok, refusal } from "../../src/protocol/index.ts";
import { type PortGrant, PREVIEW_MAX_PORTS } from "../../src/protocol/preview.ts";

export class PortGrants {
  readonly #storage: DurableObjectStorage;

  constructor(storage: DurableObjectStorage) {
    this.#storage = storage;
  }

  /** Grants `port` until `seconds` from now, replacing any grant it had. */
  async grant(port: number, seconds: number): Promise<Outcome<PortGrant>> {
    const live = await this.list();
    if (!live.some((g) => g.port === port) && live.length >= PREVIEW_MAX_PORTS) {
      return refusal(
        "too_many_requests",
        `this sandbox has ${PREVIEW_MAX_PORTS} ports exposed, the most it may; revoke one with DELETE /v1/sandboxes/:id/ports/:port`,
      );
    }
    const grant: PortGrant = {
      port,
      nonce: crypto.getRandomValues(new Uint32Array(1))[0]!,
      expiresAt: Math.floor(Date.now() / 1000) + seconds,
    };
    await this.#storage.put(`port:${port}`, grant);
    return ok(grant);
  }

  /** The grants not yet expired, by port (expired ones are dropped as they are found). */
  async list(): Promise<PortGrant[]> {
    const now = Date.now() / 1000;
    const all = await this.#storage.list<PortGrant>({ prefix: "port:" });
    const expired = [...all].filter(([, g]) => g.expiresAt <= now).map(([key]) => key);
    if (expired.length > 0) await this.#storage.delete(expired);
    return [...all.values()].filter((g) => g.expiresAt > now).sort((a, b) => a.port - b.port);
  }

  async revoke(port: number): Promise<Outcome<PortGrant>> {
    const grant = await this.#storage.get<PortGrant>(`port:${port}`);
    if (!grant) {
      return refusal(
        "not_found",
        `port ${port} is not exposed; GET /v1/sandboxes/:id/ports lists those that are`,
      );
    }
    await this.#storage.delete(`port:${port}`);
    return ok(grant);
  }

  /** Whether a token's port and nonce are a live grant: null, or why not. */
  async refusal(port: number, nonce: number): Promise<string | null> {
    const grant = await this.#storage.get<PortGrant>(`port:${port}`);
    if (!grant || grant.nonce !== nonce) return "this link was revoked or replaced by a newer one";
    if (grant.expiresAt * 1000 <= Date.now()) return "this link has expired";
    return null;
  }
}
