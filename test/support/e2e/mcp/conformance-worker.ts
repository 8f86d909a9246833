// Starts the conformance Worker (test/support/mcp-conformance/wrangler.toml: the production app
// plus the suite's fixture tools) under `wrangler dev` on free loopback ports, and stops
// its process group afterwards.
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { freePort, HOST, startWranglerDev, stopGroup, waitUntilUp } from "../../processes.ts";

export { ROOT } from "../../processes.ts";

export interface RunningWorker {
  url: string;
  stop(): Promise<void>;
}

/** `wrangler dev -c test/support/mcp-conformance/wrangler.toml`, answering at `url`. */
export async function startConformanceWorker(): Promise<RunningWorker> {
  const [port, inspectorPort] = [await freePort(), await freePort()];
  const state = mkdtempSync(path.join(tmpdir(), "toolwire-mcp-conformance-"));
  const secret = () => randomBytes(24).toString("base64url");
  const worker = startWranglerDev({
    config: "test/support/mcp-conformance/wrangler.toml",
    port,
    inspectorPort,
    persistTo: state,
    vars: { API_TOKEN: secret(), SUBSCRIBE_SECRET: secret(), SANDBOX_TOKEN: secret() },
  });
  const stop = async () => {
    await stopGroup(worker.child);
    rmSync(state, { recursive: true, force: true });
  };
  const url = `http://${HOST}:${port}`;
  try {
    await waitUntilUp(`${url}/healthz`, worker);
  } catch (err) {
    await stop();
    throw new Error(`the conformance Worker did not come up: ${(err as Error).message}`);
  }
  return { url: `${url}/mcp`, stop };
}
