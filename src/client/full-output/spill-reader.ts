/**
 * Reads an invocation's complete output (`GET /v1/invocations/:id/spill`) by byte
 * ranges: lines by number, a search forwards or backwards from a line, and a sparse
 * line index built by one pass over the file. What it holds is bounded whatever the
 * file's size: a cache of 64 chunks of 64 KiB, the index's checkpoints, and the lines
 * being read (each cut for display at `MAX_LINE_CHARS`).
 *
 * Works in browsers and Node (fetch only).
 */
import { errorBodyMessage } from "../../protocol/index.ts";
import { DEFAULT_SPACING, LineIndex, type LineIndexSpacing } from "./line-index.ts";

/** Range size of reads for lines and search. */
const CHUNK_BYTES = 64 * 1024;
/** Range size of the indexing pass. */
const INDEX_CHUNK_BYTES = 1024 * 1024;
/** Chunks kept for re-reads while a reader scrolls. */
const CACHED_CHUNKS = 64;
/** Bytes of one line kept for display and search; the rest is counted, not kept. */
const MAX_LINE_BYTES = 64 * 1024;

/** The file cannot be read: the route's message, or why the answer made no sense. */
export class SpillUnavailableError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.name = "SpillUnavailableError";
    this.status = status;
  }
}

/** One line of the file: its number and its text (cut at `MAX_LINE_BYTES`). */
interface SpillLine {
  line: number;
  text: string;
  /** True when the line was longer than what `text` holds. */
  cut: boolean;
}

/** Everything but the URL is for tests (small chunks put chunk boundaries everywhere). */
interface SpillReaderOptions {
  fetch?: typeof fetch;
  chunkBytes?: number;
  indexChunkBytes?: number;
  maxLineBytes?: number;
  spacing?: LineIndexSpacing;
}

const decoder = new TextDecoder("utf-8");

export class SpillReader {
  readonly #url: string;
  readonly #fetch: typeof fetch;
  readonly #chunkBytes: number;
  readonly #indexChunkBytes: number;
  readonly #maxLineBytes: number;
  readonly #chunks = new Map<number, Uint8Array>();
  readonly index: LineIndex;
  #size = -1;
  #indexing: Promise<void> | null = null;

  /**
   * @example const reader = new SpillReader(`${origin}/v1/invocations/${id}/spill?token=${t}`);
   */
  constructor(url: string, options: SpillReaderOptions = {}) {
    this.#url = url;
    this.#fetch = options.fetch ?? ((input, init) => fetch(input, init));
    this.#chunkBytes = options.chunkBytes ?? CHUNK_BYTES;
    this.#indexChunkBytes = options.indexChunkBytes ?? INDEX_CHUNK_BYTES;
    this.#maxLineBytes = options.maxLineBytes ?? MAX_LINE_BYTES;
    this.index = new LineIndex(options.spacing ?? DEFAULT_SPACING);
  }

  /** Size in bytes, known after `open()`. */
  get size(): number {
    return this.#size;
  }

  /**
   * Learns the file's size from a 1-byte range (the file as it is now: a running
   * command's grows, and this reader shows it up to this size).
   * @example const { size } = await reader.open();
   */
  async open(): Promise<{ size: number }> {
    const res = await this.#fetch(this.#url, { headers: { Range: "bytes=0-0" } });
    if (res.status === 206) {
      const total = /\/(\d+)$/.exec(res.headers.get("content-range") ?? "")?.[1];
      await res.body?.cancel();
      if (total === undefined) {
        throw new SpillUnavailableError(206, "the answer had no Content-Range with the size");
      }
      this.#size = Number(total);
      return { size: this.#size };
    }
    throw new SpillUnavailableError(res.status, await errorMessage(res));
  }

  /**
   * Reads the whole file once in 1 MiB ranges to count its lines and keep checkpoints.
   * `onProgress` is called after each range; an aborted `signal` stops the pass. One
   * pass at a time: a call while one runs gets that pass.
   */
  indexAll(onProgress: () => void, signal?: AbortSignal): Promise<void> {
    this.#indexing ??= this.#index(onProgress, signal).finally(() => {
      this.#indexing = null;
    });
    return this.#indexing;
  }

  async #index(onProgress: () => void, signal?: AbortSignal): Promise<void> {
    if (this.index.complete) return;
    const size = this.#requireSize();
    while (this.index.scanned < size) {
      if (signal?.aborted) return;
      const start = this.index.scanned;
      const end = Math.min(size, start + this.#indexChunkBytes);
      this.index.feed(await this.#fetchRange(start, end, signal));
      onProgress();
    }
    this.index.finish();
    onProgress();
  }

  /**
   * Lines `from` .. `from + count - 1` (fewer at the end of the file).
   * @example (await reader.lines(123456, 1))[0]?.text // "123456"
   */
  async lines(from: number, count: number): Promise<SpillLine[]> {
    const out: SpillLine[] = [];
    if (count <= 0) return out;
    for await (const line of this.#scan(Math.max(1, from))) {
      if (line.line < from) continue;
      out.push(line);
      if (out.length >= count) break;
    }
    return out;
  }

  /**
   * The file's last `count` lines, read back from its end without the line index (so
   * without their numbers, known once the index is): what a viewer was showing. At most
   * `count` lines' worth of bytes (each cut at `MAX_LINE_BYTES`) and a chunk are read.
   * @example (await reader.lastLines(2)).map((l) => l.text) // ["199999", "200000"]
   */
  async lastLines(count: number): Promise<Omit<SpillLine, "line">[]> {
    const size = this.#requireSize();
    if (count <= 0 || size === 0) return [];
    const budget = count * this.#maxLineBytes + this.#chunkBytes;
    const parts: Uint8Array[] = [];
    let held = 0;
    let newlines = 0;
    let k = Math.floor((size - 1) / this.#chunkBytes);
    // A final "\n" ends the last line; it does not start another.
    const endsLine = (await this.#chunk(k)).at((size - 1) % this.#chunkBytes) === 0x0a;
    for (; k >= 0 && newlines <= count && held < budget; k--) {
      const chunk = await this.#chunk(k);
      parts.unshift(chunk);
      held += chunk.length;
      for (const byte of chunk) if (byte === 0x0a) newlines++;
    }
    const bytes = concat(parts, held);
    const reachedStart = k < 0;
    const pieces: Uint8Array[] = [];
    let from = 0;
    for (let at = bytes.indexOf(0x0a); at !== -1; at = bytes.indexOf(0x0a, at + 1)) {
      pieces.push(bytes.subarray(from, at));
      from = at + 1;
    }
    if (!endsLine) pieces.push(bytes.subarray(from));
    // Without the file's start, the first piece began before what was read.
    if (!reachedStart) pieces.shift();
    return pieces.slice(-count).map((piece) => ({
      text: decoder.decode(piece.subarray(0, this.#maxLineBytes)),
      cut: piece.length > this.#maxLineBytes,
    }));
  }

  /**
   * The number of the first line after `fromLine` (direction "next") or the last line
   * before it ("previous") whose text contains `query`, ignoring case; null if none.
   * @example await reader.search("error", 0, "next") // 4711
   */
  async search(
    query: string,
    fromLine: number,
    direction: "next" | "previous",
    signal?: AbortSignal,
  ): Promise<number | null> {
    const needle = query.toLowerCase();
    if (needle === "") return null;
    if (direction === "next") return this.#searchForward(needle, fromLine, signal);
    // Backwards block by block (checkpoint to checkpoint), each block read forwards.
    let end = fromLine;
    while (end > 1) {
      const block = this.index.before(end - 1);
      let found: number | null = null;
      for await (const line of this.#scan(block.line, signal)) {
        if (line.line >= end) break;
        if (line.text.toLowerCase().includes(needle)) found = line.line;
      }
      if (found !== null) return found;
      end = block.line;
    }
    return null;
  }

  /**
   * The first line after `fromLine` containing `needle` (lower case): the file from the
   * checkpoint before it in ranges of `indexChunkBytes` (1 MiB, not the 64 KiB of line
   * reads), the next range fetched while this one is searched, each range decoded and
   * searched as one string, not line by line (docs/decisions/154).
   */
  async #searchForward(
    needle: string,
    fromLine: number,
    signal?: AbortSignal,
  ): Promise<number | null> {
    let found: number | null = null;
    await this.#scanWide(needle, fromLine, signal, (line) => {
      found = line;
      return false;
    });
    return found;
  }

  /**
   * How many lines contain `query`, ignoring case: one pass over the file in the same
   * wide ranges as a forward search.
   * @example await reader.countMatches("error") // 3
   */
  async countMatches(query: string, signal?: AbortSignal): Promise<number> {
    const needle = query.toLowerCase();
    if (needle === "") return 0;
    let count = 0;
    await this.#scanWide(needle, 0, signal, () => {
      count++;
      return true;
    });
    return count;
  }

  /** Calls `hit` with each line after `fromLine` that contains `needle`, until it returns false. */
  async #scanWide(
    needle: string,
    fromLine: number,
    signal: AbortSignal | undefined,
    hit: (line: number) => boolean,
  ): Promise<void> {
    const size = this.#requireSize();
    const start = this.index.before(fromLine + 1);
    const stream = new TextDecoder("utf-8");
    const range = (at: number) =>
      this.#fetchRange(at, Math.min(size, at + this.#indexChunkBytes), signal);
    let line = start.line;
    let offset = start.offset;
    let carry = "";
    let next = offset < size ? range(offset) : null;
    while (next !== null) {
      const bytes = await next;
      if (signal?.aborted) return;
      const end = offset + bytes.length;
      next = end < size ? range(end) : null;
      const text = (carry + stream.decode(bytes, { stream: end < size })).toLowerCase();
      // Whole lines only; the last, unfinished one is searched with the next range.
      const whole = end < size ? text.lastIndexOf("\n") + 1 : text.length;
      carry = text.slice(whole);
      let counted = 0;
      for (let at = text.indexOf(needle); at !== -1 && at < whole; ) {
        line += newlinesIn(text, counted, at);
        counted = at;
        if (line > fromLine && !hit(line)) {
          void next?.catch(() => {});
          return;
        }
        const lineEnd = text.indexOf("\n", at);
        if (lineEnd === -1) break;
        at = text.indexOf(needle, lineEnd + 1);
      }
      line += newlinesIn(text, counted, whole);
      offset = end;
    }
  }

  /** Lines from the checkpoint at or before `from` to the end of the file. */
  async *#scan(from: number, signal?: AbortSignal): AsyncGenerator<SpillLine> {
    const size = this.#requireSize();
    const start = this.index.before(from);
    let line = start.line;
    let offset = start.offset;
    let kept: Uint8Array[] = [];
    let keptBytes = 0;
    let cut = false;
    const take = (bytes: Uint8Array) => {
      const room = this.#maxLineBytes - keptBytes;
      if (bytes.length > room) cut = true;
      const part = bytes.length > room ? bytes.subarray(0, room) : bytes;
      if (part.length > 0) {
        kept.push(part);
        keptBytes += part.length;
      }
    };
    const emit = (): SpillLine => {
      const text = decoder.decode(concat(kept, keptBytes));
      const out = { line, text, cut };
      line++;
      kept = [];
      keptBytes = 0;
      cut = false;
      return out;
    };
    while (offset < size) {
      if (signal?.aborted) return;
      const chunk = await this.#chunk(Math.floor(offset / this.#chunkBytes), signal);
      let from = offset % this.#chunkBytes;
      let at = chunk.indexOf(0x0a, from);
      while (at !== -1) {
        take(chunk.subarray(from, at));
        yield emit();
        from = at + 1;
        at = chunk.indexOf(0x0a, from);
      }
      take(chunk.subarray(from));
      offset += chunk.length - (offset % this.#chunkBytes);
    }
    if (keptBytes > 0 || cut) yield emit();
  }

  async #chunk(k: number, signal?: AbortSignal): Promise<Uint8Array> {
    const cached = this.#chunks.get(k);
    if (cached) {
      // Most recently used last: Map keeps insertion order.
      this.#chunks.delete(k);
      this.#chunks.set(k, cached);
      return cached;
    }
    const start = k * this.#chunkBytes;
    const end = Math.min(this.#size, start + this.#chunkBytes);
    const bytes = await this.#fetchRange(start, end, signal);
    this.#chunks.set(k, bytes);
    if (this.#chunks.size > CACHED_CHUNKS) {
      const oldest = this.#chunks.keys().next().value;
      if (oldest !== undefined) this.#chunks.delete(oldest);
    }
    return bytes;
  }

  /** Bytes `start` .. `end - 1`, exactly, or an error saying what came back. */
  async #fetchRange(start: number, end: number, signal?: AbortSignal): Promise<Uint8Array> {
    const res = await this.#fetch(this.#url, {
      headers: { Range: `bytes=${start}-${end - 1}` },
      ...(signal ? { signal } : {}),
    });
    if (res.status !== 206) throw new SpillUnavailableError(res.status, await errorMessage(res));
    const bytes = new Uint8Array(await res.arrayBuffer());
    if (bytes.length !== end - start) {
      throw new SpillUnavailableError(
        206,
        `asked for bytes ${start}-${end - 1}, got ${bytes.length} bytes`,
      );
    }
    return bytes;
  }

  #requireSize(): number {
    if (this.#size < 0) throw new Error("SpillReader: call open() first");
    return this.#size;
  }
}

/** How many "\n" are in `text` from `from` up to (not including) `to`. */
function newlinesIn(text: string, from: number, to: number): number {
  let count = 0;
  for (let at = text.indexOf("\n", from); at !== -1 && at < to; at = text.indexOf("\n", at + 1))
    count++;
  return count;
}

function concat(parts: Uint8Array[], length: number): Uint8Array {
  if (parts.length === 1 && parts[0]) return parts[0];
  const out = new Uint8Array(length);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

async function errorMessage(res: Response): Promise<string> {
  return errorBodyMessage(await res.text()) ?? `the full output answered ${res.status}`;
}
