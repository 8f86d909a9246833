// The container backend's warm pool (issue 29, decision 230), in real local containers:
// a Worker of its own with CONTAINER_POOL_SIZE=1 starts one container ahead; a create
// takes it (its view says `fromPool`), runs a command in it, and the pool refills; a
// second sandbox from the pool gets a fresh file system and another container; a pooled
// container killed before any sandbox took it is never handed out (a create at that
// moment starts its own) and is replaced; a
// create that names a network starts its own. The suite's Worker, pool size 0, behaves as
// before: no pool, every create starts its container. Skips, saying why, where Docker is
// missing.
import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { ContainerPoolView, SandboxView } from "../../src/protocol/index.ts";
import { startContainersWorker } from "./global-setup.ts";

const missing = inject("containersMissing");

interface Api {
  url: string;
  token: string;
}
const suite: Api = { url: inject("containersApiUrl"), token: inject("containersApiToken") };

async function call(api: Api, method: string, route: string, body?: unknown): Promise<Response> {
  return fetch(`${api.url}${route}`, {
    method,
    headers: { authorization: `Bearer ${api.token}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

async function create(api: Api, body: Record<string, unknown> = {}): Promise<SandboxView> {
  const res = await call(api, "POST", "/v1/sandboxes", { backend: "container", ...body });
  const text = await res.text();
  expect(res.status, text).toBe(201);
  return JSON.parse(text) as SandboxView;
}

async function pool(api: Api): Promise<ContainerPoolView> {
  const res = await call(api, "GET", "/v1/sandboxes/pool");
  expect(res.status).toBe(200);
  return (await res.json()) as ContainerPoolView;
}

let calls = 0;
/** A bash call in `sandbox`, waited for: its text (an error fails the test). */
async function bash(api: Api, sandbox: string, command: string): Promise<string> {
  const toolCallId = `cp_${process.pid}_${++calls}_${Date.now()}`;
  const made = await call(api, "POST", "/v1/invocations", {
    tool: "bash",
    args: { command },
    sandbox,
    toolCallId,
  });
  expect(made.status, await made.clone().text()).toBe(201);
  for (;;) {
    const res = await call(api, "GET", `/v1/invocations/${toolCallId}/result?wait=30`);
    if (res.status !== 200) {
      expect(res.status).toBe(202);
      continue;
    }
    const r = (await res.json()) as { isError: boolean; content: { text?: string }[] };
    const text = r.content.map((c) => c.text ?? "").join("");
    expect(r.isError, text).toBe(false);
    return text;
  }
}

async function until(what: string, check: () => Promise<boolean>, ms = 120_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** The running containers workerd started for a `SandboxContainer` (both Workers' alike). */
function sandboxContainers(): Set<string> {
  const ids = execFileSync(
    "docker",
    ["ps", "-q", "--no-trunc", "--filter", "name=workerd-toolwire-SandboxContainer-"],
    { encoding: "utf8" },
  );
  return new Set(ids.split("\n").filter(Boolean));
}

const full = async (api: Api) => {
  const now = await pool(api);
  return now.ready === now.size && now.starting === 0;
};

describe.skipIf(missing !== "")(
  `the warm pool of containers${missing ? ` (skipped: ${missing})` : ""}`,
  { timeout: 240_000 },
  () => {
    let pooled: Api & { stop: () => Promise<void> };
    let before: Set<string>;
    const made: [Api, string][] = [];

    beforeAll(async () => {
      before = sandboxContainers();
      pooled = await startContainersWorker({ CONTAINER_POOL_SIZE: "1" });
      // Its first request (this one) asks the pool to fill.
      expect(await pool(pooled)).toMatchObject({ size: 1 });
      await until("the pool holds a started container", () => full(pooled));
    }, 240_000);

    afterAll(async () => {
      for (const [api, id] of made) await (await call(api, "DELETE", `/v1/sandboxes/${id}`)).text();
      await pooled?.stop();
      // Whatever this file's Worker left running (its pool) goes with it.
      const left = [...sandboxContainers()].filter((id) => !before.has(id));
      if (left.length > 0) execFileSync("docker", ["rm", "-f", ...left], { stdio: "ignore" });
    });

    it("with pool size 0 (the suite's Worker), keeps none and starts each create's container as before", async () => {
      expect(await pool(suite)).toEqual({ size: 0, ready: 0, starting: 0 });
      const running = sandboxContainers();
      const sbx = await create(suite);
      made.push([suite, sbx.id]);
      expect(sbx.fromPool).toBe(false);
      // Its container is a new one, started by the create.
      expect(running.has(await containerIdOf(suite, sbx.id))).toBe(false);
      expect(await bash(suite, sbx.id, "echo cold")).toBe("cold\n");
      expect(await pool(suite)).toEqual({ size: 0, ready: 0, starting: 0 });
    });

    let first: SandboxView;
    let firstContainer: string;

    it("serves a create from the pool: the started container runs its command, and the pool refills", async () => {
      const waiting = sandboxContainers();
      first = await create(pooled, { name: "pooled one" });
      made.push([pooled, first.id]);
      expect(first).toMatchObject({ backend: "container", status: "active", fromPool: true });
      const read = await call(pooled, "GET", `/v1/sandboxes/${first.id}`);
      expect(((await read.json()) as SandboxView).fromPool).toBe(true);
      // The token the create answered names the pooled container's id, so it opens this sandbox.
      const own = { url: pooled.url, token: (first as SandboxView & { token: string }).token };
      expect((await call(own, "GET", `/v1/sandboxes/${first.id}`)).status).toBe(200);
      // No container was started for it: it runs in the one that waited.
      firstContainer = await containerIdOf(pooled, first.id);
      expect(waiting.has(firstContainer)).toBe(true);
      expect(await bash(pooled, first.id, "echo mine > mark.txt; cat mark.txt")).toBe("mine\n");
      await until("the pool has a new container", () => full(pooled));
    });

    it("gives a second sandbox from the pool another container with a fresh file system", async () => {
      const second = await create(pooled);
      made.push([pooled, second.id]);
      expect(second.fromPool).toBe(true);
      expect(second.id).not.toBe(first.id);
      expect(await containerIdOf(pooled, second.id)).not.toBe(firstContainer);
      expect(await bash(pooled, second.id, "test -e mark.txt || echo absent")).toBe("absent\n");
      // The first still has its file: nothing was moved or shared, only never given back.
      expect(await bash(pooled, first.id, "cat mark.txt")).toBe("mine\n");
      await until("the pool has a new container", () => full(pooled));
    });

    it("never hands out a pooled container that died, and starts another in its place", async () => {
      const idle = await idlePooled(firstContainer, made);
      expect(idle).toHaveLength(1);
      execFileSync("docker", ["kill", idle[0]!], { stdio: "ignore" });
      // At once, before the pool may have heard: the create still gets a live container.
      const meanwhile = await create(pooled);
      made.push([pooled, meanwhile.id]);
      expect(meanwhile.fromPool).toBe(false);
      expect(await bash(pooled, meanwhile.id, "echo started")).toBe("started\n");
      await until("the dead one is forgotten and another is started", async () => {
        const fresh = await idlePooled(firstContainer, made);
        return fresh.length === 1 && fresh[0] !== idle[0] && (await full(pooled));
      });
      const third = await create(pooled);
      made.push([pooled, third.id]);
      expect(third.fromPool).toBe(true);
      expect(await bash(pooled, third.id, "echo alive")).toBe("alive\n");
    });

    it("starts its own container for a create that names a network, leaving the pool's", async () => {
      await until("the pool is full", () => full(pooled));
      const sbx = await create(pooled, { network: { allow: ["example.com"] } });
      made.push([pooled, sbx.id]);
      expect(sbx.fromPool).toBe(false);
      expect(await pool(pooled)).toMatchObject({ size: 1, ready: 1 });
      expect(await bash(pooled, sbx.id, "echo networked")).toBe("networked\n");
    });
  },
);

/**
 * The containers waiting in the pool: running ones of the same image as `sample` (each
 * worktree's image has a tag of its own) that no active sandbox of `made` runs in.
 */
async function idlePooled(sample: string, made: [Api, string][]): Promise<string[]> {
  const image = inspect(sample, "{{.Config.Image}}");
  const used = new Set<string>();
  for (const [owner, id] of made) {
    const view = (await (await call(owner, "GET", `/v1/sandboxes/${id}`)).json()) as SandboxView;
    if (view.status === "active") used.add(await containerIdOf(owner, id));
  }
  return [...sandboxContainers()].filter(
    (id) => !used.has(id) && inspect(id, "{{.Config.Image}}") === image,
  );
}

/** A field of `docker inspect`, or "" for a container gone meanwhile. */
function inspect(id: string, format: string): string {
  try {
    return execFileSync("docker", ["inspect", "--format", format, id], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
  } catch {
    return "";
  }
}

/**
 * The docker id of a sandbox's container, from its `hostname`: workerd runs each
 * container in the network namespace of its egress sidecar, whose id is that hostname.
 */
async function containerIdOf(api: Api, sandbox: string): Promise<string> {
  const hostname = (await bash(api, sandbox, "hostname")).trim();
  for (const id of sandboxContainers()) {
    const mode = execFileSync(
      "docker",
      ["inspect", "--format", "{{.HostConfig.NetworkMode}}", id],
      {
        encoding: "utf8",
      },
    ).trim();
    if (mode.startsWith(`container:${hostname}`)) return id;
  }
  throw new Error(`no container runs in the network of ${hostname}`);
}
