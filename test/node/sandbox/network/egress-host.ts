import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Lookup } from "../../../../sandbox/network/egress-proxy.ts";
import { DEFAULT_SANDBOX_LIMITS } from "../../../../sandbox/sandboxes/config.ts";
import { SandboxClient } from "../../../../src/execenv/index.ts";
import type { SandboxLimits } from "../../../../src/protocol/index.ts";
import type { NetworkPolicy } from "../../../../src/protocol/network-policy.ts";
import { execId, type Folded, fold, startTestHost, type TestHost } from "../harness.ts";
import { sandboxId } from "../sandboxes/sandbox-host.ts";

/** A test host whose sandboxes get network namespaces and egress proxies. */
export interface EgressTestHost extends TestHost {
  request(method: string, route: string, body?: unknown): Promise<Response>;
  create(network?: NetworkPolicy, limits?: Partial<SandboxLimits>): Promise<NetSandbox>;
}

export interface NetSandbox {
  id: string;
  client: SandboxClient;
  run(command: string): Promise<Folded>;
}

/**
 * A real host (jail, namespaces; needs root) whose proxy resolves the names in `names`
 * to the addresses given (a test's own resolver) and every other name as the system does.
 */
export async function startEgressTestHost(
  names: Record<string, string[]> | Lookup,
  options: { allowPrivate?: boolean; maxConnections?: number } = {},
): Promise<EgressTestHost> {
  const dir = mkdtempSync(path.join(tmpdir(), "tw-net-"));
  const lookup: Lookup =
    typeof names === "function"
      ? names
      : async (host) => {
          const found = names[host];
          if (!found) throw new Error(`ENOTFOUND ${host}`);
          return found;
        };
  const host = await startTestHost({
    sandboxes: { dir, disk: "none", maxSandboxes: 16, limits: DEFAULT_SANDBOX_LIMITS },
    egress: {
      available: true,
      allowPrivate: options.allowPrivate ?? false,
      reservedPorts: [8787],
      maxConnections: options.maxConnections ?? 64,
      lookup,
    },
  });
  const request = (method: string, route: string, body?: unknown) =>
    fetch(`${host.url}${route}`, {
      method,
      headers: { authorization: `Bearer ${host.token}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  return {
    ...host,
    request,
    async create(network, limits = {}) {
      const id = sandboxId();
      const res = await request("POST", "/v1/sandboxes", { id, limits, network });
      if (res.status !== 201) throw new Error(`create: ${res.status} ${await res.text()}`);
      const client = new SandboxClient(`${host.url}/sandboxes/${id}`, host.token);
      return { id, client, run: (command) => fold(client.exec({ execId: execId(), command })) };
    },
    async close() {
      await host.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
