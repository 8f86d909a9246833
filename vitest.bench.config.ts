// Benchmarks that must run against the real InvocationDO (workerd, real SQLite storage).
// Not part of `npm test`: run with `npm run bench:do`. See BENCHMARKS.md (DO section).
import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

export default defineConfig({
  plugins: [cloudflareTest({ wrangler: { configPath: "./wrangler.toml" } })],
  test: {
    name: "bench-do",
    include: ["bench/do/**/*.bench.test.ts"],
    testTimeout: 300_000,
  },
});
