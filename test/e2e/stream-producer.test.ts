// The write side of /v1/stream/:name with the protocol's own TypeScript client against
// the real Worker and Durable Object (global-setup.ts): an idempotent producer whose every
// append is sent twice (a retry after a lost answer) leaves each byte once, and a reader
// with the same client sees exactly what was appended; the routes need a credential.
import { DurableStream, IdempotentProducer, stream } from "@durable-streams/client";
import { describe, expect, inject, it } from "vitest";

const apiUrl = inject("apiUrl");
const auth = { Authorization: `Bearer ${inject("apiToken")}` };

/** A fetch that sends every POST twice, as a producer does when an answer is lost, and answers the second. */
const retryingFetch: typeof fetch = async (input, init) => {
  if ((init?.method ?? "GET") !== "POST") return fetch(input, init);
  const first = await fetch(input, init);
  await first.body?.cancel();
  return fetch(input, init);
};

describe("/v1/stream/:name", () => {
  it("a producer that retries every append once leaves every byte once", async () => {
    const url = `${apiUrl}/v1/stream/producer-retry-${Date.now()}`;
    const handle = await DurableStream.create({ url, contentType: "text/plain", headers: auth });
    const producer = new IdempotentProducer(handle, "writer-1", {
      fetch: retryingFetch,
      headers: auth,
      lingerMs: 0,
      maxInFlight: 1,
    });
    const lines = Array.from({ length: 50 }, (_, i) => `append ${i}\n`);
    for (const line of lines) {
      producer.append(line);
      await producer.flush();
    }
    await producer.close();
    const res = await stream({ url, offset: "-1", live: false, headers: auth });
    expect(await res.text()).toBe(lines.join(""));
    const head = await fetch(url, { method: "HEAD", headers: auth });
    expect(head.headers.get("Stream-Closed")).toBe("true");
  }, 60_000);

  it("answers a retried seq 204 with the highest accepted, a gap 409, an older epoch 403", async () => {
    const url = `${apiUrl}/v1/stream/producer-rules-${Date.now()}`;
    const put = await fetch(url, {
      method: "PUT",
      headers: { ...auth, "Content-Type": "text/plain" },
    });
    expect(put.status).toBe(201);
    const append = (epoch: number, seq: number, body: string) =>
      fetch(url, {
        method: "POST",
        headers: {
          ...auth,
          "Content-Type": "text/plain",
          "Producer-Id": "p",
          "Producer-Epoch": String(epoch),
          "Producer-Seq": String(seq),
        },
        body,
      });
    expect((await append(1, 0, "a")).status).toBe(200);
    expect((await append(1, 1, "b")).status).toBe(200);
    const retry = await append(1, 0, "a");
    expect(retry.status).toBe(204);
    expect(retry.headers.get("Producer-Seq")).toBe("1");
    const gap = await append(1, 3, "d");
    expect(gap.status).toBe(409);
    expect(gap.headers.get("Producer-Expected-Seq")).toBe("2");
    expect((await append(0, 2, "c")).status).toBe(403);
    expect((await append(2, 0, "c")).status).toBe(200);
    const read = await fetch(`${url}?offset=-1`, { headers: auth });
    expect(await read.text()).toBe("abc");
  });

  it("refuses every method without a credential, with the stream's security headers", async () => {
    const url = `${apiUrl}/v1/stream/no-credential-${Date.now()}`;
    for (const method of ["PUT", "POST", "GET", "HEAD", "DELETE"]) {
      const res = await fetch(url, { method, headers: { "Content-Type": "text/plain" } });
      expect(res.status, method).toBe(401);
      expect(res.headers.get("X-Content-Type-Options"), method).toBe("nosniff");
    }
  });
});
