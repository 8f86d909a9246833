// Blocks its worker in a system call: no timer of Vitest's can run, so no timeout fires.
import { test } from "vitest";

// Vitest sends a test's start in a batch that only a later event is sure to send (its
// throttle can drop the timer that was to send it). The two tests run at once: the short
// one's end sends the blocked one's start, long before the block.
test.concurrent("waits on a lock nobody releases", async () => {
  await new Promise((resolve) => setTimeout(resolve, 6000));
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
});

test.concurrent("ends at once, so the other's start is reported", async () => {
  await new Promise((resolve) => setTimeout(resolve, 500));
});
