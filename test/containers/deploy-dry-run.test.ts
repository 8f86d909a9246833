// `wrangler deploy --dry-run` with the container backend configured: the Worker bundles,
// every binding resolves, and wrangler builds the container image from
// container/Dockerfile (through container/docker-classic). Skipped, saying why, where
// Docker is missing (the dry run builds the image).
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, inject, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "../..");
const missing = inject("containersMissing");

describe.skipIf(missing !== "")(
  `wrangler deploy --dry-run with containers${missing ? ` (skipped: ${missing})` : ""}`,
  () => {
    it("bundles the Worker, lists the container binding and builds the sandbox image", {
      timeout: 180_000,
    }, async () => {
      const out = mkdtempSync(path.join(tmpdir(), "toolwire-dry-run-"));
      try {
        const { stdout } = await promisify(execFile)(
          process.execPath,
          [
            path.join(ROOT, "node_modules/wrangler/bin/wrangler.js"),
            "deploy",
            "--dry-run",
            "--config",
            "wrangler.containers.toml",
            "--outdir",
            out,
          ],
          {
            cwd: ROOT,
            env: {
              ...process.env,
              WRANGLER_DOCKER_BIN: path.join(ROOT, "container/docker-classic"),
              WRANGLER_SEND_METRICS: "false",
            },
            maxBuffer: 16 * 1024 * 1024,
          },
        );
        expect(stdout).toMatch(/env\.SANDBOX_CONTAINERS \(SandboxContainer\)\s+Durable Object/);
        expect(stdout).toMatch(/env\.SANDBOX_RECORDS \(SandboxDO\)\s+Durable Object/);
        expect(stdout).toMatch(/Successfully built [0-9a-f]+/);
        expect(stdout).toMatch(
          /The following containers are available:\n- toolwire-sandboxcontainer \(.*container\/Dockerfile\)/,
        );
        expect(stdout).toContain("--dry-run: exiting now.");
        expect(readdirSync(out)).toContain("worker-entry.js");
      } finally {
        rmSync(out, { recursive: true, force: true });
      }
    });
  },
);
