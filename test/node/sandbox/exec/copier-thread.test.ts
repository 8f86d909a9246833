// The copier thread's totals are the bytes it put in the file, whichever way it ends.
// Real threads and real pipes: the "file" is a pipe here, so that a test can hold the
// thread inside a write (a full pipe blocks it) and stop it there.
import { closeSync, openSync, read, readdirSync, readFileSync, writeSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { CopierThread, type CopyEnd } from "../../../../sandbox/exec/copier-thread.ts";
import { openOutputPipe } from "../../../../sandbox/exec/output-pipe.ts";

const PIPE_CAPACITY = 65_536;
const open: number[] = [];
afterEach(() => {
  for (const fd of open.splice(0)) {
    try {
      closeSync(fd);
    } catch {}
  }
});

/** A pipe whose write end the test owns (the copier's output pipe is another). */
function pipe(): { readFd: number; writeFd: number } {
  const p = openOutputPipe();
  open.push(p.writeFd);
  return p;
}

function copy(readFd: number, spillFd: number, maxBytes = 1 << 30): Promise<CopyEnd> {
  return new Promise((resolve) =>
    CopierThread.acquire().run({ readFd, spillFd, maxBytes }, resolve),
  );
}

/**
 * Reads exactly `n` bytes from a blocking descriptor, off the event loop: were the bytes
 * never to come, the test's timeout still fires (a readSync would block the worker for
 * good, where no timeout can reach it).
 */
async function readExactly(fd: number, n: number): Promise<Buffer> {
  const out = Buffer.alloc(n);
  for (let got = 0; got < n; ) {
    got += await new Promise<number>((resolve, reject) =>
      read(fd, out, got, n - got, null, (err, bytes) => (err ? reject(err) : resolve(bytes))),
    );
  }
  return out;
}

/** Resolves once a thread of this process is blocked writing to a full pipe. */
async function untilAThreadWaitsInPipeWrite(): Promise<void> {
  await expect
    .poll(
      () =>
        readdirSync("/proc/self/task").some((tid) => {
          try {
            // "pipe_write", or "anon_pipe_write" on newer kernels.
            return readFileSync(`/proc/self/task/${tid}/wchan`, "utf8").endsWith("pipe_write");
          } catch {
            return false;
          }
        }),
      { timeout: 10_000, interval: 20 },
    )
    .toBe(true);
}

describe("copier thread totals", () => {
  it("a stop while the thread is amid a write reports the bytes that write put in the file", async () => {
    const output = pipe();
    const spill = pipe();
    // The "spill" pipe full: the thread's next write blocks until the test reads.
    writeSync(spill.writeFd, Buffer.alloc(PIPE_CAPACITY, "f"));
    const thread = CopierThread.acquire();
    const ended = new Promise<CopyEnd>((resolve) => {
      thread.run({ readFd: output.readFd, spillFd: spill.writeFd, maxBytes: 1 << 30 }, resolve);
    });
    writeSync(output.writeFd, Buffer.alloc(1000, "x"));
    // The thread has read the 1,000 bytes and is blocked writing them: stop it there.
    await untilAThreadWaitsInPipeWrite();
    thread.stop();
    const full = await readExactly(spill.readFd, PIPE_CAPACITY);
    expect(full.toString()).toBe("f".repeat(PIPE_CAPACITY));
    const copied = await readExactly(spill.readFd, 1000);
    expect(copied.toString()).toBe("x".repeat(1000));
    const end = await ended;
    // Before, the stop was told at once with the totals of before the write: 0 bytes.
    expect(end.totals).toEqual({ bytes: 1000, newlines: 0 });
    closeSync(spill.readFd);
  });

  it("a full disk (ENOSPC) ends the copy as disk-full with totals of what was written", async () => {
    const output = pipe();
    const full = openSync("/dev/full", "w");
    open.push(full);
    const ended = copy(output.readFd, full);
    writeSync(output.writeFd, "a line\n");
    expect(await ended).toEqual({ reason: "disk-full", totals: { bytes: 0, newlines: 0 } });
  });

  it("at the cap, just under and just over, the totals are what the file holds", async () => {
    for (const [printed, cap, bytes, reason] of [
      [10, 10, 10, "eof"],
      [9, 10, 9, "eof"],
      [11, 10, 10, "cap"],
    ] as const) {
      const output = pipe();
      const spill = pipe();
      const ended = copy(output.readFd, spill.writeFd, cap);
      writeSync(output.writeFd, "\n".repeat(printed));
      closeSync(output.writeFd);
      open.splice(open.indexOf(output.writeFd), 1);
      const end = await ended;
      expect(end).toEqual({ reason, totals: { bytes, newlines: bytes } });
      expect((await readExactly(spill.readFd, bytes)).toString()).toBe("\n".repeat(bytes));
      closeSync(spill.readFd);
    }
  });
});
