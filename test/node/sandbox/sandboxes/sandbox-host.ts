import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { DEFAULT_SANDBOX_CONFIG } from "../../../../sandbox/index.ts";
import { DEFAULT_SANDBOX_LIMITS } from "../../../../sandbox/sandboxes/config.ts";
import { diskPaths } from "../../../../sandbox/sandboxes/disk.ts";
import { SandboxClient } from "../../../../src/execenv/index.ts";
import type { SandboxLimits } from "../../../../src/protocol/index.ts";
import { execId, type Folded, fold, startTestHost, type TestHost } from "../harness.ts";

/** A test host whose created sandboxes live in a temp directory of their own. */
export interface SandboxTestHost extends TestHost {
  dir: string;
  create(limits?: Partial<SandboxLimits>): Promise<TestSandbox>;
  request(method: string, route: string, body?: BodyInit, type?: string): Promise<Response>;
}

export interface TestSandbox {
  id: string;
  client: SandboxClient;
  /** Host path of its disk (its `workspace/` and `spill/`). */
  disk: string;
  /** Host path of its workspace. */
  workspace: string;
  run(command: string): Promise<Folded>;
}

/** The id a Worker would make for a sandbox placed on host `default`. */
export function sandboxId(): string {
  return `sbx_default_${randomBytes(10).toString("hex")}`;
}

/**
 * A real host (jail, loop-mounted disks when root) with 64 MiB sandboxes by default,
 * so quota tests fill them quickly. `poolSize` disks (and, with `network`, networks)
 * are made ahead; by default none: each create makes its own. `network`: each sandbox
 * gets its own network namespace and egress proxy (needs root).
 */
export async function startSandboxTestHost(
  limits: Partial<SandboxLimits> = {},
  maxSandboxes = 16,
  { poolSize = 0, network = false }: { poolSize?: number; network?: boolean } = {},
): Promise<SandboxTestHost> {
  const dir = mkdtempSync(path.join(tmpdir(), "toolwire-sandboxes-"));
  const host = await startTestHost({
    egress: { ...DEFAULT_SANDBOX_CONFIG.egress, available: network },
    sandboxes: {
      dir,
      disk: process.getuid?.() === 0 ? "loop" : "none",
      maxSandboxes,
      poolSize,
      limits: { ...DEFAULT_SANDBOX_LIMITS, diskBytes: 64 * 1024 * 1024, ...limits },
    },
  });
  const request = (method: string, route: string, body?: BodyInit, type = "application/json") =>
    fetch(`${host.url}${route}`, {
      method,
      headers: { authorization: `Bearer ${host.token}`, "content-type": type },
      body,
    });
  return {
    ...host,
    dir,
    request,
    async create(limits = {}) {
      const id = sandboxId();
      const res = await request("POST", "/v1/sandboxes", JSON.stringify({ id, limits }));
      if (res.status !== 201) throw new Error(`create: ${res.status} ${await res.text()}`);
      const client = new SandboxClient(`${host.url}/sandboxes/${id}`, host.token);
      return {
        id,
        client,
        disk: diskPaths(path.join(dir, id)).mountPoint,
        workspace: path.join(diskPaths(path.join(dir, id)).mountPoint, "workspace"),
        run: (command) => fold(client.exec({ execId: execId(), command })),
      };
    },
    async close() {
      await host.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
