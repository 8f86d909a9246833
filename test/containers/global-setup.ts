// One suite runs against both sandbox backends (backends.test.ts): this setup starts two
// real sandbox hosts (`default`, and `spare`, which only the host fault case kills) and
// `wrangler dev` with wrangler.containers.toml, whose SANDBOXES names both hosts, so one
// Worker makes `{backend: "host"}` and `{backend: "container"}` sandboxes. It checks that
// Docker answers and builds the images (container/build-image.ts: the mmdebstrap rootfs
// is cached, a rebuild takes seconds). Where Docker (or mmdebstrap, for a first build) is
// missing, wrangler dev runs with its containers off: the container half says why and
// skips, the host half still runs.
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { TestProject } from "vitest/node";
import { removeUnrecordedSandboxes } from "../../sandbox/sandboxes/disk.ts";
import {
  freePort,
  HOST,
  ROOT,
  type Started,
  startNode,
  startWranglerDev,
  stopGroup,
  waitUntilUp,
} from "../support/processes.ts";

/** A sandbox host this setup started, as the tests see it. */
export interface SuiteHost {
  url: string;
  /** Its `SANDBOX_ROOT`; its created sandboxes live in `<root>-sandboxes/<id>/workspace`. */
  root: string;
  port: number;
  /** Its process (group leader): the host fault case SIGKILLs `spare`'s group. */
  pid: number;
}

declare module "vitest" {
  export interface ProvidedContext {
    /** Why the container tests cannot run here; empty when they can. */
    containersMissing: string;
    containersApiUrl: string;
    containersApiToken: string;
    /** This machine as a container sees it: the Docker bridge's gateway, where tests' servers listen. */
    containersGateway: string;
    /** The Worker's sandbox hosts by name: `default` and `spare`. */
    suiteHosts: Record<"default" | "spare", SuiteHost>;
    /** Both hosts' bearer token. */
    suiteHostToken: string;
  }
}

/** `node sandbox/main.ts` on `port` with workspace `root` (created sandboxes get loop disks as root). */
export function startSandboxHost(port: number, root: string, token: string): Started {
  return startNode([path.join(ROOT, "sandbox/main.ts")], {
    SANDBOX_TOKEN: token,
    HOST,
    PORT: String(port),
    SANDBOX_ROOT: root,
  });
}

/** The Docker bridge's gateway (dockerd's --bip, .ci/run): this machine, as a container sees it. */
const DOCKER_GATEWAY = "172.17.0.1";

/** What wrangler and workerd need on a machine without buildx or Docker Hub (docs/sandboxes.md). */
const DOCKER_ENV = {
  WRANGLER_DOCKER_BIN: path.join(ROOT, "container/docker-classic"),
  // A local stand-in for workerd's egress sidecar: it tunnels ingress only and
  // enforces NO outbound rules (container/egress-standin.mjs).
  MINIFLARE_CONTAINER_EGRESS_IMAGE: "toolwire-egress-standin:dev",
};

/**
 * `wrangler dev` with wrangler.containers.toml and real local containers, on a free port,
 * with `vars` besides its API token and subscribe secret (the setup's, and the warm pool
 * test's and benchmark's own Workers, which set CONTAINER_POOL_SIZE).
 */
export async function startContainersWorker(vars: Record<string, string>): Promise<{
  url: string;
  token: string;
  worker: Started;
  stop: () => Promise<void>;
}> {
  const state = mkdtempSync(path.join(tmpdir(), "toolwire-containers-state-"));
  const token = randomBytes(24).toString("base64url");
  const port = await freePort();
  const worker = startWranglerDev({
    config: "wrangler.containers.toml",
    port,
    inspectorPort: await freePort(),
    persistTo: state,
    env: DOCKER_ENV,
    vars: { API_TOKEN: token, SUBSCRIBE_SECRET: randomBytes(24).toString("base64url"), ...vars },
  });
  const url = `http://${HOST}:${port}`;
  const stop = async () => {
    await stopGroup(worker.child);
    rmSync(state, { recursive: true, force: true });
  };
  try {
    await waitUntilUp(`${url}/healthz`, worker);
  } catch (err) {
    await stop();
    throw err;
  }
  return { url, token, worker, stop };
}

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
  // One at a time: a container removed meanwhile (by its own Worker) is no failure.
  for (const id of ids) {
    try {
      execFileSync("docker", ["rm", "-f", id], { stdio: "ignore" });
    } catch {}
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const missing = dockerMissing() || buildImages();
  project.provide("containersMissing", missing);
  if (missing) console.warn(`container backend tests skipped (the host half runs): ${missing}`);
  else removeContainers();
  const state = mkdtempSync(path.join(tmpdir(), "toolwire-containers-state-"));
  const hostsDir = mkdtempSync(path.join(tmpdir(), "toolwire-suite-hosts-"));
  const secret = () => randomBytes(24).toString("base64url");
  const [apiToken, hostToken] = [secret(), secret()];
  const [port, inspectorPort, defaultPort, sparePort] = [
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
  ];
  const roots = { default: path.join(hostsDir, "default"), spare: path.join(hostsDir, "spare") };
  const hosts = {
    default: startSandboxHost(defaultPort, roots.default, hostToken),
    spare: startSandboxHost(sparePort, roots.spare, hostToken),
  };
  const hostUrl = (p: number) => `http://${HOST}:${p}`;
  const apiUrl = `http://${HOST}:${port}`;
  const worker = startWranglerDev({
    config: "wrangler.containers.toml",
    enableContainers: missing === "",
    port,
    inspectorPort,
    persistTo: state,
    env: missing ? {} : DOCKER_ENV,
    vars: {
      API_TOKEN: apiToken,
      SUBSCRIBE_SECRET: secret(),
      // The host backend's token; container sandboxes never see it.
      SANDBOX_TOKEN: hostToken,
      SANDBOXES: JSON.stringify({ default: hostUrl(defaultPort), spare: hostUrl(sparePort) }),
      SANDBOX_REJOIN_SECONDS: "5",
      // The tests' servers listen on the Docker bridge's (private) address.
      CONTAINER_EGRESS_ALLOW_PRIVATE: "1",
      // expose_port's URLs name this Worker (agent-preview.test.ts fetches them).
      PUBLIC_URL: apiUrl,
    },
  });
  const teardown = async () => {
    await Promise.all([worker, hosts.default, hosts.spare].map((s) => stopGroup(s.child)));
    if (!missing) removeContainers();
    // A host killed or stopped leaves its sandboxes' loop mounts; unmount before removing.
    for (const root of Object.values(roots))
      await removeUnrecordedSandboxes(`${root}-sandboxes`, new Set());
    rmSync(hostsDir, { recursive: true, force: true });
    rmSync(state, { recursive: true, force: true });
  };
  try {
    await Promise.all([
      waitUntilUp(`${apiUrl}/healthz`, worker),
      waitUntilUp(`${hostUrl(defaultPort)}/healthz`, hosts.default),
      waitUntilUp(`${hostUrl(sparePort)}/healthz`, hosts.spare),
    ]);
  } catch (err) {
    await teardown();
    throw err;
  }
  project.provide("containersApiUrl", apiUrl);
  project.provide("containersApiToken", apiToken);
  project.provide("containersGateway", DOCKER_GATEWAY);
  project.provide("suiteHostToken", hostToken);
  const info = (name: "default" | "spare", p: number): SuiteHost => ({
    url: hostUrl(p),
    root: roots[name],
    port: p,
    pid: hosts[name].child.pid!,
  });
  project.provide("suiteHosts", {
    default: info("default", defaultPort),
    spare: info("spare", sparePort),
  });
  return teardown;
}
