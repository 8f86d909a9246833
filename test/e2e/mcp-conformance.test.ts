// The official MCP conformance suite (@modelcontextprotocol/conformance) against a local
// Worker: every server scenario, once at each scenario's latest revision (2026-07-28
// where it applies) and once on the 2025-11-25 wire (initialize and sessions). Only the
// scenarios in test/support/mcp-conformance/expected-failures.yml may fail, each for its reason.
import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ROOT,
  type RunningWorker,
  startConformanceWorker,
} from "../support/e2e/mcp/conformance-worker.ts";

const run = promisify(execFile);
const CLI = path.join(ROOT, "node_modules/@modelcontextprotocol/conformance/dist/index.js");
const BASELINE = path.join(ROOT, "test/support/mcp-conformance/expected-failures.yml");

let worker: RunningWorker;

beforeAll(async () => {
  worker = await startConformanceWorker();
}, 120_000);

afterAll(async () => {
  await worker?.stop();
});

/** Runs the suite; resolves with its report, or rejects with it when a scenario failed unexpectedly. */
async function conformance(...args: string[]): Promise<string> {
  try {
    const { stdout } = await run(
      process.execPath,
      [
        CLI,
        "server",
        "--url",
        worker.url,
        "--suite",
        "all",
        "--expected-failures",
        BASELINE,
        ...args,
      ],
      { cwd: ROOT, maxBuffer: 16 * 1024 * 1024, timeout: 240_000 },
    );
    return stdout;
  } catch (err) {
    const { stdout = "", stderr = "" } = err as { stdout?: string; stderr?: string };
    throw new Error(
      `conformance failed:\n${stdout.slice(stdout.indexOf("=== SUMMARY"))}\n${stderr}`,
    );
  }
}

describe("MCP conformance", () => {
  it("every server scenario passes at its latest revision, but the expected failures", async () => {
    const report = await conformance();
    expect(report).toMatch(/✓ server-stateless: \d+ passed, 0 failed/);
    expect(report).toMatch(/✓ tools-call-with-progress: \d+ passed, 0 failed/);
    expect(report).toMatch(/✓ http-header-validation: \d+ passed, 0 failed/);
    expect(report).toMatch(/✓ json-schema-2020-12: \d+ passed, 0 failed/);
  }, 300_000);

  it("every server scenario passes on the 2025-11-25 wire, but the expected failures", async () => {
    const report = await conformance("--spec-version", "2025-11-25");
    expect(report).toMatch(/✓ server-session-lifecycle: 3 passed, 0 failed/);
    expect(report).toMatch(/✓ server-initialize: \d+ passed, 0 failed/);
    expect(report).toMatch(/✓ dns-rebinding-protection: \d+ passed, 0 failed/);
  }, 300_000);
});
