// Every call's complete output as a Durable Stream (GET /v1/invocations/:id/stream),
// read with the protocol's own TypeScript client against the real Worker, Durable Object
// and sandbox host (global-setup.ts): a bash call of 100,000 lines followed live to its
// end through a proxy cut twice, byte for byte the spill; an external call's appends
// over SSE with the watch link's token; another tool's text; and the protocol's headers.
import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { stream } from "@durable-streams/client";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type CreatedInvocation, ToolwireClient } from "../../src/client/index.ts";
import { type CutProxy, startCutProxy } from "../support/e2e/cut-proxy.ts";
import { ROOT } from "../support/processes.ts";

const run = promisify(execFile);
const PYTHON_READER = path.join(ROOT, "docs/stream-reader.py");
const python = await run("python3", ["--version"]).then(
  () => true,
  () => false,
);

const apiUrl = inject("apiUrl");
const token = inject("apiToken");
const auth = { Authorization: `Bearer ${token}` };
const api = new ToolwireClient({ baseUrl: apiUrl, token });

/** Reads the whole answer of a route as bytes. */
async function bytesOf(url: string): Promise<Uint8Array> {
  const res = await fetch(url, { headers: auth });
  expect(res.status).toBe(200);
  return new Uint8Array(await res.arrayBuffer());
}

function joined(chunks: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.byteLength, 0));
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.byteLength;
  }
  return out;
}

/**
 * Follows `url` with the official client from `-1` to the stream's close, resuming from
 * the last offset it was given whenever the connection breaks; answers the bytes and how
 * many times it had to resume.
 */
async function follow(
  url: string,
  live: "long-poll" | "sse",
  headers: Record<string, string>,
): Promise<{ bytes: Uint8Array; resumes: number }> {
  const chunks: Uint8Array[] = [];
  let offset = "-1";
  let resumes = -1;
  for (;;) {
    resumes++;
    try {
      const res = await stream({ url, offset, live, headers });
      const closed = await new Promise<boolean>((resolve, reject) => {
        res.subscribeBytes(async (chunk) => {
          if (chunk.data.byteLength > 0) chunks.push(chunk.data.slice());
          offset = chunk.offset;
          if (chunk.streamClosed) resolve(true);
        });
        res.closed.then(() => resolve(res.streamClosed), reject);
      });
      if (closed) return { bytes: joined(chunks), resumes };
    } catch {
      // A dropped connection: resume from the last offset, as any reader would.
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

describe("GET /v1/invocations/:id/stream", () => {
  let proxy: CutProxy;

  beforeAll(async () => {
    const { hostname, port } = new URL(apiUrl);
    proxy = await startCutProxy({ host: hostname, port: Number(port) });
  });
  afterAll(() => proxy?.close());

  /** A command that prints 100,000 lines over about four seconds. */
  const HUNDRED_THOUSAND_LINES =
    'for i in $(seq 1 100000); do echo "line $i"; [ $((i % 25000)) = 0 ] && sleep 1; done; true';

  /** Cuts every connection through the proxy twice while `reading` runs. */
  async function cutTwice(): Promise<void> {
    for (let cut = 0; cut < 2; cut++) {
      await new Promise((resolve) => setTimeout(resolve, 1200));
      await proxy.stop();
      await proxy.start();
    }
  }

  it("follows a bash call of 100,000 lines live to its end, cut twice, byte for byte the spill", async () => {
    const created = await api.createInvocation({
      tool: "bash",
      args: { command: HUNDRED_THOUSAND_LINES, timeout: 120 },
    });
    const url = `${proxy.url}/v1/invocations/${created.id}/stream`;
    const reading = follow(url, "long-poll", auth);
    await cutTwice();
    const { bytes } = await reading;
    expect((await api.result(created.id, { wait: 30 })).status).toBe("settled");
    const spill = await bytesOf(`${apiUrl}/v1/invocations/${created.id}/spill`);
    expect(spill.byteLength).toBe(1_088_895);
    expect(Buffer.from(bytes).equals(Buffer.from(spill))).toBe(true);
  }, 120_000);

  it.skipIf(!python)(
    "the standard-library Python reader in docs/ follows the same call live, cut twice, byte for byte (skips, saying so, where python3 is missing)",
    async () => {
      const created = await api.createInvocation({
        tool: "bash",
        args: { command: HUNDRED_THOUSAND_LINES, timeout: 120 },
      });
      const url = `${proxy.url}/v1/invocations/${created.id}/stream`;
      // `--token=` in one word: a token may start with '-', which argparse takes for an option.
      const reading = run("python3", [PYTHON_READER, url, `--token=${token}`], {
        encoding: "buffer",
        maxBuffer: 16 * 1024 * 1024,
        timeout: 90_000,
      });
      await cutTwice();
      const { stdout } = await reading;
      const spill = await bytesOf(`${apiUrl}/v1/invocations/${created.id}/spill`);
      expect(stdout.byteLength).toBe(1_088_895);
      expect(Buffer.from(stdout).equals(Buffer.from(spill))).toBe(true);
    },
    120_000,
  );

  it("serves an external call's appends over SSE to the watch link's token, every byte once", async () => {
    const created: CreatedInvocation = await api.createInvocation({
      tool: "external",
      args: { name: "appends" },
    });
    const url = `${apiUrl}/v1/invocations/${created.id}/stream?token=${created.subscribeToken}`;
    const reading = follow(url, "sse", {});
    const producer = api.producer(created.id);
    const parts = ["first\n", "second, ünïcode\n", "x".repeat(70_000), "\nlast\n"];
    for (const part of parts) await producer.send([{ write: part }]);
    await producer.send([], { isError: false });
    const { bytes } = await reading;
    expect(new TextDecoder().decode(bytes)).toBe(parts.join(""));
  }, 60_000);

  it("serves another tool's text once it settles, closed", async () => {
    const created = await api.createInvocation({ tool: "ls", args: { path: "/workspace" } });
    await api.result(created.id, { wait: 30 });
    const res = await fetch(`${apiUrl}/v1/invocations/${created.id}/stream?offset=-1`, {
      headers: auth,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("Stream-Closed")).toBe("true");
    expect(res.headers.get("Stream-Up-To-Date")).toBe("true");
    const view = await api.get(created.id);
    const first = view.state.content[0];
    expect(await res.text()).toBe(first?.type === "text" ? first.text : "");
  }, 60_000);

  it("answers offsets, ETag and 304, Cache-Control and refusals as the protocol says", async () => {
    const created = await api.createInvocation({
      tool: "bash",
      args: { command: "printf 'abcdef'" },
    });
    await api.result(created.id, { wait: 30 });
    const base = `${apiUrl}/v1/invocations/${created.id}/stream`;
    const head = await fetch(base, { method: "HEAD", headers: auth });
    expect(head.headers.get("Stream-Next-Offset")).toBe("0000000000000006");
    expect(head.headers.get("Cache-Control")).toBe("no-store");
    const part = await fetch(`${base}?offset=0000000000000002`, { headers: auth });
    expect(await part.text()).toBe("cdef");
    expect(part.headers.get("Cache-Control")).toContain("immutable");
    const etag = part.headers.get("ETag") ?? "";
    const again = await fetch(`${base}?offset=0000000000000002`, {
      headers: { ...auth, "If-None-Match": etag },
    });
    expect(again.status).toBe(304);
    const now = await fetch(`${base}?offset=now`, { headers: auth });
    expect(now.headers.get("Cache-Control")).toBe("no-store");
    expect(await now.text()).toBe("");
    expect((await fetch(`${base}?offset=banana`, { headers: auth })).status).toBe(400);
    expect((await fetch(`${base}?offset=0000000000000007`, { headers: auth })).status).toBe(400);
    expect((await fetch(base)).status).toBe(401);
    // The small call's spill route answers its whole output too: it has one.
    expect(
      new TextDecoder().decode(await bytesOf(`${apiUrl}/v1/invocations/${created.id}/spill`)),
    ).toBe("abcdef");
  }, 60_000);
});
