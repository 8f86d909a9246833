// Starts the real processes end-to-end tests need: a sandbox host (its own process, a
// temp workspace, a generated token) and `wrangler dev` (offline, on free loopback
// ports, with matching secrets passed as vars), waits until both answer, provides their
// URLs and tokens to the tests, and stops both process groups afterwards.
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { TestProject } from "vitest/node";
import {
  freePort,
  HOST,
  ROOT,
  startNode,
  startWranglerDev,
  stopGroup,
  waitUntilUp,
} from "../support/processes.ts";

declare module "vitest" {
  export interface ProvidedContext {
    apiUrl: string;
    apiToken: string;
    subscribeSecret: string;
    sandboxUrl: string;
    sandboxToken: string;
    sandboxRoot: string;
    /** The Worker's inspector (`wrangler dev --inspector-port`): the benches profile it. */
    inspectorUrl: string;
  }
}

/**
 * `options.wranglerConfig`: a wrangler config other than the project's (the subscribers
 * bench's floor, bench/hello-config.ts); vitest passes none.
 */
export default async function setup(
  project: TestProject,
  options: { wranglerConfig?: string } = {},
): Promise<() => Promise<void>> {
  const sandboxRoot = mkdtempSync(path.join(tmpdir(), "toolwire-e2e-ws-"));
  const state = mkdtempSync(path.join(tmpdir(), "toolwire-e2e-state-"));
  const secret = () => randomBytes(24).toString("base64url");
  const apiToken = secret();
  const subscribeSecret = secret();
  const sandboxToken = secret();
  const [sandboxPort, workerPort, inspectorPort] = [
    await freePort(),
    await freePort(),
    await freePort(),
  ];
  const sandboxUrl = `http://${HOST}:${sandboxPort}`;
  const apiUrl = `http://${HOST}:${workerPort}`;

  const sandbox = startNode([path.join(ROOT, "sandbox/main.ts")], {
    SANDBOX_TOKEN: sandboxToken,
    HOST,
    PORT: String(sandboxPort),
    SANDBOX_ROOT: sandboxRoot,
  });
  const worker = startWranglerDev({
    config: options.wranglerConfig,
    port: workerPort,
    inspectorPort,
    persistTo: state,
    vars: {
      API_TOKEN: apiToken,
      SUBSCRIBE_SECRET: subscribeSecret,
      SANDBOX_TOKEN: sandboxToken,
      SANDBOXES: JSON.stringify({ default: sandboxUrl }),
      // The Worker's own address, on which expose_port makes its URLs.
      PUBLIC_URL: apiUrl,
      // /mcp keep-alive comments every second: under wrangler dev a write is how a closed
      // 2026-07-28 stream is noticed (and cancelled), so the e2e tests see it quickly.
      MCP_KEEPALIVE_SECONDS: "1",
      // The viewer and CLI tests use the example tools as fixtures (decision 272).
      EXAMPLE_TOOLS: "1",
    },
  });

  const teardown = async () => {
    await Promise.all([stopGroup(worker.child), stopGroup(sandbox.child)]);
    rmSync(sandboxRoot, { recursive: true, force: true });
    rmSync(`${sandboxRoot}.spill`, { recursive: true, force: true });
    // The host's created sandboxes (SANDBOXES_DIR's default). It lets go of their disks as
    // it stops; one still mounted after a kill stays, and is said.
    try {
      rmSync(`${sandboxRoot}-sandboxes`, { recursive: true, force: true });
    } catch (err) {
      console.warn(`left ${sandboxRoot}-sandboxes: ${(err as Error).message}`);
    }
    rmSync(state, { recursive: true, force: true });
  };
  try {
    await Promise.all([
      waitUntilUp(`${sandboxUrl}/healthz`, sandbox),
      waitUntilUp(`${apiUrl}/healthz`, worker),
    ]);
  } catch (err) {
    await teardown();
    throw err;
  }

  project.provide("apiUrl", apiUrl);
  project.provide("apiToken", apiToken);
  project.provide("subscribeSecret", subscribeSecret);
  project.provide("sandboxUrl", sandboxUrl);
  project.provide("sandboxToken", sandboxToken);
  project.provide("sandboxRoot", sandboxRoot);
  project.provide("inspectorUrl", `http://${HOST}:${inspectorPort}`);
  return teardown;
}
