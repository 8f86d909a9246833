// Blocks its worker in a system call: no timer of Vitest's can run, so no timeout fires.
import { test } from "vitest";

test("waits on a lock nobody releases", async () => {
  // Long enough for the worker to have told Vitest which test runs.
  await new Promise((resolve) => setTimeout(resolve, 1000));
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
});
