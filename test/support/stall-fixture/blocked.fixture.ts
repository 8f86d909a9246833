// Blocks its worker in a system call: no timer of Vitest's can run, so no timeout fires.
import { test } from "vitest";

test("waits on a lock nobody releases", async () => {
  // Long enough for the worker to have told Vitest which test runs: its reports go out
  // in batches, and once it blocks nothing more leaves it (1 s was too short under CI's
  // load, and 3 s once, in a full `npm test` on two loaded cores). The run stalls at 15 s
  // (TOOLWIRE_STALL_MS in the test): under a full `npm test` the worker itself took over
  // 4 s to start.
  await new Promise((resolve) => setTimeout(resolve, 6000));
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
});
