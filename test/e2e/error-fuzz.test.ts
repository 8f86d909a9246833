// Errors show nothing of the host (issue 30, "Errors show the host"): bad bodies sent to
// every route that reaches a sandbox host, through the Worker, and every answer is
// checked for a host path or a stack trace.
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { ROOT } from "../support/processes.ts";

const api = inject("apiUrl");
const auth = { authorization: `Bearer ${inject("apiToken")}` };
const sandboxRoot = inject("sandboxRoot");
const scratch = mkdtempSync(path.join(tmpdir(), "toolwire-fuzz-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** What no answer may hold: a host folder of ours, or a stack frame. */
function leaks(text: string): string[] {
  const found: string[] = [];
  for (const p of [sandboxRoot, ROOT, scratch, path.dirname(sandboxRoot)]) {
    if (text.includes(p)) found.push(`host path ${p}`);
  }
  if (/\n\s+at .+[:(]\d+:\d+\)?/.test(text) || /\bat .+\.(ts|js):\d+:\d+/.test(text)) {
    found.push("a stack frame");
  }
  if (/node_modules|miniflare|workerd\//i.test(text)) found.push("runtime internals");
  return found;
}

interface Probe {
  name: string;
  method: string;
  route: string;
  body?: BodyInit;
  type?: string;
}

const answers: { probe: string; status: number; text: string }[] = [];

/** Sends `p`; a call that was accepted is followed to its settled result, which is checked too. */
async function send(p: Probe): Promise<void> {
  const res = await fetch(`${api}${p.route}`, {
    method: p.method,
    headers: { ...auth, ...(p.type ? { "content-type": p.type } : {}) },
    body: p.body,
    signal: AbortSignal.timeout(60_000),
  });
  let text = await res.text();
  const created =
    res.status === 201 && p.route.startsWith("/v1/invocations") ? JSON.parse(text) : null;
  if (created) {
    const result = await fetch(`${api}/v1/invocations/${created.id}/result?wait=30`, {
      headers: auth,
      signal: AbortSignal.timeout(60_000),
    });
    text = await result.text();
  }
  answers.push({ probe: p.name, status: res.status, text });
}

let id: string;
beforeAll(async () => {
  const res = await fetch(`${api}/v1/sandboxes`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({ limits: { diskBytes: 16 * 1024 * 1024 } }),
  });
  expect(res.status).toBe(201);
  id = ((await res.json()) as { id: string }).id;
}, 60_000);
afterAll(async () => {
  await fetch(`${api}/v1/sandboxes/${id}`, { method: "DELETE", headers: auth });
});

function call(tool: string, args: unknown): Probe {
  return {
    name: `tool ${tool} ${JSON.stringify(args).slice(0, 40)}`,
    method: "POST",
    route: "/v1/invocations",
    body: JSON.stringify({ tool, args, sandbox: id }),
    type: "application/json",
  };
}

describe("bad requests through the Worker", () => {
  it("no answer names a host path or carries a stack", async () => {
    const junk = randomBytes(10 * 1024 * 1024);
    // A real archive too big for the 16 MiB disk: the upload is refused for its quota.
    const big = path.join(scratch, "big");
    writeFileSync(big, Buffer.alloc(24 * 1024 * 1024));
    execFileSync("tar", ["-cf", `${big}.tar`, "-C", scratch, "big"]);
    const overQuota = new Uint8Array(execFileSync("cat", [`${big}.tar`], { maxBuffer: 1 << 26 }));
    const probes: Probe[] = [
      {
        name: "10 MB junk tar",
        method: "PUT",
        route: `/v1/sandboxes/${id}/files?path=d`,
        body: junk,
        type: "application/x-tar",
      },
      {
        name: "over-quota tar",
        method: "PUT",
        route: `/v1/sandboxes/${id}/files?path=q`,
        body: overQuota,
        type: "application/x-tar",
      },
      {
        name: "tar to ..",
        method: "PUT",
        route: `/v1/sandboxes/${id}/files?path=../..`,
        body: overQuota.subarray(0, 1024),
        type: "application/x-tar",
      },
      { name: "download ..", method: "GET", route: `/v1/sandboxes/${id}/files?path=../../etc` },
      {
        name: "download missing",
        method: "GET",
        route: `/v1/sandboxes/${id}/files?path=nope/none`,
      },
      {
        name: "create bad JSON",
        method: "POST",
        route: "/v1/sandboxes",
        body: "{not json",
        type: "application/json",
      },
      {
        name: "create bad limits",
        method: "POST",
        route: "/v1/sandboxes",
        body: JSON.stringify({ limits: { diskBytes: -1 } }),
        type: "application/json",
      },
      {
        name: "network bad JSON",
        method: "PUT",
        route: `/v1/sandboxes/${id}/network`,
        body: "][",
        type: "application/json",
      },
      {
        name: "network bad entry",
        method: "PUT",
        route: `/v1/sandboxes/${id}/network`,
        body: JSON.stringify({ allow: ["a b c:99999"] }),
        type: "application/json",
      },
      {
        name: "invocation bad JSON",
        method: "POST",
        route: "/v1/invocations",
        body: "{",
        type: "application/json",
      },
      call("read", { path: "../../../etc/passwd" }),
      call("read", { path: "/etc/shadow" }),
      call("read", { path: "missing/file.txt" }),
      call("read", { path: "x\u0000y" }),
      call("ls", { path: "no/such/dir" }),
      call("grep", { pattern: "(", path: "." }),
      call("grep", { pattern: "a", path: "../.." }),
      call("glob", { pattern: "**/*", path: "/proc" }),
      call("find", { pattern: "*", path: "gone" }),
      call("write", { path: "../escape.txt", content: "x" }),
      call("write", { path: "d/../../escape.txt", content: "x" }),
      call("edit", { path: "missing.txt", edits: [{ oldText: "a", newText: "b" }] }),
      call("bash", { command: 42 }),
    ];
    for (const probe of probes) await send(probe);
    const bad = answers
      .map((a) => ({ ...a, leaks: leaks(a.text) }))
      // A 500 is a failure no route expected, a 502 a host that went away: neither may happen
      // (507 insufficient_storage is the quota's own answer).
      .filter((a) => a.leaks.length > 0 || a.status === 500 || a.status === 502)
      .map((a) => `${a.probe}: ${a.status} ${a.leaks.join(", ")} ${a.text.slice(0, 300)}`);
    expect(bad).toEqual([]);
    expect(answers).toHaveLength(probes.length);
    expect(answers.find((a) => a.probe === "over-quota tar")?.status).toBe(507);
    // Every bad call was refused: at create (4xx) or as an error result, never as a success.
    const calls = answers.filter((a) => a.probe.startsWith("tool "));
    expect(calls).toHaveLength(13);
    for (const a of calls) {
      const refused = a.status >= 400 || (JSON.parse(a.text) as { isError?: boolean }).isError;
      expect(refused, `${a.probe}: ${a.text.slice(0, 200)}`).toBe(true);
    }
    // The host is still there: the sandbox answers and runs a command.
    answers.length = 0;
    await send(call("bash", { command: "echo still-here" }));
    expect(answers[0]).toMatchObject({ status: 201, text: expect.stringContaining("still-here") });
  }, 300_000);
});
