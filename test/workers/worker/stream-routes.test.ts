// /v1/stream/:name and /v1/invocations/:id/stream in the Workers runtime, with the
// object's real SQLite storage: a reader resuming from its last Stream-Next-Offset
// across an eviction gets every byte once, a producer's retry after an eviction is still
// a retry, and the append cap and the producer seq's bound at, under and over.
import { evictDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { MAX_APPEND_BYTES } from "../../../src/protocol/durable-streams/index.ts";
import { call, freshId } from "./helpers.ts";

const text = (body: string, headers: Record<string, string> = {}) => ({
  method: "POST",
  headers: { "Content-Type": "text/plain", ...headers },
  body,
});

async function made(name: string, contentType = "text/plain"): Promise<string> {
  const path = `/v1/stream/${name}`;
  const res = await call(path, { method: "PUT", headers: { "Content-Type": contentType } });
  expect(res.status).toBe(201);
  return path;
}

describe("/v1/stream/:name in the Workers runtime", () => {
  it("a reader resuming from its last offset across an eviction reads every byte once", async () => {
    const name = freshId("stream-evict");
    const path = await made(name);
    await call(path, text("first part;"));
    const first = await call(`${path}?offset=-1`);
    const firstText = await first.text();
    const offset = first.headers.get("Stream-Next-Offset");
    await evictDurableObject(env.INVOCATIONS.getByName(name));
    await call(path, text("second part"));
    const rest = await call(`${path}?offset=${offset}`);
    expect(firstText + (await rest.text())).toBe("first part;second part");
  });

  it("a producer's retry after an eviction is answered as a retry, nothing appended twice", async () => {
    const name = freshId("stream-producer-evict");
    const path = await made(name);
    const producer = { "Producer-Id": "p", "Producer-Epoch": "0", "Producer-Seq": "0" };
    expect((await call(path, text("once", producer))).status).toBe(200);
    await evictDurableObject(env.INVOCATIONS.getByName(name));
    expect((await call(path, text("once", producer))).status).toBe(204);
    expect(await (await call(`${path}?offset=-1`)).text()).toBe("once");
  });

  it("takes an append of exactly 16 MiB and refuses one byte more with 413", async () => {
    const path = await made(freshId("stream-cap"), "application/octet-stream");
    const append = (size: number) =>
      call(path, {
        method: "POST",
        headers: { "Content-Type": "application/octet-stream" },
        body: new Uint8Array(size).fill(7),
      });
    expect((await append(MAX_APPEND_BYTES - 1)).status).toBe(204);
    expect((await append(MAX_APPEND_BYTES)).status).toBe(204);
    const over = await append(MAX_APPEND_BYTES + 1);
    expect(over.status).toBe(413);
    expect(await over.text()).toMatch(/16 MiB/);
    const head = await call(path, { method: "HEAD" });
    expect(Number(head.headers.get("Stream-Next-Offset"))).toBe(2 * MAX_APPEND_BYTES - 1);
  }, 30_000);

  it("takes a Producer-Seq up to 2^53 - 1 and refuses 2^53", async () => {
    const path = await made(freshId("stream-seq-bound"));
    const at = (epoch: string, seq: string) =>
      call(path, text("x", { "Producer-Id": "p", "Producer-Epoch": epoch, "Producer-Seq": seq }));
    expect((await at("0", "0")).status).toBe(200);
    expect((await at("9007199254740991", "0")).status).toBe(200);
    expect((await at("9007199254740992", "0")).status).toBe(400);
  });

  it("an external call's stream is its producer's writes, every byte, closed when it settles", async () => {
    const id = freshId("stream-external");
    const created = await call("/v1/invocations", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ tool: "external", args: { name: "x" }, toolCallId: id }),
    });
    expect(created.status).toBe(201);
    const big = "y".repeat(60_000);
    await call(`/v1/invocations/${id}/output`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({
        calls: [{ write: big }, { write: "end\n" }],
        end: { isError: false },
      }),
    });
    const res = await call(`/v1/invocations/${id}/stream?offset=-1`);
    expect(res.headers.get("Stream-Closed")).toBe("true");
    expect(await res.text()).toBe(`${big}end\n`);
  });

  it("a fork copies its source's prefix and outlives the source; a missing source or an offset past its end is refused", async () => {
    const source = await made(freshId("fork-src"));
    await call(source, text("first"));
    const middle = (await call(source, { method: "HEAD" })).headers.get("Stream-Next-Offset") ?? "";
    await call(source, text("second"));
    const fork = `/v1/stream/${freshId("fork")}`;
    const forked = await call(fork, {
      method: "PUT",
      headers: { "Stream-Forked-From": source, "Stream-Fork-Offset": middle },
    });
    expect(forked.status).toBe(201);
    expect(forked.headers.get("Content-Type")).toBe("text/plain");
    await call(fork, text(" and the fork's"));
    expect((await call(source, { method: "DELETE" })).status).toBe(204);
    expect(await (await call(`${fork}?offset=-1`)).text()).toBe("first and the fork's");
    const missing = await call(`/v1/stream/${freshId("fork")}`, {
      method: "PUT",
      headers: { "Stream-Forked-From": "/v1/stream/never-made-1" },
    });
    expect(missing.status).toBe(404);
    const past = await call(`/v1/stream/${freshId("fork")}`, {
      method: "PUT",
      headers: { "Stream-Forked-From": fork, "Stream-Fork-Offset": "0000000000099999" },
    });
    expect(past.status).toBe(400);
  });

  it("a fork copies exactly 16 MiB of its source and refuses one byte more with 413", async () => {
    const source = await made(freshId("fork-big"), "application/octet-stream");
    const bytes = (size: number) => ({
      method: "POST",
      headers: { "Content-Type": "application/octet-stream" },
      body: new Uint8Array(size).fill(1),
    });
    await call(source, bytes(MAX_APPEND_BYTES));
    await call(source, bytes(1));
    const forkAt = (offset: number) =>
      call(`/v1/stream/${freshId("fork-big")}`, {
        method: "PUT",
        headers: {
          "Stream-Forked-From": source,
          "Stream-Fork-Offset": String(offset).padStart(16, "0"),
        },
      });
    const at = await forkAt(MAX_APPEND_BYTES);
    expect(at.status).toBe(201);
    expect(at.headers.get("Stream-Next-Offset")).toBe(String(MAX_APPEND_BYTES).padStart(16, "0"));
    expect((await forkAt(MAX_APPEND_BYTES + 1)).status).toBe(413);
  }, 30_000);
});
