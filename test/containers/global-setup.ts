// The container backend's tests run against real local containers: this setup checks
// that Docker answers, builds the images (container/build-image.ts: the mmdebstrap
// rootfs is cached, a rebuild takes seconds), and starts `wrangler dev` with
// wrangler.containers.toml, which runs one container per sandbox. Where Docker (or
// mmdebstrap, for a first build) is missing it provides the reason instead, and every
// test says so and skips.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    /** Why the container tests cannot run here; empty when they can. */
    containersMissing: string;
    containersApiUrl: string;
    containersApiToken: string;
  }
}

const ROOT = path.resolve(import.meta.dirname, "../..");
const HOST = "127.0.0.1";

/** Why Docker cannot run containers here, or "" when it can. */
function dockerMissing(): string {
  try {
    execFileSync("docker", ["info", "--format", "{{.ServerVersion}}"], {
      stdio: ["ignore", "pipe", "pipe"],
      timeout: 15_000,
    });
    return "";
  } catch (err) {
    const why =
      (err as { code?: string }).code === "ENOENT"
        ? "no docker command"
        : "dockerd does not answer";
    return `Docker is missing (${why}): install the Debian package docker.io and start dockerd as .ci/run does`;
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, HOST, () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Stops a process group: SIGTERM, SIGKILL after 5 s. */
function stopGroup(child: ChildProcess): Promise<void> {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve();
  }
  return new Promise((resolve) => {
    const kill = setTimeout(() => {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {}
    }, 5000);
    child.once("exit", () => {
      clearTimeout(kill);
      resolve();
    });
    try {
      process.kill(-child.pid!, "SIGTERM");
    } catch {
      clearTimeout(kill);
      resolve();
    }
  });
}

/** Removes the containers this run's wrangler started (workerd names them after the class). */
function removeContainers(): void {
  const names = execFileSync(
    "docker",
    ["ps", "-aq", "--filter", "name=workerd-toolwire-SandboxContainer-"],
    { encoding: "utf8" },
  )
    .split("\n")
    .filter(Boolean);
  if (names.length > 0) execFileSync("docker", ["rm", "-f", ...names], { stdio: "ignore" });
}

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | void> {
  project.provide("containersApiUrl", "");
  project.provide("containersApiToken", "");
  const missing = dockerMissing();
  project.provide("containersMissing", missing);
  if (missing) {
    console.warn(`container backend tests skipped: ${missing}`);
    return;
  }
  const env = {
    ...process.env,
    PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH}`,
    WRANGLER_DOCKER_BIN: path.join(ROOT, "container/docker-classic"),
    // A local stand-in for workerd's egress sidecar: it tunnels ingress only and
    // enforces NO outbound rules (container/egress-standin.mjs).
    MINIFLARE_CONTAINER_EGRESS_IMAGE: "toolwire-egress-standin:dev",
    CLOUDFLARE_CF_FETCH_ENABLED: "false",
    WRANGLER_SEND_METRICS: "false",
  };
  try {
    execFileSync(process.execPath, [path.join(ROOT, "container/build-image.ts")], {
      cwd: ROOT,
      env,
      stdio: ["ignore", "inherit", "pipe"],
    });
  } catch (err) {
    const stderr = String((err as { stderr?: Buffer }).stderr ?? "");
    if (!stderr.includes("mmdebstrap is missing"))
      throw new Error(`the image build failed:\n${stderr}`);
    const reason =
      "mmdebstrap is missing (the image's root file system is not built yet): install the Debian package mmdebstrap";
    console.warn(`container backend tests skipped: ${reason}`);
    project.provide("containersMissing", reason);
    return;
  }
  removeContainers();
  const state = mkdtempSync(path.join(tmpdir(), "toolwire-containers-state-"));
  const apiToken = randomBytes(24).toString("base64url");
  const [port, inspectorPort] = [await freePort(), await freePort()];
  const log: string[] = [];
  const worker = spawn(
    process.execPath,
    [
      path.join(ROOT, "node_modules/wrangler/bin/wrangler.js"),
      "dev",
      "--config",
      "wrangler.containers.toml",
      "--ip",
      HOST,
      "--port",
      String(port),
      "--inspector-port",
      String(inspectorPort),
      "--persist-to",
      state,
      "--show-interactive-dev-session=false",
      "--var",
      `API_TOKEN:${apiToken}`,
      "--var",
      `SUBSCRIBE_SECRET:${randomBytes(24).toString("base64url")}`,
      // The host backend's token; container sandboxes never see it.
      "--var",
      `SANDBOX_TOKEN:${randomBytes(24).toString("base64url")}`,
      "--var",
      "SANDBOX_REJOIN_SECONDS:5",
    ],
    { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"], detached: true },
  );
  const keep = (chunk: Buffer) => {
    log.push(chunk.toString());
    if (log.length > 300) log.shift();
  };
  worker.stdout?.on("data", keep);
  worker.stderr?.on("data", keep);
  const teardown = async () => {
    await stopGroup(worker);
    removeContainers();
    rmSync(state, { recursive: true, force: true });
  };
  const apiUrl = `http://${HOST}:${port}`;
  const deadline = Date.now() + 180_000;
  for (;;) {
    try {
      if ((await fetch(`${apiUrl}/healthz`)).ok) break;
    } catch {}
    if (worker.exitCode !== null || Date.now() > deadline) {
      await teardown();
      throw new Error(`wrangler dev (containers) did not come up:\n${log.join("").slice(-4000)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  project.provide("containersApiUrl", apiUrl);
  project.provide("containersApiToken", apiToken);
  return teardown;
}
