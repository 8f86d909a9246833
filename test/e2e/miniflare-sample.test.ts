// examples/miniflare-agent as a team would run it (docs/testing.md): its own package,
// with Toolwire installed from the tarball `npm pack` makes, never a path into src/. Its
// tests run the sample agent under @cloudflare/vitest-plugin against the real Toolwire
// Worker as an auxiliary worker and a real sandbox host, and once in plain Miniflare.
import { execFile } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { packedToolwire, shellEnv } from "../support/packed-toolwire.ts";

const exec = promisify(execFile);
const SAMPLE = path.resolve(import.meta.dirname, "../../examples/miniflare-agent");

describe("the Miniflare sample agent, from the packed tarball", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "toolwire-sample-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("passes its own tests against the real Toolwire Worker and sandbox host", async () => {
    const { tarball } = await packedToolwire();
    const app = path.join(dir, "miniflare-agent");
    cpSync(SAMPLE, app, {
      recursive: true,
      filter: (source) => !/(^|\/)(node_modules|package-lock\.json)$/.test(source),
    });
    // The sample names the tarball where `npm pack` leaves it in a checkout; here it is elsewhere.
    const manifest = JSON.parse(readFileSync(path.join(app, "package.json"), "utf8")) as {
      devDependencies: Record<string, string>;
    };
    expect(manifest.devDependencies.toolwire).toBe("file:../../toolwire-0.1.0.tgz");
    manifest.devDependencies.toolwire = `file:${tarball}`;
    writeFileSync(path.join(app, "package.json"), JSON.stringify(manifest, null, 2));
    await exec("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund"], {
      cwd: app,
      env: shellEnv,
      maxBuffer: 16 * 1024 * 1024,
    });
    const run = await exec(path.join(app, "node_modules/.bin/vitest"), ["run"], {
      cwd: app,
      env: { ...shellEnv, CI: "true", NO_COLOR: "1" },
      maxBuffer: 16 * 1024 * 1024,
    }).catch((error: { stdout?: string; stderr?: string }) => {
      throw new Error(`the sample's tests failed:\n${error.stdout}\n${error.stderr}`);
    });
    expect(run.stdout).toMatch(/Test Files\s+2 passed \(2\)/);
    expect(run.stdout).toMatch(/Tests\s+5 passed \(5\)/);
  }, 240_000);
});
