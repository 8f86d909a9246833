import { execFileSync } from "node:child_process";
import path from "node:path";
import { expect, it } from "vitest";
import { ROOT, startNode } from "../support/processes.ts";

const FIXTURE = path.join(ROOT, "test/support/stall-fixture/vitest.config.ts");

/** The live pids still in process group `group` (a zombie has ended). */
function inGroup(group: number): string[] {
  const table = execFileSync("ps", ["-e", "-o", "pid=,pgid=,stat="], { encoding: "utf8" });
  return table
    .split("\n")
    .map((line) => line.trim().split(/\s+/))
    .filter(([, pgid, stat]) => pgid === String(group) && !stat?.startsWith("Z"))
    .map(([pid]) => pid!);
}

it("a file blocked where no timeout can fire is named, with its test and processes, and the run ends 1", async () => {
  const vitest = path.join(ROOT, "node_modules/vitest/vitest.mjs");
  const run = startNode([vitest, "run", "--config", FIXTURE], { TOOLWIRE_STALL_MS: "15000" });
  const code = await new Promise<number | null>((resolve) => run.child.once("exit", resolve));
  const output = run.log.join("");
  try {
    expect(code).toBe(1);
    expect(output).toContain(
      '[stalled] stall-fixture blocked.fixture.ts at "waits on a lock nobody releases" made no end after',
    );
    expect(output).toContain("[slow] stall-fixture blocked.fixture.ts");
    // The blocked worker is listed under Vitest's pid, waiting on its lock in the kernel.
    expect(output).toMatch(/\[stalled\] processes under Vitest \(pid \d+\):\n/);
    expect(output).toMatch(/\n\s+\d+\s+\d+\s+\S+\s+futex\S*\s+\d+ .*workers\/forks\.js/);
    // The worker is still blocked after Vitest is gone: whoever ran it must end its group.
    expect(inGroup(run.child.pid!).length).toBeGreaterThan(0);
  } finally {
    process.kill(-run.child.pid!, "SIGKILL");
  }
  await expect.poll(() => inGroup(run.child.pid!)).toEqual([]);
});
