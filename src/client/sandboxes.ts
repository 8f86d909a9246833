/**
 * Created sandboxes from a client: create, list, read, delete, keep alive, and files in
 * and out as tar streams (docs/sandboxes.md). Runs wherever `fetch` does.
 */
import type { SandboxView } from "../protocol/index.ts";
import type { NetworkPolicy } from "../protocol/network-policy.ts";
import type { PortExposure } from "../protocol/preview.ts";
import { errorFromResponse, unreachable } from "./errors.ts";

export type { PortExposure, SandboxView };

/**
 * What a create (and a token rotation) answers: the view and the sandbox's token, which
 * opens that sandbox alone (decision 250); give it to the agent that works there.
 */
type CreatedSandbox = SandboxView & { token: string };

/** What `POST /v1/sandboxes` takes. */
export interface CreateSandboxRequest {
  name?: string;
  /** `host` (default) or `container`: a container of its own (docs/sandboxes.md). */
  backend?: SandboxView["backend"];
  host?: string;
  idleTimeoutSeconds?: number;
  limits?: Partial<SandboxView["limits"]>;
  /** What its commands may reach: `host`, `host:port`, `*.domain[:port]` (decision 181). */
  network?: NetworkPolicy;
}

/**
 * @example
 * const sandboxes = new SandboxesClient({ baseUrl: "http://127.0.0.1:8787", token });
 * const { id } = await sandboxes.create({ idleTimeoutSeconds: 900 });
 */
export class SandboxesClient {
  readonly baseUrl: string;
  readonly #token: string;

  constructor(options: { baseUrl: string; token: string }) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.#token = options.token;
  }

  async create(request: CreateSandboxRequest = {}): Promise<CreatedSandbox> {
    return (await this.#json("POST", "", request, "create sandbox")) as CreatedSandbox;
  }

  /** A new token for the sandbox; the one before is dead at once (the operator's token only). */
  async rotateToken(id: string): Promise<CreatedSandbox> {
    return (await this.#json(
      "POST",
      `/${enc(id)}/token`,
      undefined,
      `new token for sandbox ${id}`,
    )) as CreatedSandbox;
  }

  async list(): Promise<SandboxView[]> {
    return (
      (await this.#json("GET", "", undefined, "list sandboxes")) as { sandboxes: SandboxView[] }
    ).sandboxes;
  }

  async get(id: string): Promise<SandboxView> {
    return (await this.#json("GET", `/${enc(id)}`, undefined, `sandbox ${id}`)) as SandboxView;
  }

  async remove(id: string): Promise<SandboxView> {
    return (await this.#json(
      "DELETE",
      `/${enc(id)}`,
      undefined,
      `delete sandbox ${id}`,
    )) as SandboxView;
  }

  async keepAlive(id: string): Promise<SandboxView> {
    return (await this.#json(
      "POST",
      `/${enc(id)}/keepalive`,
      {},
      `keep ${id} alive`,
    )) as SandboxView;
  }

  /** Replaces sandbox `id`'s network policy; new connections follow it. */
  async setNetwork(id: string, policy: NetworkPolicy): Promise<SandboxView> {
    return (await this.#json(
      "PUT",
      `/${enc(id)}/network`,
      policy,
      `set the network of ${id}`,
    )) as SandboxView;
  }

  /** Sandbox `id`'s policy, egress totals and last 1,000 connections. */
  async network(id: string): Promise<unknown> {
    return this.#json("GET", `/${enc(id)}/network`, undefined, `network of ${id}`);
  }

  /**
   * Exposes `port` of sandbox `id` as a preview URL (decision 182), for `expiresInSeconds`
   * (default one hour); exposing it again replaces the URL.
   */
  async expose(id: string, port: number, expiresInSeconds?: number): Promise<PortExposure> {
    const body = expiresInSeconds === undefined ? { port } : { port, expiresInSeconds };
    return (await this.#json(
      "POST",
      `/${enc(id)}/ports`,
      body,
      `expose ${id}:${port}`,
    )) as PortExposure;
  }

  /** The exposed ports of sandbox `id`, with their URLs. */
  async ports(id: string): Promise<PortExposure[]> {
    const listed = (await this.#json("GET", `/${enc(id)}/ports`, undefined, `ports of ${id}`)) as {
      ports: PortExposure[];
    };
    return listed.ports;
  }

  /** Revokes the preview URL of `port`: it answers 410 from now on. */
  async unexpose(id: string, port: number): Promise<void> {
    await this.#json("DELETE", `/${enc(id)}/ports/${port}`, undefined, `unexpose ${id}:${port}`);
  }

  /** Extracts a tar archive (a stream or bytes) into workspace directory `path`. */
  async upload(
    id: string,
    path: string,
    tar: ReadableStream<Uint8Array> | Uint8Array,
  ): Promise<{ path: string; entries: number; bytes: number }> {
    const res = await this.#fetch("PUT", `/${enc(id)}/files?path=${enc(path)}`, {
      body: tar,
      headers: { "content-type": "application/x-tar" },
      duplex: "half",
    } as RequestInit);
    if (!res.ok) throw await errorFromResponse(res, `upload to ${id}`);
    return (await res.json()) as { path: string; entries: number; bytes: number };
  }

  /** Workspace path `path` of sandbox `id` as a tar stream. */
  async download(id: string, path: string): Promise<ReadableStream<Uint8Array>> {
    const res = await this.#fetch("GET", `/${enc(id)}/files?path=${enc(path)}`, {});
    if (!res.ok || !res.body) throw await errorFromResponse(res, `download from ${id}`);
    return res.body;
  }

  async #json(method: string, route: string, body: unknown, what: string): Promise<unknown> {
    const init: RequestInit = {};
    if (body !== undefined) {
      init.body = JSON.stringify(body);
      init.headers = { "content-type": "application/json" };
    }
    const res = await this.#fetch(method, route, init);
    if (!res.ok) throw await errorFromResponse(res, what);
    return res.json();
  }

  async #fetch(method: string, route: string, init: RequestInit): Promise<Response> {
    const headers = {
      ...(init.headers as Record<string, string>),
      authorization: `Bearer ${this.#token}`,
    };
    try {
      return await fetch(`${this.baseUrl}/v1/sandboxes${route}`, { ...init, method, headers });
    } catch (error) {
      throw unreachable(this.baseUrl, error);
    }
  }
}

function enc(s: string): string {
  return encodeURIComponent(s);
}
