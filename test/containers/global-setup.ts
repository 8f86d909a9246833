// The container backend's tests run against real local containers: this setup checks
// that Docker answers, builds the images (container/build-image.ts: the mmdebstrap
// rootfs is cached, a rebuild takes seconds), and starts `wrangler dev` with
// wrangler.containers.toml, which runs one container per sandbox. Where Docker (or
// mmdebstrap, for a first build) is missing it provides the reason instead, and every
// test says so and skips.
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { TestProject } from "vitest/node";
import {
  freePort,
  HOST,
  ROOT,
  startWranglerDev,
  stopGroup,
  waitUntilUp,
} from "../support/processes.ts";

declare module "vitest" {
  export interface ProvidedContext {
    /** Why the container tests cannot run here; empty when they can. */
    containersMissing: string;
    containersApiUrl: string;
    containersApiToken: string;
  }
}

/** What wrangler and workerd need on a machine without buildx or Docker Hub (docs/sandboxes.md). */
const DOCKER_ENV = {
  WRANGLER_DOCKER_BIN: path.join(ROOT, "container/docker-classic"),
  // A local stand-in for workerd's egress sidecar: it tunnels ingress only and
  // enforces NO outbound rules (container/egress-standin.mjs).
  MINIFLARE_CONTAINER_EGRESS_IMAGE: "toolwire-egress-standin:dev",
};

/** Why Docker cannot run containers here, or "" when it can. */
function dockerMissing(): string {
  try {
    const security = execFileSync("docker", ["info", "--format", "{{json .SecurityOptions}}"], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
      timeout: 15_000,
    });
    // Docker's default profile refuses the user namespaces bubblewrap makes inside a container.
    if (security.includes("profile=default")) {
      return "dockerd runs Docker's default seccomp profile, which refuses the jail's user namespaces: start it with --seccomp-profile as .ci/run does";
    }
    return "";
  } catch (err) {
    const why =
      (err as { code?: string }).code === "ENOENT"
        ? "no docker command"
        : "dockerd does not answer";
    return `Docker is missing (${why}): install the Debian package docker.io and start dockerd as .ci/run does`;
  }
}

/** Builds the images; answers why it cannot (mmdebstrap missing) or throws on a real failure. */
function buildImages(): string {
  try {
    execFileSync(process.execPath, [path.join(ROOT, "container/build-image.ts")], {
      cwd: ROOT,
      env: {
        ...process.env,
        PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH}`,
      },
      stdio: ["ignore", "inherit", "pipe"],
    });
    return "";
  } catch (err) {
    const stderr = String((err as { stderr?: Buffer }).stderr ?? "");
    if (!stderr.includes("mmdebstrap is missing")) {
      throw new Error(`the container image build failed:\n${stderr.slice(-4000)}`);
    }
    return "mmdebstrap is missing (the image's root file system is not built yet): install the Debian package mmdebstrap";
  }
}

/** Removes the containers workerd started for this suite (it names them after the class). */
function removeContainers(): void {
  const ids = execFileSync(
    "docker",
    ["ps", "-aq", "--filter", "name=workerd-toolwire-SandboxContainer-"],
    { encoding: "utf8" },
  )
    .split("\n")
    .filter(Boolean);
  if (ids.length > 0) execFileSync("docker", ["rm", "-f", ...ids], { stdio: "ignore" });
}

export default async function setup(
  project: TestProject,
): Promise<(() => Promise<void>) | undefined> {
  project.provide("containersApiUrl", "");
  project.provide("containersApiToken", "");
  const missing = dockerMissing() || buildImages();
  project.provide("containersMissing", missing);
  if (missing) {
    console.warn(`container backend tests skipped: ${missing}`);
    return undefined;
  }
  removeContainers();
  const state = mkdtempSync(path.join(tmpdir(), "toolwire-containers-state-"));
  const apiToken = randomBytes(24).toString("base64url");
  const [port, inspectorPort] = [await freePort(), await freePort()];
  const worker = startWranglerDev({
    config: "wrangler.containers.toml",
    port,
    inspectorPort,
    persistTo: state,
    env: DOCKER_ENV,
    vars: {
      API_TOKEN: apiToken,
      SUBSCRIBE_SECRET: randomBytes(24).toString("base64url"),
      // The host backend's token; container sandboxes never see it.
      SANDBOX_TOKEN: randomBytes(24).toString("base64url"),
      SANDBOX_REJOIN_SECONDS: "5",
    },
  });
  const teardown = async () => {
    await stopGroup(worker.child);
    removeContainers();
    rmSync(state, { recursive: true, force: true });
  };
  const apiUrl = `http://${HOST}:${port}`;
  try {
    await waitUntilUp(`${apiUrl}/healthz`, worker);
  } catch (err) {
    await teardown();
    throw err;
  }
  project.provide("containersApiUrl", apiUrl);
  project.provide("containersApiToken", apiToken);
  return teardown;
}
