import { randomBytes } from "node:crypto";
import { createServer } from "node:net";
import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { TEST_API_TOKEN, toolwireWorker } from "toolwire/testing";
import { defineConfig } from "vitest/config";

/** A free loopback port for the sandbox host, which the Worker's bindings must name up front. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

// test/global-setup.ts starts the sandbox host on this port with this token.
process.env.SANDBOX_HOST_PORT ??= String(await freePort());
process.env.SANDBOX_HOST_TOKEN ??= randomBytes(24).toString("base64url");

export default defineConfig({
  test: {
    projects: [
      {
        // The agent inside the Workers runtime, Toolwire beside it as an auxiliary worker.
        plugins: [
          cloudflareTest({
            main: "./src/agent.ts",
            miniflare: {
              compatibilityDate: "2026-11-01",
              compatibilityFlags: ["nodejs_compat"],
              bindings: { TOOLWIRE_TOKEN: TEST_API_TOKEN },
              serviceBindings: { TOOLWIRE: "toolwire" },
              workers: [
                toolwireWorker({
                  sandboxes: { default: `http://127.0.0.1:${process.env.SANDBOX_HOST_PORT}` },
                  sandboxToken: process.env.SANDBOX_HOST_TOKEN,
                }),
              ],
            },
          }),
        ],
        test: {
          name: "agent",
          include: ["test/agent.test.ts"],
          globalSetup: ["test/global-setup.ts"],
          testTimeout: 60_000,
        },
      },
      {
        // The same Worker in plain Miniflare, from Node.
        test: {
          name: "miniflare",
          include: ["test/plain-miniflare.test.ts"],
          environment: "node",
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});
