import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { countNewlines } from "../../../../sandbox/exec/newlines.ts";
import { SourceView } from "../../../../sandbox/exec/source-view.ts";
import { nextUpdate, type Sent } from "../../../../sandbox/exec/update-stream.ts";
import { type OutputPolicy, TextWindow } from "../../../../src/core/output/index.ts";
import { applyUpdate, type Folded } from "../harness.ts";

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
    this.sent = {
      position: published.viewPosition,
      metadata: JSON.stringify(published.metadata),
      ahead: null,
    };
    if (update) applyUpdate(this.folded, update);
  }

  get text(): string {
    return this.folded.text;
  }
}

/** Splits `bytes` into chunks of the given sizes (cycled), the last one taking the rest. */
function chunked(bytes: Uint8Array, sizes: number[]): Uint8Array[] {
  const out: Uint8Array[] = [];
  let at = 0;
  for (let k = 0; at < bytes.length; k++) {
    const size = sizes[k % sizes.length]!;
    out.push(bytes.subarray(at, at + size));
    at += size;
  }
  return out;
}

const encoder = new TextEncoder();

describe("SourceView", () => {
  // Chunks up to 40 bytes mostly arrive in a view that is not full yet; up to 400 bytes
  // (past every cap here) they also take the paths that decode only the part the window
  // can still keep: the last bytes of a large chunk, the last lines of what is pending.
  it.each([
    [40, 3031, 1500],
    [400, 3032, 1500],
  ])(
    "reads like a window fed the stream's decoded text, whenever it is read (chunks ≤ %i bytes)",
    (maxChunk, seed, numRuns) => {
      fc.assert(
        fc.property(
          policy,
          fc.array(piece, { maxLength: 60 }),
          fc.array(fc.integer({ min: 1, max: maxChunk }), { minLength: 1, maxLength: 8 }),
          fc.array(fc.boolean(), { minLength: 1, maxLength: 200 }),
          (p: OutputPolicy, pieces, sizes, reads) => {
            const chunks = chunked(encoder.encode(pieces.join("")), sizes);
            const view = new SourceView(p);
            const reference = new TextWindow(p);
            const decoder = new TextDecoder();
            const replica = new Replica();
            let raw = "";
            for (const [step, chunk] of chunks.entries()) {
              const read = reads[step % reads.length];
              view.push(chunk);
              reference.append(decoder.decode(chunk, { stream: true }));
              raw += Buffer.from(chunk).toString("latin1");
              if (read) {
                expect(view.text).toBe(reference.text);
                const t = view.truncation();
                expect(t).toEqual({
                  ...reference.truncation(),
                  totalBytes: raw.length,
                  totalLines: raw.split("\n").length - (raw === "" || raw.endsWith("\n") ? 1 : 0),
                });
                replica.catchUp(view);
                expect(replica.text).toBe(reference.text);
                expect(replica.folded.metadata).toEqual(t);
              }
            }
            view.end();
            reference.append(decoder.decode());
            expect(view.text).toBe(reference.text);
            expect(view.truncation()).toEqual(reference.truncation());
            replica.catchUp(view);
            expect(replica.text).toBe(reference.text);
          },
        ),
        { seed, numRuns },
      );
    },
  );

  it("releases every chunk once and never reads a released chunk", () => {
    fc.assert(
      fc.property(
        policy,
        fc.array(piece, { maxLength: 30 }),
        fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 8 }),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 50 }),
        (p: OutputPolicy, pieces, sizes, reads) => {
          // Each chunk owns its bytes; a released chunk is overwritten with 0xff, as
          // freed memory would be reused, so any later read of it shows in the text.
          const bytes = encoder.encode(pieces.join(""));
          const chunks = chunked(bytes, sizes).map((c) => c.slice());
          const released = new Set<Uint8Array>();
          let releases = 0;
          const view = new SourceView(p, (bytes) => {
            releases++;
            released.add(bytes);
            bytes.fill(0xff);
          });
          const reference = new TextWindow(p);
          const decoder = new TextDecoder();
          chunks.forEach((chunk, k) => {
            reference.append(decoder.decode(chunk, { stream: true }));
            view.push(chunk);
            if (reads[k % reads.length]) expect(view.text).toBe(reference.text);
          });
          reference.append(decoder.decode());
          view.end();
          const raw = Buffer.from(bytes).toString("latin1");
          expect(view.text).toBe(reference.text);
          expect(view.truncation()).toEqual({
            ...reference.truncation(),
            totalBytes: raw.length,
            totalLines: raw.split("\n").length - (raw === "" || raw.endsWith("\n") ? 1 : 0),
          });
          expect(releases).toBe(chunks.length);
          expect(released.size).toBe(chunks.length);
        },
      ),
      { seed: 3033, numRuns: 1000 },
    );
  });

  it("keeps a tail of 50 KiB exact across chunks far larger than the cap", () => {
    const p: OutputPolicy = { retain: "tail", maxBytes: 51200, maxLines: 2000 };
    const view = new SourceView(p);
    const reference = new TextWindow(p);
    const chunk = encoder.encode(`${"z".repeat(65000)}\n€${"w".repeat(3000)}`);
    const decoder = new TextDecoder();
    for (let i = 0; i < 20; i++) {
      // Cut inside the "€" so that each half arrives in a different chunk.
      view.push(chunk.subarray(0, 65002));
      view.push(chunk.subarray(65002));
      reference.append(decoder.decode(chunk, { stream: true }));
    }
    expect(view.text).toBe(reference.text);
    expect(view.truncation()).toEqual(reference.truncation());
  });
});

describe("countNewlines", () => {
  it("counts sparse and dense newlines alike, at any alignment", () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom("\n", "a", "bb", "\r\n", "\n\n\n"), { maxLength: 600 }),
        fc.integer({ min: 0, max: 7 }),
        (parts, offset) => {
          const text = parts.join("");
          const bytes = Buffer.concat([Buffer.alloc(offset), Buffer.from(text)]).subarray(offset);
          expect(countNewlines(bytes)).toBe(text.split("\n").length - 1);
        },
      ),
      { seed: 3032, numRuns: 500 },
    );
    expect(countNewlines(Buffer.from("y\n".repeat(5000)))).toBe(5000);
    // Every byte a newline: each byte lane of the running sum reaches its most (254) per fold.
    expect(countNewlines(Buffer.alloc(100_003, 10))).toBe(100_003);
    expect(countNewlines(Buffer.alloc(100_003, 10).subarray(1))).toBe(100_002);
  });

  it("counts a dense chunk that ends before the next word boundary", () => {
    // 64 newlines switch to the word scan, which then reaches the end while aligning.
    const buffer = new ArrayBuffer(256);
    for (let offset = 0; offset < 4; offset++) {
      for (let extra = 0; extra < 4; extra++) {
        const bytes = new Uint8Array(buffer, offset, 64 + extra).fill(10);
        expect(countNewlines(bytes)).toBe(64 + extra);
      }
    }
  });

  // The spill follower, once a view is full, takes what the window cannot keep by length
  // and the copier's newline count, and reads only the last `maxBytes + 1 KiB` (decision 087);
  // here the back is the least `skipFull` allows, `maxBytes + 16`, so the cut falls anywhere.
  it("a full view given the front by count and the back as bytes equals one fed every byte", () => {
    fc.assert(
      fc.property(
        policy,
        fc.array(piece, { minLength: 1, maxLength: 60 }),
        fc.array(fc.array(piece, { minLength: 1, maxLength: 80 }), { minLength: 1, maxLength: 6 }),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 6 }),
        (p, first, rounds, reads) => {
          const fed = new SourceView(p);
          const skipped = new SourceView(p);
          const start = encoder.encode(first.join(""));
          fed.push(start);
          skipped.push(start);
          for (const [k, round] of rounds.entries()) {
            const bytes = encoder.encode(round.join(""));
            fed.push(bytes);
            const back = p.retain === "head" ? 0 : Math.min(bytes.length, p.maxBytes + 16);
            const front = bytes.length - back;
            if (!skipped.truncated || front === 0) {
              skipped.push(bytes);
            } else {
              const last = bytes.subarray(Math.max(0, front - 3), front);
              skipped.skipFull(front, countNewlines(bytes.subarray(0, front)), last);
              if (back > 0) skipped.push(bytes.slice(front));
            }
            if (reads[k % reads.length]) {
              expect(skipped.text).toBe(fed.text);
              expect(skipped.truncation()).toEqual(fed.truncation());
            }
          }
          fed.end();
          skipped.end();
          expect(skipped.text).toBe(fed.text);
          expect(skipped.truncation()).toEqual(fed.truncation());
          expect(skipped.position).toEqual(fed.position);
        },
      ),
      { seed: 8701, numRuns: 1500 },
    );
  });

  it("skipFull refuses a view that is not full", () => {
    const view = new SourceView({ retain: "tail", maxBytes: 100, maxLines: 10 });
    expect(() => view.skipFull(10, 0, new Uint8Array([1]))).toThrow(/not full/);
  });
});
