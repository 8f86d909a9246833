// A run of one file that never ends, for the stalled-file reporter's own test.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    name: "stall-fixture",
    root: import.meta.dirname,
    include: ["blocked.fixture.ts"],
    reporters: ["default", `${import.meta.dirname}/../stalled-file-reporter.ts`],
  },
});
