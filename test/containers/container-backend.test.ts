// The `container` backend against real local containers (wrangler dev with
// wrangler.containers.toml; global-setup.ts). Each sandbox is a container of its own,
// its commands jailed inside it (decision 144). Skipped, saying why, where Docker is missing.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, describe, expect, inject, it } from "vitest";
import type { SandboxView } from "../../src/protocol/index.ts";

const missing = inject("containersMissing");
const api = inject("containersApiUrl");
const auth = { authorization: `Bearer ${inject("containersApiToken")}` };

interface Result {
  content: { type: string; text?: string }[];
  isError: boolean;
  details?: { exitCode?: number | null };
  truncation?: { totalLines: number; totalBytes: number; outputLines: number; spillPath?: string };
  status?: string;
}

async function create(body: Record<string, unknown> = {}): Promise<SandboxView> {
  const res = await fetch(`${api}/v1/sandboxes`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({ backend: "container", ...body }),
  });
  const text = await res.text();
  expect(res.status, text).toBe(201);
  return JSON.parse(text) as SandboxView;
}

async function view(id: string): Promise<SandboxView> {
  return (await (
    await fetch(`${api}/v1/sandboxes/${id}`, { headers: auth })
  ).json()) as SandboxView;
}

let calls = 0;
/** Starts a tool call in `sandbox` and answers its id. */
async function start(
  sandbox: string,
  tool: string,
  args: Record<string, unknown>,
): Promise<string> {
  const toolCallId = `ct_${process.pid}_${++calls}_${Date.now()}`;
  const res = await fetch(`${api}/v1/invocations`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({ tool, args, sandbox, toolCallId }),
  });
  const text = await res.text();
  expect(res.status, text).toBe(201);
  return toolCallId;
}

async function result(id: string): Promise<Result> {
  for (;;) {
    const res = await fetch(`${api}/v1/invocations/${id}/result?wait=30`, { headers: auth });
    if (res.status === 200) return (await res.json()) as Result;
    expect(res.status).toBe(202);
  }
}

async function run(sandbox: string, tool: string, args: Record<string, unknown>): Promise<Result> {
  return result(await start(sandbox, tool, args));
}

/** Every process's command line the jail can see (the image has no `ps`). */
const COMMAND_LINES = "for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline; echo; done 2>/dev/null";

const textOf = (r: Result) => r.content.map((c) => c.text ?? "").join("");

async function bash(sandbox: string, command: string): Promise<string> {
  const r = await run(sandbox, "bash", { command });
  expect(r.isError, textOf(r)).toBe(false);
  return textOf(r);
}

/**
 * The docker id of a sandbox's container, from its `hostname`: workerd runs each
 * container in the network namespace of its egress sidecar, whose id is that hostname.
 */
function containerOf(hostname: string): string {
  const ids = execFileSync(
    "docker",
    ["ps", "-q", "--no-trunc", "--filter", "name=workerd-toolwire-SandboxContainer-"],
    { encoding: "utf8" },
  )
    .split("\n")
    .filter(Boolean);
  const modes = execFileSync(
    "docker",
    ["inspect", "--format", "{{.Id}} {{.HostConfig.NetworkMode}}", ...ids],
    {
      encoding: "utf8",
    },
  );
  const line = modes.split("\n").find((l) => l.split(" ")[1]?.startsWith(`container:${hostname}`));
  if (!line) throw new Error(`no container runs in the network of ${hostname}`);
  return line.split(" ")[0]!;
}

/** Whether docker still runs container `id`. */
function running(id: string): boolean {
  try {
    const state = execFileSync("docker", ["inspect", "--format", "{{.State.Running}}", id], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    });
    return state.trim() === "true";
  } catch {
    return false;
  }
}

async function until(what: string, check: () => Promise<boolean> | boolean, ms = 30_000) {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

const scratch = mkdtempSync(path.join(tmpdir(), "toolwire-containers-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe.skipIf(missing !== "")(
  `the container backend${missing ? ` (skipped: ${missing})` : ""}`,
  { timeout: 120_000 },
  () => {
    let sbx: SandboxView;

    it("creates a sandbox that is a container of its own, with the image's limits and its initial files", async () => {
      sbx = await create({ name: "ct-main", files: { "notes/hello.txt": "hello, container\n" } });
      expect(sbx).toMatchObject({
        status: "active",
        backend: "container",
        placement: "container",
        name: "ct-main",
      });
      expect(sbx.id).toMatch(/^sbx_container_[0-9a-f]{20}$/);
      expect(sbx.limits.maxFileBytes).toBe(1024 ** 3);
      expect((await view(sbx.id)).backend).toBe("container");
      expect(await bash(sbx.id, "id -u; pwd; cat notes/hello.txt")).toBe(
        `1000\n/home/toolwire/sandboxes/${sbx.id}/workspace\nhello, container\n`,
      );
    });

    it("refuses a container sandbox that names a host, creating nothing", async () => {
      const res = await fetch(`${api}/v1/sandboxes`, {
        method: "POST",
        headers: { ...auth, "content-type": "application/json" },
        body: JSON.stringify({ backend: "container", host: "default" }),
      });
      expect(res.status).toBe(400);
      expect(await res.text()).toMatch(/a container sandbox has a container of its own/);
    });

    it("takes an uploaded tree and gives it back as tar", async () => {
      const tree = path.join(scratch, "repo");
      mkdirSync(path.join(tree, "src/lib"), { recursive: true });
      writeFileSync(path.join(tree, "README.md"), "# repo\n");
      writeFileSync(path.join(tree, "src/main.ts"), 'export const greeting = "hello";\n');
      writeFileSync(path.join(tree, "src/lib/util.ts"), "export const answer = 42;\n");
      const tar = execFileSync("tar", ["-c", "-C", tree, "."]);
      const put = await fetch(`${api}/v1/sandboxes/${sbx.id}/files?path=repo`, {
        method: "PUT",
        headers: { ...auth, "content-type": "application/x-tar" },
        body: tar,
      });
      expect(put.status, await put.clone().text()).toBe(200);
      expect(await bash(sbx.id, "cd repo && find . -type f | sort")).toBe(
        "./README.md\n./src/lib/util.ts\n./src/main.ts\n",
      );
      const get = await fetch(`${api}/v1/sandboxes/${sbx.id}/files?path=repo/src/lib`, {
        headers: auth,
      });
      expect(get.status).toBe(200);
      const back = path.join(scratch, "back.tar");
      writeFileSync(back, Buffer.from(await get.arrayBuffer()));
      const entries = execFileSync("tar", ["-tf", back], { encoding: "utf8" }).split("\n");
      const util = entries.find((e) => e.endsWith("util.ts"));
      expect(util).toBeDefined();
      expect(execFileSync("tar", ["-xOf", back, util!], { encoding: "utf8" })).toBe(
        "export const answer = 42;\n",
      );
    });

    it("refuses an upload entry that climbs out of the workspace, writing nothing", async () => {
      const evil = path.join(scratch, "evil");
      mkdirSync(evil, { recursive: true });
      writeFileSync(path.join(evil, "x"), "x\n");
      const tar = execFileSync("tar", ["-c", "-C", evil, "--transform", "s,^,../../,", "x"]);
      const put = await fetch(`${api}/v1/sandboxes/${sbx.id}/files?path=up`, {
        method: "PUT",
        headers: { ...auth, "content-type": "application/x-tar" },
        body: tar,
      });
      expect(put.status).toBe(400);
      expect(await bash(sbx.id, "ls -a up 2>&1; ls ../../x 2>&1 | wc -l")).toMatch(/No such file/);
    });

    it("runs bash with 100,000 lines: the window, the totals and the complete spill", async () => {
      const id = await start(sbx.id, "bash", { command: "seq 100000" });
      const r = await result(id);
      expect(r.isError).toBe(false);
      const text = textOf(r);
      expect(text).toContain("\n100000\n");
      expect(text).not.toContain("\n1\n2\n3\n");
      expect(r.truncation).toMatchObject({ totalLines: 100_000, totalBytes: 588_895 });
      expect(r.truncation?.outputLines).toBeLessThan(100_000);
      const spill = await fetch(`${api}/v1/invocations/${id}/spill`, { headers: auth });
      expect(spill.status).toBe(200);
      const all = await spill.text();
      expect(all.length).toBe(588_895);
      expect(all.startsWith("1\n2\n3\n")).toBe(true);
      expect(all.endsWith("99999\n100000\n")).toBe(true);
    });

    it("reads, greps and edits files inside the container", async () => {
      const read = await run(sbx.id, "read", { path: "repo/src/main.ts" });
      expect(textOf(read)).toContain('export const greeting = "hello";');
      const grep = await run(sbx.id, "grep", { pattern: "answer", path: "repo" });
      expect(textOf(grep)).toContain("src/lib/util.ts");
      expect(textOf(grep)).toContain("42");
      const edit = await run(sbx.id, "edit", {
        path: "repo/src/main.ts",
        edits: [{ oldText: '"hello"', newText: '"hello from a container"' }],
      });
      expect(edit.isError, textOf(edit)).toBe(false);
      expect(await bash(sbx.id, "cat repo/src/main.ts")).toBe(
        'export const greeting = "hello from a container";\n',
      );
    });

    it("cancels a running command: it settles cancelled with its output, and the process is gone", async () => {
      const id = await start(sbx.id, "bash", {
        command: "echo started; exec sleep 300",
      });
      await until("the command has started", async () => {
        const res = await fetch(`${api}/v1/invocations/${id}`, { headers: auth });
        const v = (await res.json()) as { state: { content: { text?: string }[] } };
        return (v.state.content[0]?.text ?? "").includes("started");
      });
      const cancel = await fetch(`${api}/v1/invocations/${id}/cancel`, {
        method: "POST",
        headers: auth,
      });
      expect(cancel.status).toBe(200);
      const r = await result(id);
      expect(textOf(r)).toContain("started");
      const v = (await (await fetch(`${api}/v1/invocations/${id}`, { headers: auth })).json()) as {
        status: string;
        cancelled?: boolean;
      };
      expect(v).toMatchObject({ status: "settled", cancelled: true });
      expect(await bash(sbx.id, `${COMMAND_LINES} | grep -c '^sleep 300' || true`)).toBe("0\n");
    });

    it("keeps its commands from the host process inside the container: no token, no port, no host pids", async () => {
      const out = await bash(
        sbx.id,
        [
          "cat /proc/1/environ >/dev/null 2>&1 && echo init-readable",
          "cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n' | grep -c SANDBOX_TOKEN || true",
          "(exec 3<>/dev/tcp/127.0.0.1/8080) 2>/dev/null && echo host-port-open",
          `${COMMAND_LINES} | grep -c '[h]ost.mjs' || true`,
          "kill -9 -1 2>/dev/null; echo still-here",
        ].join("; "),
      );
      expect(out).toBe("0\n0\nstill-here\n");
      expect(await bash(sbx.id, "echo the host survived")).toBe("the host survived\n");
    });

    it("holds a create's limits inside the container: a file of exactly maxFileBytes is written, one byte more fails", async () => {
      const small = await create({ name: "ct-quota", limits: { maxFileBytes: 1_048_576 } });
      expect(small.limits.maxFileBytes).toBe(1_048_576);
      expect(await bash(small.id, "head -c 1048576 /dev/zero > at && wc -c < at")).toBe(
        "1048576\n",
      );
      const over = await run(small.id, "bash", { command: "head -c 1048577 /dev/zero > over" });
      expect(over.isError).toBe(true);
      expect(textOf(over)).toMatch(/File size limit exceeded|File too large/);
      await fetch(`${api}/v1/sandboxes/${small.id}`, { method: "DELETE", headers: auth });
    });

    it("answers an MCP client configured with /mcp/sandboxes/<id> from that container", async () => {
      await bash(sbx.id, "echo mcp-side > marker.txt");
      const client = new Client({ name: "toolwire-container-mcp", version: "1.0.0" });
      const transport = new StreamableHTTPClientTransport(
        new URL(`${api}/mcp/sandboxes/${sbx.id}`),
        {
          requestInit: { headers: auth },
        },
      );
      await client.connect(transport);
      const result = (await client.callTool({
        name: "bash",
        arguments: { command: "cat marker.txt; hostname | wc -c" },
      })) as { content: { text?: string }[] };
      expect(result.content.map((c) => c.text ?? "").join("")).toBe("mcp-side\n13\n");
      await client.close();
    });

    it("settles a call whose container is killed mid-run with a clear error, keeping its output; the sandbox is then lost", async () => {
      const victim = await create({ name: "ct-victim" });
      const container = containerOf((await bash(victim.id, "hostname")).trim());
      expect(running(container)).toBe(true);
      const id = await start(victim.id, "bash", {
        command: "seq 1 3000; echo last-line; sleep 300",
      });
      await until("the output is there", async () => {
        const v = (await (
          await fetch(`${api}/v1/invocations/${id}`, { headers: auth })
        ).json()) as {
          state: { content: { text?: string }[] };
        };
        return (v.state.content[0]?.text ?? "").includes("last-line");
      });
      execFileSync("docker", ["kill", container], { stdio: "ignore" });
      const r = await result(id);
      expect(r.isError).toBe(true);
      const text = textOf(r);
      expect(text).toContain("2999\n3000\nlast-line\n");
      expect(text).toMatch(
        /the container of sandbox sbx_container_\w+ stopped: .*exit code 137.*the output up to here is kept/,
      );
      const after = await fetch(`${api}/v1/invocations`, {
        method: "POST",
        headers: { ...auth, "content-type": "application/json" },
        body: JSON.stringify({ tool: "bash", args: { command: "true" }, sandbox: victim.id }),
      });
      expect(after.status).toBe(410);
      expect(await after.text()).toMatch(/is lost: its container is gone/);
      expect((await view(victim.id)).status).toBe("lost");
    });

    it("removes the container when the sandbox idles past its timeout", async () => {
      const idle = await create({ name: "ct-idle", idleTimeoutSeconds: 2 });
      const container = containerOf((await bash(idle.id, "hostname")).trim());
      expect(running(container)).toBe(true);
      await until("the sandbox expired", async () => (await view(idle.id)).status === "expired");
      expect((await view(idle.id)).endReason).toBe("it was idle for its timeout of 2 s");
      await until("its container is gone", () => !running(container));
    });

    it("removes the container when the sandbox is deleted", async () => {
      const doomed = await create({ name: "ct-doomed" });
      const container = containerOf((await bash(doomed.id, "hostname")).trim());
      const del = await fetch(`${api}/v1/sandboxes/${doomed.id}`, {
        method: "DELETE",
        headers: auth,
      });
      expect(del.status).toBe(200);
      await until("its container is gone", () => !running(container));
      const after = await fetch(`${api}/v1/sandboxes/${doomed.id}/keepalive`, {
        method: "POST",
        headers: auth,
      });
      expect(after.status).toBe(410);
    });

    it("runs ten sandboxes at once, each in its own container, none seeing another's files", async () => {
      const ten = await Promise.all(
        Array.from({ length: 10 }, (_, i) => create({ name: `ct-${i}` })),
      );
      const hosts = await Promise.all(
        ten.map((s, i) => bash(s.id, `echo secret-${i} > mine.txt; hostname`)),
      );
      expect(new Set(hosts).size).toBe(10);
      const seen = await Promise.all(
        ten.map((s) =>
          bash(s.id, "cat mine.txt; ls /home/toolwire/sandboxes; cat ../../*/workspace/mine.txt"),
        ),
      );
      for (const [i, out] of seen.entries()) {
        expect(out).toBe(`secret-${i}\n${ten[i]!.id}\nsecret-${i}\n`);
      }
      await Promise.all(
        ten.map((s) => fetch(`${api}/v1/sandboxes/${s.id}`, { method: "DELETE", headers: auth })),
      );
    });
  },
);
