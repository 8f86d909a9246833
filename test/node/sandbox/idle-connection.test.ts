// The Worker pools its connections to a sandbox host. Node closes an idle connection
// after 5 s by default, and a request the Worker sent on one the host was closing was
// lost ("Network connection lost": 131 of 155 accepted calls at 250 at once, issue 30).
// The host keeps an idle connection well past that (sandbox/server.ts).
import { connect } from "node:net";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startTestHost, type TestHost } from "./harness.ts";

let host: TestHost;
beforeAll(async () => {
  host = await startTestHost();
});
afterAll(() => host.close());

it("a kept-alive connection idle for longer than Node's 5 s still answers its next request", async () => {
  const { hostname, port } = new URL(host.url);
  const socket = connect(Number(port), hostname);
  let received = "";
  let closedAt: number | null = null;
  socket.setEncoding("utf8");
  socket.on("data", (chunk: string) => {
    received += chunk;
  });
  socket.on("close", () => {
    closedAt = Date.now();
  });
  const ask = () =>
    socket.write(`GET /healthz HTTP/1.1\r\nHost: ${hostname}\r\nConnection: keep-alive\r\n\r\n`);
  const answers = () => received.split("HTTP/1.1 200 OK").length - 1;
  await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
  ask();
  await expect.poll(answers).toBe(1);
  await new Promise((resolve) => setTimeout(resolve, 6500));
  expect(closedAt).toBeNull();
  ask();
  await expect.poll(answers).toBe(2);
  socket.destroy();
}, 20_000);
