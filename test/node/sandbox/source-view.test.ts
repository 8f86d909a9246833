import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SourceView } from "../../../sandbox/exec/source-view.ts";
import { countNewlines } from "../../../sandbox/exec/text-backlog.ts";
import { nextUpdate, type Sent } from "../../../sandbox/exec/update-stream.ts";
import { type OutputPolicy, TextWindow } from "../../../src/output/index.ts";
import { applyUpdate, type Folded } from "./harness.ts";

const piece = fc.oneof(
  fc.constantFrom("\n", "a", "é", "€", "😀", "line\n", "x".repeat(40), "y\n".repeat(20)),
  fc.string({ unit: "grapheme", maxLength: 30 }),
);

const policy = fc.record({
  retain: fc.constantFrom<"head" | "tail">("head", "tail"),
  maxBytes: fc.integer({ min: 0, max: 120 }),
  maxLines: fc.integer({ min: 0, max: 8 }),
});

/** A consumer of the real NDJSON delta logic (`nextUpdate`), folded like the DO folds it. */
class Replica {
  readonly folded: Folded = { updates: [], text: "", metadata: null, exit: null };
  private sent: Sent | null = null;

  catchUp(view: SourceView): void {
    const published = { text: view.text, viewPosition: view.position, metadata: view.truncation() };
    const update = nextUpdate(published, this.sent);
    this.sent = { position: published.viewPosition, metadata: JSON.stringify(published.metadata) };
    if (update) applyUpdate(this.folded, update);
  }

  get text(): string {
    return this.folded.text;
  }
}

describe("SourceView", () => {
  it("reads exactly like a window fed every append, whenever it is read", () => {
    fc.assert(
      fc.property(
        policy,
        fc.array(fc.tuple(piece, fc.boolean()), { maxLength: 60 }),
        (p: OutputPolicy, steps) => {
          const view = new SourceView(p);
          const reference = new TextWindow(p);
          const replica = new Replica();
          for (const [text, read] of steps) {
            view.append(text);
            reference.append(text);
            if (read) {
              expect(view.text).toBe(reference.text);
              expect(view.truncation()).toEqual(reference.truncation());
              replica.catchUp(view);
              expect(replica.text).toBe(reference.text);
              expect(replica.folded.metadata).toEqual(reference.truncation());
            }
          }
          expect(view.truncation()).toEqual(reference.truncation());
          replica.catchUp(view);
          expect(replica.text).toBe(reference.text);
        },
      ),
      { seed: 3031, numRuns: 2000 },
    );
  });

  it("keeps a tail of 50 KiB exact across chunks far larger than the cap", () => {
    const p: OutputPolicy = { retain: "tail", maxBytes: 51200, maxLines: 2000 };
    const view = new SourceView(p);
    const reference = new TextWindow(p);
    const chunk = `${"z".repeat(65000)}\n€${"w".repeat(3000)}`;
    for (let i = 0; i < 20; i++) {
      view.append(chunk);
      reference.append(chunk);
    }
    expect(view.text).toBe(reference.text);
    expect(view.truncation()).toEqual(reference.truncation());
  });
});

describe("countNewlines", () => {
  it("counts sparse and dense newlines alike", () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom("\n", "a", "bb", "\r\n"), { maxLength: 400 }),
        (parts) => {
          const text = parts.join("");
          expect(countNewlines(text)).toBe(text.split("\n").length - 1);
        },
      ),
      { seed: 3032, numRuns: 500 },
    );
    expect(countNewlines("y\n".repeat(5000))).toBe(5000);
  });
});
