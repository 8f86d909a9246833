/// <reference types="node" />
// A real sandbox host for the DO tests of the "workers-sandbox" project, on the port and
// token vitest.config.ts bound into that project's Worker env, with a temp workspace.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { DEFAULT_SANDBOX_CONFIG, startSandboxHost } from "../../../../sandbox/index.ts";

export default async function setup(): Promise<() => Promise<void>> {
  const root = mkdtempSync(path.join(tmpdir(), "toolwire-do-sandbox-"));
  const host = await startSandboxHost({
    ...DEFAULT_SANDBOX_CONFIG,
    token: process.env.TOOLWIRE_DO_SANDBOX_TOKEN ?? "",
    port: Number(process.env.TOOLWIRE_DO_SANDBOX_PORT),
    root,
    rgPath: null,
  });
  return async () => {
    await host.close();
    rmSync(root, { recursive: true, force: true });
  };
}
