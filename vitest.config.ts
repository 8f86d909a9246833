import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "node",
          include: ["test/node/**/*.test.ts"],
          environment: "node",
        },
      },
      {
        plugins: [
          cloudflareTest({
            wrangler: { configPath: "./wrangler.toml" },
            miniflare: {
              // Test-only secrets; web_fetch tests fetch from a local server.
              bindings: {
                API_TOKEN: "test-api-token",
                SUBSCRIBE_SECRET: "test-subscribe-secret",
                WEB_FETCH_ALLOW_PRIVATE: "1",
              },
            },
          }),
        ],
        test: {
          name: "workers",
          include: ["test/worker/**/*.test.ts"],
          globalSetup: ["test/worker/api/web-server.global-setup.ts"],
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
