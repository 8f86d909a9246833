// write and edit are invocations like the others: a retried call with the same
// toolCallId answers the stored result and changes nothing again, and concurrent edits
// of one file serialize on the host, so none is lost. Through the real Invocation DO and a
// real sandbox host.
import { describe, expect, it } from "vitest";
import type { SettledResult } from "../../../../src/core/output/types.ts";
import { startRequest, stubFor, value } from "../helpers.ts";

/** Starts (or, with a known toolCallId, re-asks for) a call; true when it was created. */
async function invoke(tool: string, args: unknown, toolCallId: string): Promise<boolean> {
  const started = value(
    await stubFor(toolCallId).start(startRequest(toolCallId, tool, args as never)),
  );
  return started.created;
}

async function settled(id: string): Promise<SettledResult> {
  const poll = value(await stubFor(id).result(30_000));
  if (poll.status !== "settled") throw new Error(`${id} did not settle`);
  return poll.result;
}

function textOf(result: SettledResult): string {
  return result.content.map((c) => (c.type === "text" ? c.text : "")).join("");
}

async function fileText(path: string, id: string): Promise<string> {
  expect(await invoke("read", { path }, id)).toBe(true);
  return textOf(await settled(id));
}

describe("write and edit as invocations", () => {
  it("a retried edit with the same toolCallId answers the stored result and applies once", async () => {
    const created = await invoke(
      "write",
      { path: "once/config.txt", content: "a=1\nb=2\n" },
      "once-write",
    );
    expect(created).toBe(true);
    expect(textOf(await settled("once-write"))).toBe(
      "Successfully wrote 8 bytes (2 lines) to once/config.txt",
    );

    // Applied a second time this edit would fail: "a=1" is gone after the first.
    const edit = { path: "once/config.txt", edits: [{ oldText: "a=1", newText: "a=10" }] };
    expect(await invoke("edit", edit, "once-edit")).toBe(true);
    const first = await settled("once-edit");
    expect(first.isError).toBe(false);
    const retried = await invoke("edit", edit, "once-edit");
    expect(retried).toBe(false);
    const again = await settled("once-edit");
    expect(again).toEqual(first);
    expect(textOf(first)).toContain("Successfully replaced 1 block(s) in once/config.txt.");
    expect(first.details).toEqual({ diff: "-1 a=1\n+1 a=10\n 2 b=2", firstChangedLine: 1 });
    expect(await fileText("once/config.txt", "once-read")).toBe("1\ta=10\n2\tb=2");
  }, 60_000);

  it("the same edit under a new toolCallId is refused, naming why, and changes nothing", async () => {
    await invoke("write", { path: "twice.txt", content: "x\n" }, "twice-write");
    await settled("twice-write");
    const edit = { path: "twice.txt", edits: [{ oldText: "x", newText: "y" }] };
    await invoke("edit", edit, "twice-1");
    expect((await settled("twice-1")).isError).toBe(false);
    await invoke("edit", edit, "twice-2");
    const refused = await settled("twice-2");
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toContain(
      "Could not find the exact text in twice.txt. The old text must match exactly including all whitespace and newlines.",
    );
    expect(await fileText("twice.txt", "twice-read")).toBe("1\ty");
  }, 60_000);

  it("20 parallel edits of different lines of one file all land", async () => {
    const lines = Array.from({ length: 20 }, (_, i) => `line ${i + 1}: old`);
    await invoke("write", { path: "many.txt", content: `${lines.join("\n")}\n` }, "many-write");
    await settled("many-write");
    const edits = lines.map((line, i) =>
      invoke(
        "edit",
        { path: "many.txt", edits: [{ oldText: line, newText: `line ${i + 1}: new` }] },
        `many-${i}`,
      ),
    );
    expect(await Promise.all(edits)).toEqual(lines.map(() => true));
    const results = await Promise.all(lines.map((_, i) => settled(`many-${i}`)));
    expect(results.filter((r) => r.isError).map(textOf)).toEqual([]);
    const expected = lines.map((_, i) => `${i + 1}\tline ${i + 1}: new`).join("\n");
    expect(await fileText("many.txt", "many-read")).toBe(expected);
  }, 120_000);
});
