// Output pipes made ahead (16 by one mkfifo) and, when none is ready, one at a time:
// every pipe is its own, whichever way it was made.
import { closeSync, read, writeSync } from "node:fs";
import { expect, it } from "vitest";
import { openOutputPipe, prepareOutputPipes } from "../../../../sandbox/exec/output-pipe.ts";

it("pipes taken faster than they are made ahead, and after a refill, each carry only their own bytes", async () => {
  const pipes = [];
  // More than a batch at once: the ready ones run out and the rest are made on the spot.
  for (let i = 0; i < 40; i++) pipes.push(openOutputPipe());
  prepareOutputPipes();
  await new Promise((resolve) => setTimeout(resolve, 300));
  for (let i = 0; i < 20; i++) pipes.push(openOutputPipe());
  for (const [i, pipe] of pipes.entries()) writeSync(pipe.writeFd, `pipe ${i}\n`);
  for (const [i, pipe] of pipes.entries()) {
    const buf = Buffer.alloc(64);
    // Off the event loop: were two pipes one, a read of an empty one fails by timeout.
    const n = await new Promise<number>((resolve, reject) =>
      read(pipe.readFd, buf, 0, buf.length, null, (err, bytes) =>
        err ? reject(err) : resolve(bytes),
      ),
    );
    expect(buf.subarray(0, n).toString()).toBe(`pipe ${i}\n`);
    closeSync(pipe.writeFd);
    closeSync(pipe.readFd);
  }
  expect(new Set(pipes.map((p) => p.readFd)).size).toBe(60);
});
