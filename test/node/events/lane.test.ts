import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { encoder, type WireOp } from "../../../src/core/chord/index.ts";
import {
  createLaneView,
  type HarnessEvent,
  type LaneView,
  reduceLaneSnapshot,
} from "../../../src/core/events/index.ts";
import { ToolOutputSink } from "../../../src/core/output/index.ts";

const ids = { runId: "run", turnId: "turn" };
const start = (toolCallId: string, toolName = "bash"): HarnessEvent => ({
  type: "tool_start",
  ...ids,
  toolCallId,
  toolName,
  args: { command: "ls" },
});
const update = (toolCallId: string, ops: WireOp[]): HarnessEvent => ({
  type: "tool_update",
  ...ids,
  toolCallId,
  ops: JSON.parse(JSON.stringify(ops)),
});
const end = (toolCallId: string, isError = false): HarnessEvent => ({
  type: "tool_end",
  ...ids,
  toolCallId,
  isError,
});

/** One producer stream: a sink and the encoder of this consumer. */
function stream(toolCallId: string) {
  const sink = new ToolOutputSink({ policy: { retain: "tail", maxBytes: 64, maxLines: 4 } });
  const enc = encoder();
  return { sink, next: () => update(toolCallId, enc.encode(sink.flush())) };
}

function fold(events: HarnessEvent[], view: LaneView = createLaneView()): LaneView {
  for (const e of events) reduceLaneSnapshot(view, e);
  return view;
}

describe("reduceLaneSnapshot", () => {
  it("creates a tool on start, folds updates into its state, and ends it", () => {
    const s = stream("c1");
    const events = [start("c1"), s.next()];
    s.sink.write("hello\n");
    events.push(s.next());
    const view = fold(events);
    expect(view.tools.c1).toMatchObject({ toolName: "bash", status: "running", isError: false });
    expect(view.tools.c1?.state).toEqual(s.sink.snapshot());
    reduceLaneSnapshot(view, end("c1", true));
    expect(view.tools.c1).toMatchObject({ status: "error", isError: true });
    expect(view.needsBase).toEqual([]);
  });

  it("keeps the state when tool_start comes again (a reconnect)", () => {
    const s = stream("c1");
    s.sink.write("kept");
    const view = fold([start("c1"), s.next(), start("c1")]);
    expect(view.tools.c1?.state?.content[0]).toEqual({ type: "text", text: "kept" });
  });

  it("stays plain JSON", () => {
    const s = stream("c1");
    s.sink.write("x");
    const view = fold([start("c1"), s.next(), end("c1")]);
    expect(JSON.parse(JSON.stringify(view))).toEqual(view);
    expect(structuredClone(view)).toEqual(view);
  });

  it("a delta for a tool with no state asks for a base; the base recovers", () => {
    const s = stream("c1");
    s.next(); // the base, lost
    s.sink.write("a");
    const view = fold([start("c1"), s.next()]);
    expect(view.tools.c1?.state).toBeNull();
    expect(view.needsBase).toEqual(["c1"]);
    s.sink.rebase();
    s.sink.write("b");
    reduceLaneSnapshot(view, s.next());
    expect(view.tools.c1?.state).toEqual(s.sink.snapshot());
    expect(view.needsBase).toEqual([]);
  });

  it("a dropped batch that interned a path is detected, and later deltas wait for the base", () => {
    const s = stream("c1");
    const view = fold([start("c1"), s.next()]);
    s.sink.write("1");
    reduceLaneSnapshot(view, s.next());
    s.sink.write("2");
    s.next(); // second use of the text path: interned here; this event is lost
    const before = structuredClone(view.tools.c1?.state);
    s.sink.write("3");
    reduceLaneSnapshot(view, s.next());
    expect(view.needsBase).toEqual(["c1"]);
    expect(view.tools.c1?.state).toEqual(before);
    s.sink.usage({ input: 1 });
    reduceLaneSnapshot(view, s.next());
    expect(view.tools.c1?.state).toEqual(before);
    s.sink.rebase();
    reduceLaneSnapshot(view, s.next());
    expect(view.tools.c1?.state).toEqual(s.sink.snapshot());
    expect(view.needsBase).toEqual([]);
  });

  it("an update that does not apply leaves the state exactly as it was", () => {
    const s = stream("c1");
    s.sink.write("abc");
    const view = fold([start("c1"), s.next()]);
    const before = structuredClone(view.tools.c1?.state);
    reduceLaneSnapshot(
      view,
      update("c1", [
        ["a", ["content", 0, "text"], "zz"],
        ["t", ["content", 0, "text"], 99],
      ]),
    );
    expect(view.tools.c1?.state).toEqual(before);
    expect(view.needsBase).toEqual(["c1"]);
  });

  it("malformed ops ask for a base; an event without toolCallId throws and changes nothing", () => {
    const view = fold([start("c1")]);
    reduceLaneSnapshot(view, update("c1", [["x", 1]] as unknown as WireOp[]));
    expect(view.needsBase).toEqual(["c1"]);
    const copy = structuredClone(view);
    expect(() => reduceLaneSnapshot(view, { type: "tool_end" } as unknown as HarnessEvent)).toThrow(
      /string toolCallId/,
    );
    expect(view).toEqual(copy);
  });

  it("ignores event types it does not know", () => {
    const view = fold([start("c1")]);
    const copy = structuredClone(view);
    reduceLaneSnapshot(view, {
      type: "tool_progress",
      toolCallId: "c1",
    } as unknown as HarnessEvent);
    expect(view).toEqual(copy);
  });
});

type Action =
  | { tool: number; kind: "write"; text: string }
  | { tool: number; kind: "replace"; text: string }
  | { tool: number; kind: "details"; n: number }
  | { tool: number; kind: "usage"; n: number }
  | { tool: number; kind: "publish" }
  | { tool: number; kind: "rebase" };

const toolIndex = fc.nat(2);
const text = fc
  .array(fc.constantFrom("a", "\n", "é", "😀", "line\n", "xyz"), { maxLength: 8 })
  .map((p) => p.join(""));
const action: fc.Arbitrary<Action> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({ tool: toolIndex, kind: fc.constant("write" as const), text }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ tool: toolIndex, kind: fc.constant("replace" as const), text }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ tool: toolIndex, kind: fc.constant("details" as const), n: fc.nat(9) }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ tool: toolIndex, kind: fc.constant("usage" as const), n: fc.nat(9) }),
  },
  { weight: 4, arbitrary: fc.record({ tool: toolIndex, kind: fc.constant("publish" as const) }) },
  { weight: 1, arbitrary: fc.record({ tool: toolIndex, kind: fc.constant("rebase" as const) }) },
);

describe("reduceLaneSnapshot property", () => {
  it("interleaved events of several tools fold to each sink's snapshot", () => {
    fc.assert(
      fc.property(fc.array(action, { maxLength: 80 }), (actions) => {
        const names = ["t0", "t1", "t2"];
        const streams = names.map((n) => stream(n));
        const view = createLaneView();
        for (const n of names) reduceLaneSnapshot(view, start(n));
        for (const s of streams) reduceLaneSnapshot(view, s.next());
        for (const a of actions) {
          const s = streams[a.tool]!;
          const sink = s.sink as ToolOutputSink<{ n?: number }>;
          if (a.kind === "write") sink.write(a.text);
          else if (a.kind === "replace") sink.replace(a.text);
          else if (a.kind === "details") sink.details.n = a.n;
          else if (a.kind === "usage") sink.usage({ output: a.n });
          else if (a.kind === "rebase") sink.rebase();
          else {
            reduceLaneSnapshot(view, s.next());
            expect(view.tools[names[a.tool]!]?.state).toEqual(sink.snapshot());
          }
        }
        for (const [i, s] of streams.entries()) {
          reduceLaneSnapshot(view, s.next());
          reduceLaneSnapshot(view, end(names[i]!));
          expect(view.tools[names[i]!]?.state).toEqual(s.sink.snapshot());
        }
        expect(view.needsBase).toEqual([]);
      }),
      { seed: 31337, numRuns: 400 },
    );
  });
});
