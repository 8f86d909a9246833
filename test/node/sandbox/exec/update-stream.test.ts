import { describe, expect, it } from "vitest";
import { SourceView } from "../../../../sandbox/exec/source-view.ts";
import { execUpdateStream, type StreamedRun } from "../../../../sandbox/exec/update-stream.ts";
import type { ExitUpdate, ShellUpdate } from "../../../../src/execenv/index.ts";
import { FakeClock } from "../../../support/fake-clock.ts";
import { applyUpdate, type Folded } from "../harness.ts";

/** A run driven by the test: text goes into a real SourceView. */
class ScriptedRun implements StreamedRun {
  exit: ExitUpdate | null = null;
  queuedAhead: number | null = null;
  private readonly view = new SourceView({ retain: "tail", maxBytes: 1000, maxLines: 20 });
  private readonly listeners = new Set<() => void>();
  private readonly inputListeners = new Set<() => void>();

  get text() {
    return this.view.text;
  }
  get viewPosition() {
    return this.view.position;
  }
  get metadata() {
    return this.view.truncation();
  }
  subscribe(listener: () => void) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  onInput(listener: () => void) {
    this.inputListeners.add(listener);
    return () => this.inputListeners.delete(listener);
  }
  /** A key typed: its echo follows. */
  type() {
    for (const l of [...this.inputListeners]) l();
  }
  print(text: string) {
    this.view.push(new TextEncoder().encode(text));
    for (const l of [...this.listeners]) l();
  }
  end(exitCode: number) {
    this.exit = { kind: "exit", exitCode };
    for (const l of [...this.listeners]) l();
  }
}

const decoder = new TextDecoder();
async function readUpdate(
  reader: ReadableStreamDefaultReader<Uint8Array>,
): Promise<ShellUpdate | null> {
  const { done, value } = await reader.read();
  return done ? null : (JSON.parse(decoder.decode(value)) as ShellUpdate);
}

describe("execUpdateStream", () => {
  it("computes nothing for a consumer that is not reading; its next read gets one coalesced delta", async () => {
    const clock = new FakeClock();
    const run = new ScriptedRun();
    const stream = execUpdateStream(run, {
      minIntervalMs: 100,
      targetBytesPerSecond: 102400,
      clock,
    });
    const reader = stream.getReader();
    const folded: Folded = { updates: [], text: "", metadata: null, exit: null };
    const base = await readUpdate(reader);
    expect(base?.kind).toBe("replace");
    applyUpdate(folded, base!);
    // The consumer stalls while the command prints 10,000 lines over 100 s of fake time.
    for (let i = 1; i <= 10_000; i++) {
      run.print(`line ${i}\n`);
      if (i % 100 === 0) clock.advance(1000);
    }
    // Nothing queued behind the stalled consumer: its next read is one delta to the current
    // view, and after the exit only the exit follows.
    const next = await readUpdate(reader);
    applyUpdate(folded, next!);
    expect(folded.text).toBe(run.text);
    expect(folded.metadata).toMatchObject({ totalLines: 10_000, outputLines: 20 });
    run.end(0);
    const rest: ShellUpdate[] = [];
    for (let u = await readUpdate(reader); u; u = await readUpdate(reader)) rest.push(u);
    expect(rest).toEqual([{ kind: "exit", exitCode: 0 }]);
  });

  it("paces a reading consumer: changes inside the interval collapse into the trailing update", async () => {
    const clock = new FakeClock();
    const run = new ScriptedRun();
    const reader = execUpdateStream(run, {
      minIntervalMs: 100,
      targetBytesPerSecond: 102400,
      clock,
    }).getReader();
    const folded: Folded = { updates: [], text: "", metadata: null, exit: null };
    applyUpdate(folded, (await readUpdate(reader))!);
    clock.advance(100);
    const first = readUpdate(reader);
    run.print("a\n");
    applyUpdate(folded, (await first)!);
    expect(folded.text).toBe("a\n");
    const trailing = readUpdate(reader);
    run.print("b\n");
    run.print("c\n");
    clock.advance(99);
    run.print("d\n");
    clock.advance(1);
    expect(await trailing).toMatchObject({ kind: "append", text: "b\nc\nd\n" });
  });

  it("sends a key's echo at once, inside the interval; output after it is paced again", async () => {
    const clock = new FakeClock();
    const run = new ScriptedRun();
    const reader = execUpdateStream(run, {
      minIntervalMs: 100,
      targetBytesPerSecond: 102400,
      clock,
    }).getReader();
    await readUpdate(reader);
    clock.advance(100);
    const first = readUpdate(reader);
    run.print("$ ");
    await first;
    clock.advance(10);
    // 10 ms after the last update: the echo does not wait for the 100 ms deadline.
    const echo = readUpdate(reader);
    run.type();
    run.print("l");
    expect(await echo).toMatchObject({ kind: "append", text: "l" });
    const paced = readUpdate(reader);
    run.print("s");
    let got: ShellUpdate | null = null;
    void paced.then((u) => {
      got = u;
    });
    await Promise.resolve();
    expect(got).toBeNull();
    clock.advance(100);
    expect(await paced).toMatchObject({ kind: "append", text: "s" });
  });
});
