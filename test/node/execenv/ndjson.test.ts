import { describe, expect, it } from "vitest";
import { readNdjson, SandboxStreamError } from "../../../src/execenv/index.ts";

function streamOf(chunks: Uint8Array[]): {
  body: ReadableStream<Uint8Array>;
  cancelled: () => boolean;
} {
  let cancelled = false;
  let i = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (i < chunks.length) controller.enqueue(chunks[i++]!);
      else controller.close();
    },
    cancel() {
      cancelled = true;
    },
  });
  return { body, cancelled: () => cancelled };
}

async function all(body: ReadableStream<Uint8Array>, max?: number): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const v of readNdjson(body, max)) out.push(v);
  return out;
}

const bytes = (s: string) => new TextEncoder().encode(s);

describe("readNdjson", () => {
  it("keeps a character split across chunks whole, skips blank lines, reads a last line without newline", async () => {
    const line = bytes('{"t":"€"}\n\n{"n":2}');
    // Split inside the 3-byte "€".
    const { body } = streamOf([line.subarray(0, 8), line.subarray(8)]);
    expect(await all(body)).toEqual([{ t: "€" }, { n: 2 }]);
  });

  it("a line at the byte limit passes; one byte over is refused", async () => {
    const at = `"${"a".repeat(98)}"`; // 100 bytes
    expect(await all(streamOf([bytes(`${at}\n`)]).body, 100)).toEqual(["a".repeat(98)]);
    const over = `"${"a".repeat(99)}"`;
    await expect(all(streamOf([bytes(over)]).body, 100)).rejects.toBeInstanceOf(SandboxStreamError);
  });

  it("a malformed line is a SandboxStreamError, and the body is cancelled", async () => {
    const s = streamOf([bytes('{"ok":1}\nnot json\n'), bytes('{"never":1}\n')]);
    await expect(all(s.body)).rejects.toThrow(/malformed NDJSON line/);
    expect(s.cancelled()).toBe(true);
  });

  it("a consumer that stops early cancels the body", async () => {
    const s = streamOf([bytes('{"a":1}\n'), bytes('{"b":2}\n')]);
    for await (const v of readNdjson(s.body)) {
      expect(v).toEqual({ a: 1 });
      break;
    }
    expect(s.cancelled()).toBe(true);
  });
});
