// A run of one file that never ends, for the stalled-file reporter's own test.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    name: "stall-fixture",
    root: import.meta.dirname,
    include: ["blocked.fixture.ts"],
    // Past the fixture's wait before it blocks; once blocked, no timer can fire anyway.
    testTimeout: 60_000,
    reporters: ["default", `${import.meta.dirname}/../stalled-file-reporter.ts`],
  },
});
