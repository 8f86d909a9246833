// fetchIdempotent against a real HTTP server that drops connections or answers 503.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { fetchIdempotent } from "../../../src/execenv/index.ts";

let server: Server | null = null;
afterEach(
  () => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())),
);

/** A server whose first `failures` requests get `fail` (a reset, or a status); then 200 "ok". */
async function flaky(
  failures: number,
  fail: "reset" | 503 | 404,
): Promise<{ url: string; hits: () => number }> {
  let hits = 0;
  server = createServer((req, res) => {
    hits++;
    if (hits <= failures) {
      if (fail === "reset") return req.socket.destroy();
      res.writeHead(fail, { "retry-after": "0", "content-type": "application/json" });
      return res.end('{"error":{"code":"busy","message":"busy"}}');
    }
    res.end("ok");
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/`, hits: () => hits };
}

describe("fetchIdempotent", () => {
  it("a dropped connection is retried until the host answers", async () => {
    const host = await flaky(3, "reset");
    const res = await fetchIdempotent(fetch, host.url, {});
    expect([res.status, await res.text(), host.hits()]).toEqual([200, "ok", 4]);
  });

  it("a 503 is retried, as Retry-After says", async () => {
    const host = await flaky(4, 503);
    const res = await fetchIdempotent(fetch, host.url, {});
    expect([res.status, await res.text(), host.hits()]).toEqual([200, "ok", 5]);
  });

  it("five attempts at most: then the last failure is the caller's, as it was", async () => {
    const dropped = await flaky(5, "reset");
    await expect(fetchIdempotent(fetch, dropped.url, {})).rejects.toThrow();
    expect(dropped.hits()).toBe(5);
    server?.close();
    const busy = await flaky(5, 503);
    const res = await fetchIdempotent(fetch, busy.url, {});
    expect([res.status, busy.hits()]).toEqual([503, 5]);
  });

  it("an answer that is not transient (404) is returned at once", async () => {
    const host = await flaky(1, 404);
    const res = await fetchIdempotent(fetch, host.url, {});
    expect([res.status, host.hits()]).toEqual([404, 1]);
  });
});
