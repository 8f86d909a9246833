// The Durable Streams conformance suite (@durable-streams/server-conformance-tests) as a
// vitest run of its own: its test file lives in node_modules, which vitest excludes
// unless a config names it. test/e2e/streams-conformance.test.ts runs this config with
// CONFORMANCE_TEST_URL set to a bearer proxy in front of a local Worker.
import path from "node:path";
import { defineConfig } from "vitest/config";

const ROOT = path.resolve(import.meta.dirname, "../../..");

export default defineConfig({
  test: {
    root: ROOT,
    include: ["node_modules/@durable-streams/server-conformance-tests/dist/test-runner.js"],
    exclude: [],
    testTimeout: 30_000,
  },
});
