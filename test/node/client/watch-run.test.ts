import { describe, expect, it } from "vitest";
import { parseArgs, UsageError } from "../../../src/client/cli/parse-args.ts";
import { describeCall } from "../../../src/client/cli/watch-run.ts";
import type { RunCall } from "../../../src/core/events/run-call.ts";

describe("toolwire watch --run", () => {
  it("parses a run id, with connection options anywhere", () => {
    expect(parseArgs(["watch", "--run", "run-7"]).command).toEqual({
      kind: "watchRun",
      runId: "run-7",
    });
    const parsed = parseArgs(["watch", "--run=run 8", "--url", "http://x.test"]);
    expect(parsed.command).toEqual({ kind: "watchRun", runId: "run 8" });
    expect(parsed.connection.url).toBe("http://x.test");
  });

  it("refuses --run without a value, or with an invocation id too", () => {
    expect(() => parseArgs(["watch", "--run"])).toThrow(UsageError);
    expect(() => parseArgs(["watch", "--run"])).toThrow(/--run needs a value/);
    expect(() => parseArgs(["watch", "call_1", "--run", "r"])).toThrow(/not both/);
  });

  it("prints a running call with its args and a settled one with its totals", () => {
    const call: RunCall = {
      toolCallId: "call_1",
      turnId: "t",
      tool: "bash",
      summary: "npm test",
      status: "running",
      createdAt: 1_000,
      settledAt: null,
      totalLines: 0,
      totalBytes: 0,
    };
    expect(describeCall(call)).toBe("running    bash      call_1  npm test");
    expect(
      describeCall({ ...call, status: "error", settledAt: 2_250, totalLines: 1, totalBytes: 2048 }),
    ).toBe("error      bash      call_1  1 line, 2 KB, 1.3 s  npm test");
  });
});
