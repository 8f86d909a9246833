// Forks of /v1/stream/:name in the Workers runtime (decisions 204, 205): a fork inside
// one append (bytes) or one JSON batch (messages), chained; a source deleted while its
// forks live is held (410, its name 409) and freed with its last fork, through a chain;
// the reference server's zero offset read as the start. Both ends keep what they know in
// SQLite: an eviction changes nothing.
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { MIGRATIONS, migrate } from "../../../durable-objects/invocation/output/schema.ts";
import { call, freshId } from "./helpers.ts";

const ZERO = "0000000000000000_0000000000000000";

async function put(path: string, headers: Record<string, string>, body?: string) {
  return call(path, { method: "PUT", headers, ...(body !== undefined ? { body } : {}) });
}

async function stream(prefix: string, contentType: string, body?: string): Promise<string> {
  const path = `/v1/stream/${freshId(prefix)}`;
  expect((await put(path, { "Content-Type": contentType }, body)).status).toBe(201);
  return path;
}

const append = (path: string, contentType: string, body: string) =>
  call(path, { method: "POST", headers: { "Content-Type": contentType }, body });

const fork = (source: string, offset?: string, sub?: string) => ({
  "Stream-Forked-From": source,
  ...(offset !== undefined ? { "Stream-Fork-Offset": offset } : {}),
  ...(sub !== undefined ? { "Stream-Fork-Sub-Offset": sub } : {}),
});

const read = async (path: string) => (await call(`${path}?offset=-1`)).text();
const status = async (path: string, method = "HEAD") => (await call(path, { method })).status;

describe("a fork inside an append", () => {
  it("takes that many bytes of the append at the offset, as an append of its own", async () => {
    const source = await stream("sub-bin", "text/plain", "first");
    const anchor = (await call(source, { method: "HEAD" })).headers.get("Stream-Next-Offset") ?? "";
    await append(source, "text/plain", "second");
    const forked = `/v1/stream/${freshId("sub-bin-fork")}`;
    const made = await put(forked, fork(source, anchor, "3"), "!");
    expect(made.status).toBe(201);
    expect(made.headers.get("Stream-Next-Offset")).toBe("0000000000000009");
    expect(await read(forked)).toBe("firstsec!");
    // Chained: the fork's "sec" is one append, so a fork of the fork can cut inside it.
    const chained = `/v1/stream/${freshId("sub-bin-chain")}`;
    expect((await put(chained, fork(forked, anchor, "2"))).status).toBe(201);
    expect(await read(chained)).toBe("firstse");
  });

  it("takes that many messages of the JSON batch at the offset, and refuses more than it has", async () => {
    const source = await stream("sub-json", "application/json", '[{"a":1},{"b":2},{"c":3}]');
    const forked = `/v1/stream/${freshId("sub-json-fork")}`;
    expect((await put(forked, fork(source, ZERO, "2"))).status).toBe(201);
    expect(await (await call(`${forked}?offset=-1`)).json()).toEqual([{ a: 1 }, { b: 2 }]);
    const over = await put(`/v1/stream/${freshId("sub-json-over")}`, fork(source, ZERO, "4"));
    expect(over.status).toBe(400);
    expect(await over.text()).toMatch(/past the 3 messages/);
  });

  it("counts within one append: past its end is a 400 even when later appends follow", async () => {
    const source = await stream("sub-bounded", "text/plain", "ab");
    await append(source, "text/plain", "cd");
    const res = await put(`/v1/stream/${freshId("sub-bounded-fork")}`, fork(source, ZERO, "3"));
    expect(res.status).toBe(400);
    expect(await res.text()).toMatch(/past the 2 bytes/);
  });

  it("re-made with the same sub-offset is 200, with another 409; malformed or without an offset 400", async () => {
    const source = await stream("sub-again", "text/plain", "hello");
    const forked = `/v1/stream/${freshId("sub-again-fork")}`;
    const headers = { "Content-Type": "text/plain", ...fork(source, ZERO, "2") };
    expect((await put(forked, headers)).status).toBe(201);
    expect((await put(forked, headers)).status).toBe(200);
    expect((await put(forked, { ...headers, "Stream-Fork-Sub-Offset": "3" })).status).toBe(409);
    expect((await put(forked, { "Content-Type": "text/plain" })).status).toBe(409);
    const other = `/v1/stream/${freshId("sub-again-bad")}`;
    for (const bad of ["-1", "05", "1.5", "x"]) {
      expect((await put(other, fork(source, ZERO, bad))).status).toBe(400);
    }
    expect((await put(other, fork(source, undefined, "1"))).status).toBe(400);
    expect((await put(other, { "Stream-Fork-Sub-Offset": "0" })).status).toBe(400);
    expect(await status(other)).toBe(404);
  });
});

describe("deleting a stream that has forks", () => {
  it("holds the source (410, its name and forks of it 409) while the fork reads, and frees it with the fork", async () => {
    const source = await stream("soft-src", "text/plain", "kept");
    const forked = `/v1/stream/${freshId("soft-fork")}`;
    expect((await put(forked, fork(source))).status).toBe(201);
    expect(await status(source, "DELETE")).toBe(204);
    expect(await status(source)).toBe(410);
    expect(await status(`${source}?offset=-1`, "GET")).toBe(410);
    expect((await append(source, "text/plain", "more")).status).toBe(410);
    expect(await status(source, "DELETE")).toBe(410);
    expect((await put(source, { "Content-Type": "text/plain" })).status).toBe(409);
    expect((await put(`/v1/stream/${freshId("soft-refork")}`, fork(source))).status).toBe(409);
    expect(await read(forked)).toBe("kept");
    expect(await status(forked, "DELETE")).toBe(204);
    expect(await status(source)).toBe(404);
    expect((await put(source, { "Content-Type": "text/plain" })).status).toBe(201);
  });

  it("frees a chain of three from its last link, and deleting the middle keeps every copy", async () => {
    const root = await stream("chain-0", "text/plain", "A");
    const middle = `/v1/stream/${freshId("chain-1")}`;
    const leaf = `/v1/stream/${freshId("chain-2")}`;
    await put(middle, fork(root));
    await append(middle, "text/plain", "B");
    await put(leaf, fork(middle));
    await append(leaf, "text/plain", "C");
    expect(await status(middle, "DELETE")).toBe(204);
    expect(await read(leaf)).toBe("ABC");
    expect(await read(root)).toBe("A");
    expect(await status(root, "DELETE")).toBe(204);
    expect([await status(root), await status(middle)]).toEqual([410, 410]);
    expect(await status(leaf, "DELETE")).toBe(204);
    expect([await status(leaf), await status(middle), await status(root)]).toEqual([404, 404, 404]);
  });

  it("a held source and its fork remember each other across evictions", async () => {
    const source = await stream("evict-src", "text/plain", "x");
    const forkName = freshId("evict-fork");
    const forked = `/v1/stream/${forkName}`;
    await put(forked, fork(source));
    expect(await status(source, "DELETE")).toBe(204);
    const sourceName = source.slice("/v1/stream/".length);
    await evictDurableObject(env.INVOCATIONS.getByName(sourceName));
    await evictDurableObject(env.INVOCATIONS.getByName(forkName));
    expect(await status(source)).toBe(410);
    expect(await status(forked, "DELETE")).toBe(204);
    expect(await status(source)).toBe(404);
  });

  it("a held source whose last fork expired unnoticed is freed at its next request", async () => {
    const source = await stream("expired-fork-src", "text/plain", "x");
    const forked = `/v1/stream/${freshId("expired-fork")}`;
    expect((await put(forked, { ...fork(source), "Stream-TTL": "1" })).status).toBe(201);
    expect(await status(source, "DELETE")).toBe(204);
    expect(await status(source)).toBe(410);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect(await status(source)).toBe(404);
    expect((await put(source, { "Content-Type": "text/plain" })).status).toBe(201);
  });

  it("a source whose forks were all deleted first is deleted outright", async () => {
    const source = await stream("forks-gone", "text/plain", "x");
    const forked = `/v1/stream/${freshId("forks-gone-fork")}`;
    await put(forked, fork(source));
    expect(await status(forked, "DELETE")).toBe(204);
    expect(await status(source, "DELETE")).toBe(204);
    expect(await status(source)).toBe(404);
  });
});

describe("the reference server's zero offset", () => {
  it("is the start, for a read and a fork; any other offset of its form is a 400", async () => {
    const source = await stream("zero", "text/plain", "abc");
    expect(await (await call(`${source}?offset=${ZERO}`)).text()).toBe("abc");
    const forked = `/v1/stream/${freshId("zero-fork")}`;
    expect((await put(forked, fork(source, ZERO))).status).toBe(201);
    expect(await read(forked)).toBe("");
    expect((await call(`${source}?offset=0000000000000000_0000000000000001`)).status).toBe(400);
  });
});

describe("a stream stored before rows knew their append (migration 5)", () => {
  it("takes each stored row as an append of its own, and forks inside one", async () => {
    const name = freshId("before-5");
    const stub = env.INVOCATIONS.getByName(name);
    await runInDurableObject(stub, (_instance, state) => {
      const sql = state.storage.sql;
      // The stream tables as migration 4 made them, holding two appends.
      sql.exec("DROP TABLE stream_meta; DROP TABLE stream_data; DROP TABLE stream_producers;");
      sql.exec("DROP TABLE stream_forks");
      // And none of the later migrations' tables (6: what people typed, decision 191).
      sql.exec("DROP TABLE typed_inputs; DROP TABLE typed_reads;");
      sql.exec(MIGRATIONS[3] as string);
      sql.exec("UPDATE schema_version SET version = 4");
      sql.exec(
        "INSERT INTO stream_meta (id, content_type, closed, tail, generation, touched_at) VALUES (1, 'text/plain', 0, 9, 'g0', ?)",
        Date.now(),
      );
      const bytes = (text: string) => new TextEncoder().encode(text);
      sql.exec(
        "INSERT INTO stream_data (start, data) VALUES (0, ?), (5, ?)",
        bytes("hello"),
        bytes("abcd"),
      );
      migrate(state.storage);
    });
    await evictDurableObject(stub);
    const source = `/v1/stream/${name}`;
    expect(await read(source)).toBe("helloabcd");
    const forked = `/v1/stream/${freshId("before-5-fork")}`;
    expect((await put(forked, fork(source, "0000000000000005", "2"))).status).toBe(201);
    expect(await read(forked)).toBe("helloab");
    const past = await put(`/v1/stream/${freshId("before-5-past")}`, fork(source, ZERO, "6"));
    expect(past.status).toBe(400);
  });
});
