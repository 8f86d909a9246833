import { createServer } from "node:net";
import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

/**
 * Distinct free loopback ports, for hosts that a project's bindings must name up front.
 * All are held until every one is chosen, so the OS cannot hand the same one out twice.
 */
async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<ReturnType<typeof createServer>>((resolve, reject) => {
          const server = createServer();
          server.once("error", reject);
          server.listen(0, "127.0.0.1", () => resolve(server));
        }),
    ),
  );
  const ports = servers.map((server) => (server.address() as { port: number }).port);
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  return ports;
}

// The DO tests that need a real sandbox host (bash reattaching after a crash) run in
// their own project, bound to hosts that test/workers/durable-objects/sandbox's global setup starts:
// "default" (in process), "mortal" (a child process a test kills), "crowded" (in process,
// 2 commands at once and 2 in line: the queue's test) and "down" (port 1 on loopback,
// where nothing listens: binding it needs root).
const [sandboxPort, mortalPort, crowdedPort] = await freePorts(3);
process.env.TOOLWIRE_DO_SANDBOX_PORT ??= String(sandboxPort);
process.env.TOOLWIRE_DO_MORTAL_PORT ??= String(mortalPort);
process.env.TOOLWIRE_DO_CROWDED_PORT ??= String(crowdedPort);
process.env.TOOLWIRE_DO_SANDBOX_TOKEN ??= "do-test-sandbox-token-0123456789";

export default defineConfig({
  test: {
    // A file that stops making progress is named, and a stuck one ends the run (decision 256).
    reporters: ["default", "./test/support/stalled-file-reporter.ts"],
    projects: [
      {
        test: {
          name: "node",
          include: ["test/node/**/*.test.ts", "test/support/**/*.test.ts"],
          environment: "node",
          // A cap, not a speed check: the e2e half runs beside this one (scripts/test.ts).
          testTimeout: 30_000,
        },
      },
      {
        plugins: [
          cloudflareTest({
            wrangler: { configPath: "./wrangler.toml" },
            // Production's app with the DO class bound to its test subclass (decision 093).
            main: "./test/workers/test-entry.ts",
            miniflare: {
              // Test-only secrets, every one set here so that a developer's .dev.vars
              // never changes what the tests see; web_fetch tests fetch from a local server.
              bindings: {
                API_TOKEN: "test-api-token",
                SUBSCRIBE_SECRET: "test-subscribe-secret",
                SANDBOX_TOKEN: "test-sandbox-token-unused",
                WEB_FETCH_ALLOW_PRIVATE: "1",
                // The tests use the example tools as fixtures (decision 272).
                EXAMPLE_TOOLS: "1",
              },
            },
          }),
        ],
        test: {
          name: "workers",
          testTimeout: 30_000,
          include: ["test/workers/**/*.test.ts"],
          exclude: ["test/workers/durable-objects/sandbox/**"],
          globalSetup: ["test/workers/tools/web-server.global-setup.ts"],
        },
      },
      {
        plugins: [
          cloudflareTest({
            wrangler: { configPath: "./wrangler.toml" },
            // Production's app with the DO class bound to its test subclass (decision 093).
            main: "./test/workers/test-entry.ts",
            miniflare: {
              bindings: {
                SANDBOXES: JSON.stringify({
                  default: `http://127.0.0.1:${process.env.TOOLWIRE_DO_SANDBOX_PORT}`,
                  mortal: `http://127.0.0.1:${process.env.TOOLWIRE_DO_MORTAL_PORT}`,
                  crowded: `http://127.0.0.1:${process.env.TOOLWIRE_DO_CROWDED_PORT}`,
                  down: "http://127.0.0.1:1",
                }),
                SANDBOX_TOKEN: process.env.TOOLWIRE_DO_SANDBOX_TOKEN,
                API_TOKEN: "test-api-token",
                SUBSCRIBE_SECRET: "test-subscribe-secret",
                EXAMPLE_TOOLS: "1",
                // Short enough for the idle-timeout test to see a deadline pass.
                EXTERNAL_IDLE_TIMEOUT_SECONDS: "2",
                SANDBOX_REJOIN_SECONDS: "2",
                // The DO lets go of a bash stream every second, so evictions come quickly.
                SANDBOX_STREAM_WINDOW_SECONDS: "1",
              },
            },
          }),
        ],
        test: {
          name: "workers-sandbox",
          testTimeout: 30_000,
          include: ["test/workers/durable-objects/sandbox/**/*.test.ts"],
          globalSetup: ["test/workers/durable-objects/sandbox/sandbox-host.global-setup.ts"],
        },
      },
      {
        // The container backend against real local containers (docs/sandboxes.md); every
        // test skips, saying why, where Docker is missing.
        test: {
          name: "containers",
          include: ["test/containers/**/*.test.ts"],
          environment: "node",
          globalSetup: ["test/containers/global-setup.ts"],
          fileParallelism: false,
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
      {
        test: {
          name: "e2e",
          include: ["test/e2e/**/*.test.ts"],
          environment: "node",
          globalSetup: ["test/e2e/global-setup.ts"],
          fileParallelism: false,
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
