import { describe, expect, it } from "vitest";
import {
  callEnding,
  wholeOutputCommand,
  withoutModelFooter,
} from "../../../src/client/call-story.ts";
import { readHint, windowFooter } from "../../../src/execenv/bash-window.ts";

const SPILL = "/toolwire/spill/call_1.log";

describe("how a settled call ended, in the words every face uses", () => {
  it("a cancel says cancelled, whatever else its details say", () => {
    const ending = callEnding({
      isError: true,
      cancelled: true,
      details: { exitCode: null, signal: "SIGTERM", stoppedBy: "timeout" },
      args: { timeout: 5 },
    });
    expect(ending).toEqual({ kind: "cancelled", words: "cancelled" });
  });

  it("a timeout and an idle timeout name the limit and its seconds", () => {
    const stopped = (stoppedBy: string, args: object) =>
      callEnding({ isError: true, cancelled: false, details: { stoppedBy }, args }).words;
    expect(stopped("timeout", { timeout: 600 })).toBe("timed out after 600 s (timeout)");
    expect(stopped("idleTimeout", { idleTimeout: 30 })).toBe("timed out after 30 s (idle)");
    expect(stopped("timeout", {})).toBe("timed out (timeout)");
  });

  it("a failed command keeps its own exit status; 0 and out-of-range statuses are not one", () => {
    const failed = (details: object) =>
      callEnding({ isError: true, cancelled: false, details, args: {} });
    expect(failed({ exitCode: 254 })).toEqual({
      kind: "failed",
      words: "failed (exit 254)",
      exitCode: 254,
    });
    expect(failed({ exitCode: 1 }).exitCode).toBe(1);
    expect(failed({ exitCode: 255 }).exitCode).toBe(255);
    expect(failed({ exitCode: 256 }).exitCode).toBeUndefined();
    expect(failed({ exitCode: 0 })).toEqual({ kind: "failed", words: "failed" });
    expect(failed({ exitCode: null, signal: "SIGKILL" }).words).toBe("failed (SIGKILL)");
  });

  it("a call that did not fail is done", () => {
    expect(callEnding({ isError: false, cancelled: false, details: {}, args: {} }).kind).toBe(
      "done",
    );
  });
});

describe("the text people are shown leaves out the model's footer", () => {
  const footer = (total: number, shown: number) =>
    windowFooter(
      { kind: "tail", lines: shown, bytes: 51_200 },
      {
        truncated: true,
        truncatedBy: "lines",
        totalLines: total,
        totalBytes: total * 5,
        outputLines: shown,
        outputBytes: shown * 5,
        maxLines: shown,
        maxBytes: 51_200,
        lastLinePartial: false,
        firstLineExceedsLimit: false,
        spillPath: SPILL,
      },
      null,
    );

  it("cuts the footer bash writes, keeping the output and the error line after it", () => {
    const text = `4\n5\n\n${footer(5, 2)}\nCommand exited with code 254`;
    expect(text).toContain("[To see lines 1–3: read");
    expect(withoutModelFooter(text)).toBe("4\n5\nCommand exited with code 254");
    expect(withoutModelFooter(`4\n5\n\n${footer(5, 2)}`)).toBe("4\n5\n");
  });

  it("leaves a text without a footer as it is, also one that only mentions brackets", () => {
    for (const text of ["", "a\nb\n", "[To see lines 1–3: read x]\n", "x\n[Showing]\ny\nz"]) {
      expect(withoutModelFooter(text)).toBe(text);
    }
  });

  it("the model's footer also says that grep takes the spill path", () => {
    expect(readHint(SPILL, { from: 1, to: 3 })).toBe(
      `[To see lines 1–3: read {"path":"${SPILL}","offset":1,"limit":3}; to search it, grep {"path":"${SPILL}"}]`,
    );
  });

  it("people are told the command that prints the whole output", () => {
    expect(wholeOutputCommand("call_42")).toBe("toolwire output call_42 > call_42.log");
  });
});
