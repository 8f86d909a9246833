// The full-output reader: its sparse line index and its range reads, checked against
// a reference split of the same bytes over thousands of random files, chunk sizes and
// index spacings; then against a real sandbox host's spill route.
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { byteRange } from "../../../sandbox/byte-range.ts";
import { LineIndex } from "../../../src/client/full-output/line-index.ts";
import {
  SpillReader,
  SpillUnavailableError,
} from "../../../src/client/full-output/spill-reader.ts";
import { execId, fold, startTestHost, type TestHost } from "../sandbox/harness.ts";

const encoder = new TextEncoder();

/** A range server over `bytes`, with the host's own range rules. */
function rangeFetch(bytes: Uint8Array, requests: string[] = []): typeof fetch {
  return async (_input, init) => {
    const header = new Headers(init?.headers).get("range") ?? undefined;
    requests.push(header ?? "");
    const r = byteRange(header, bytes.length);
    if (r.kind === "part") {
      return new Response(bytes.slice(r.start, r.end + 1), {
        status: 206,
        headers: { "content-range": `bytes ${r.start}-${r.end}/${bytes.length}` },
      });
    }
    if (r.kind === "whole") return new Response(bytes.slice(), { status: 200 });
    return Response.json({ error: { message: "no" } }, { status: 416 });
  };
}

/** Reference: the lines of `text` and the byte offset each starts at. */
function reference(text: string): { lines: string[]; starts: number[] } {
  const lines = text.split("\n");
  if (text.endsWith("\n") || text === "") lines.pop();
  const starts: number[] = [];
  let at = 0;
  for (const line of lines) {
    starts.push(at);
    at += encoder.encode(line).length + 1;
  }
  return { lines, starts };
}

const lineText = fc.oneof(
  fc.constant(""),
  fc.string({ maxLength: 12 }).map((s) => s.replaceAll("\n", "")),
  fc.constantFrom("é", "日本", "🙂", "error here", "ERROR"),
);
const fileText = fc
  .tuple(fc.array(lineText, { maxLength: 40 }), fc.boolean())
  .map(([lines, trailing]) => lines.join("\n") + (trailing && lines.length > 0 ? "\n" : ""));
const spacing = fc.record({
  everyLines: fc.integer({ min: 1, max: 6 }),
  everyBytes: fc.integer({ min: 1, max: 60 }),
});

describe("LineIndex", () => {
  it("counts lines and keeps checkpoints at real line starts, whatever the chunking", () => {
    fc.assert(
      fc.property(fileText, spacing, fc.array(fc.nat(20), { maxLength: 10 }), (text, sp, cuts) => {
        const bytes = encoder.encode(text);
        const index = new LineIndex(sp);
        let at = 0;
        for (const cut of cuts) {
          index.feed(bytes.subarray(at, Math.min(bytes.length, at + cut)));
          at = Math.min(bytes.length, at + cut);
        }
        index.feed(bytes.subarray(at));
        index.finish();
        const ref = reference(text);
        expect(index.lines).toBe(ref.lines.length);
        for (let n = 1; n <= ref.lines.length; n++) {
          const cp = index.before(n);
          expect(cp.line).toBeLessThanOrEqual(n);
          expect(cp.offset).toBe(ref.starts[cp.line - 1]);
          // No more than the spacing between a checkpoint and a line it serves.
          expect(
            n - cp.line < sp.everyLines ||
              (ref.starts[n - 1] ?? 0) - cp.offset < sp.everyBytes + 40,
          ).toBe(true);
        }
      }),
      { seed: 120, numRuns: 3000 },
    );
  });

  it("a gigabyte-shaped stream keeps one checkpoint per 1,000 lines, not one per line", () => {
    const index = new LineIndex();
    const block = encoder.encode("0123456789\n".repeat(10_000));
    for (let k = 0; k < 100; k++) index.feed(block);
    index.finish();
    expect(index.lines).toBe(1_000_000);
    // Line 1, then one every 1,000 lines (the last at the end of the stream).
    expect(index.checkpoints).toBe(1001);
  });
});

describe("SpillReader", () => {
  it("reads any lines and finds every match forwards and backwards, like the reference", {
    timeout: 30_000,
  }, async () => {
    await fc.assert(
      fc.asyncProperty(
        fileText,
        spacing,
        fc.integer({ min: 1, max: 17 }),
        fc.integer({ min: 1, max: 50 }),
        fc.nat(45),
        fc.constantFrom("error", "é", "x", "🙂"),
        fc.boolean(),
        async (text, sp, chunkBytes, indexChunkBytes, from, query, indexed) => {
          const bytes = encoder.encode(text);
          const reader = new SpillReader("http://spill.test/", {
            fetch: rangeFetch(bytes),
            chunkBytes,
            indexChunkBytes,
            spacing: sp,
          });
          if (bytes.length === 0) {
            await expect(reader.open()).rejects.toBeInstanceOf(SpillUnavailableError);
            return;
          }
          await reader.open();
          // Reading and searching work with or without a finished index.
          if (indexed) await reader.indexAll(() => {});
          const ref = reference(text);
          const got = await reader.lines(from + 1, 5);
          expect(got.map((l) => l.text)).toEqual(ref.lines.slice(from, from + 5));
          expect(got.map((l) => l.line)).toEqual(got.map((_, i) => from + 1 + i));
          const hit = (n: number) => ref.lines[n - 1]?.toLowerCase().includes(query) ?? false;
          const numbers = ref.lines.map((_, i) => i + 1);
          const next = numbers.find((n) => n > from && hit(n)) ?? null;
          const previous = numbers.filter((n) => n < from && hit(n)).pop() ?? null;
          expect(await reader.search(query, from, "next")).toBe(next);
          expect(await reader.search(query, from, "previous")).toBe(previous);
          if (!indexed) await reader.indexAll(() => {});
          expect(reader.index.lines).toBe(ref.lines.length);
        },
      ),
      { seed: 121, numRuns: 1500 },
    );
  });

  it("reads the last lines back from the end, like the reference, whatever the chunking", {
    timeout: 30_000,
  }, async () => {
    await fc.assert(
      fc.asyncProperty(
        fileText.filter((text) => text !== ""),
        fc.integer({ min: 1, max: 17 }),
        fc.integer({ min: 1, max: 45 }),
        async (text, chunkBytes, count) => {
          const reader = new SpillReader("http://spill.test/", {
            fetch: rangeFetch(encoder.encode(text)),
            chunkBytes,
          });
          await reader.open();
          const got = await reader.lastLines(count);
          expect(got.map((l) => l.text)).toEqual(reference(text).lines.slice(-count));
          expect(got.every((l) => !l.cut)).toBe(true);
        },
      ),
      { seed: 122, numRuns: 1500 },
    );
  });

  it("the last lines of a large file cost a few chunks, and a long last line is cut", async () => {
    const bytes = encoder.encode(`${"line\n".repeat(200_000)}${"z".repeat(40)}`);
    const requests: string[] = [];
    const reader = new SpillReader("http://spill.test/", {
      fetch: rangeFetch(bytes, requests),
      chunkBytes: 1024,
      maxLineBytes: 16,
    });
    await reader.open();
    const opened = requests.length;
    expect(await reader.lastLines(3)).toEqual([
      { text: "line", cut: false },
      { text: "line", cut: false },
      { text: "z".repeat(16), cut: true },
    ]);
    expect(requests.length - opened).toBe(1);
    // A line longer than what is read back for it: it is left out, never shown cut at its start.
    const long = encoder.encode(`a\n${"b".repeat(5000)}\nc\n`);
    const reader2 = new SpillReader("http://spill.test/", {
      fetch: rangeFetch(long),
      chunkBytes: 1024,
      maxLineBytes: 16,
    });
    await reader2.open();
    expect(await reader2.lastLines(2)).toEqual([{ text: "c", cut: false }]);
  });

  it("a line of exactly the display cap is whole; one byte more is cut and says so", async () => {
    const text = `${"a".repeat(16)}\n${"b".repeat(17)}\nc\n`;
    const reader = new SpillReader("http://spill.test/", {
      fetch: rangeFetch(encoder.encode(text)),
      chunkBytes: 5,
      maxLineBytes: 16,
    });
    await reader.open();
    expect(await reader.lines(1, 3)).toEqual([
      { line: 1, text: "a".repeat(16), cut: false },
      { line: 2, text: "b".repeat(16), cut: true },
      { line: 3, text: "c", cut: false },
    ]);
  });

  it("keeps at most 64 chunks while reading a file far larger than that", async () => {
    const bytes = encoder.encode(`${"line\n".repeat(200_000)}`);
    const requests: string[] = [];
    const reader = new SpillReader("http://spill.test/", {
      fetch: rangeFetch(bytes, requests),
      chunkBytes: 1024,
    });
    await reader.open();
    await reader.indexAll(() => {});
    const indexRequests = requests.length;
    expect(await reader.lines(1, 200_000)).toHaveLength(200_000);
    const scanRequests = requests.length;
    expect(scanRequests - indexRequests).toBe(Math.ceil(bytes.length / 1024));
    // Lines of the last chunks are cached: reading them again asks for nothing new.
    await reader.lines(199_990, 10);
    expect(requests.length).toBe(scanRequests);
    // The first chunk was dropped long ago.
    await reader.lines(1, 1);
    expect(requests.length).toBe(scanRequests + 1);
  });

  it("searches forwards in ranges of the indexing size, not of line reads", async () => {
    const bytes = encoder.encode(`${"line\n".repeat(200_000)}needle\n`);
    const requests: string[] = [];
    const reader = new SpillReader("http://spill.test/", {
      fetch: rangeFetch(bytes, requests),
      chunkBytes: 1024,
      indexChunkBytes: 256 * 1024,
    });
    await reader.open();
    const opened = requests.length;
    expect(await reader.search("NEEDLE", 0, "next")).toBe(200_001);
    expect(requests.length - opened).toBe(Math.ceil(bytes.length / (256 * 1024)));
    expect(await reader.search("needle", 200_001, "next")).toBeNull();
    expect(await reader.countMatches("NEEDLE")).toBe(1);
    expect(await reader.countMatches("line")).toBe(200_000);
    expect(await reader.countMatches("")).toBe(0);
  });
});

describe("SpillReader against a real sandbox host", () => {
  let host: TestHost;
  beforeAll(async () => {
    host = await startTestHost();
  });
  afterAll(() => host.close());

  it("indexes seq 1 200000, reads line 123456 and finds matches around it", async () => {
    const id = execId();
    await fold(host.client.exec({ execId: id, command: "seq 1 200000" }));
    const authed: typeof fetch = (input, init) => {
      const headers = new Headers(init?.headers);
      headers.set("Authorization", `Bearer ${host.token}`);
      return fetch(input, { ...init, headers });
    };
    const reader = new SpillReader(`${host.url}/v1/exec/${id}/spill`, { fetch: authed });
    expect(await reader.open()).toEqual({ size: 1_288_895 });
    await reader.indexAll(() => {});
    expect(reader.index.lines).toBe(200_000);
    expect(await reader.lines(123_456, 2)).toEqual([
      { line: 123_456, text: "123456", cut: false },
      { line: 123_457, text: "123457", cut: false },
    ]);
    expect(await reader.search("99999", 100_000, "next")).toBe(199_999);
    expect(await reader.search("99999", 199_999, "previous")).toBe(99_999);
    expect(await reader.search("99999", 99_999, "previous")).toBeNull();
  });

  it("a missing spill is an error carrying the route's message", async () => {
    const reader = new SpillReader(`${host.url}/v1/exec/never-ran/spill`, {
      fetch: (input, init) =>
        fetch(input, {
          ...init,
          headers: { ...init?.headers, Authorization: `Bearer ${host.token}` },
        }),
    });
    const error = await reader.open().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SpillUnavailableError);
    expect((error as SpillUnavailableError).status).toBe(404);
    expect((error as Error).message).toMatch(/no spill file/);
  });
});
