/**
 * `write` and `edit` on the host: each change of a file runs alone (`FileQueue`, keyed
 * by the file's real path) and lands through `replaceFile` (atomic, contained). Sizes
 * are capped by `maxBytes` (`SANDBOX_MAX_WRITE_BYTES`): the content written, the file an
 * edit reads and the file it writes.
 */
import { isUtf8 } from "node:buffer";
import path from "node:path";
import { utf8HeadIndex } from "../../src/core/retention/utf8.ts";
import type {
  EditRequest,
  EditResult,
  WriteRequest,
  WriteResult,
} from "../../src/protocol/index.ts";
import { SandboxError } from "../errors.ts";
import type { Workspace } from "../workspace.ts";
import { applyEdits, EditRefused } from "./edit-text.ts";
import type { FileQueue } from "./file-queue.ts";
import { openInside } from "./open-inside.ts";
import { fileTarget, replaceFile } from "./replace-file.ts";

/** Longest diff an edit answers with (`details.diff`); past it the diff ends with a ` ...` line. */
const MAX_DIFF_BYTES = 32 * 1024;

interface ChangeContext {
  workspace: Workspace;
  queue: FileQueue;
  /** Most bytes a written file may have. */
  maxBytes: number;
}

/**
 * Writes `content` to `path`, creating parent folders, replacing any file there.
 * @example await writeFile(ctx, { path: "a/b.txt", content: "hi\n" }) // { path: "a/b.txt", bytes: 3, lines: 1 }
 */
export async function writeFile(ctx: ChangeContext, req: WriteRequest): Promise<WriteResult> {
  const bytes = Buffer.from(req.content, "utf8");
  assertSize(bytes.length, ctx.maxBytes, `content for '${req.path}'`);
  const target = await fileTarget(ctx.workspace, req.path);
  await ctx.queue.run(path.join(target.dir, target.name), () =>
    replaceFile(ctx.workspace, target, bytes),
  );
  return { path: req.path, bytes: bytes.length, lines: countLines(req.content) };
}

/**
 * Applies `edits` to the file at `path` (pi's rules, `applyEdits`) and replaces it.
 * @example await editFile(ctx, { path: "a.txt", edits: [{ oldText: "x", newText: "y" }] })
 */
export async function editFile(ctx: ChangeContext, req: EditRequest): Promise<EditResult> {
  if (req.edits.length === 0) {
    throw new SandboxError("bad_request", "edits must contain at least one replacement");
  }
  const target = await fileTarget(ctx.workspace, req.path);
  const abs = path.join(target.dir, target.name);
  return ctx.queue.run(abs, async () => {
    const handle = await openInside(ctx.workspace, abs, req.path, "file");
    let original: Buffer;
    try {
      assertSize((await handle.stat()).size, ctx.maxBytes, `'${req.path}'`);
      original = await handle.readFile();
    } finally {
      await handle.close();
    }
    if (original.subarray(0, 8192).includes(0)) {
      throw new SandboxError(
        "bad_request",
        `'${req.path}' looks like a binary file (it contains NUL bytes); edit it with bash`,
      );
    }
    assertUtf8(original, req.path);
    let edited: ReturnType<typeof applyEdits>;
    try {
      edited = applyEdits(original.toString("utf8"), req.edits, req.path);
    } catch (err) {
      if (err instanceof EditRefused) throw new SandboxError("bad_request", err.message);
      throw err;
    }
    const bytes = Buffer.from(edited.text, "utf8");
    assertSize(bytes.length, ctx.maxBytes, `'${req.path}' after the edits`);
    await replaceFile(ctx.workspace, target, bytes);
    const result: EditResult = {
      path: req.path,
      replaced: req.edits.length,
      diff: boundedDiff(edited.diff),
    };
    if (edited.firstChangedLine !== undefined) result.firstChangedLine = edited.firstChangedLine;
    return result;
  });
}

/**
 * An edit works on text, and decoding invalid UTF-8 would turn each invalid sequence
 * into U+FFFD, changing bytes the edit does not touch: such a file is refused instead.
 */
function assertUtf8(bytes: Buffer, rel: string): void {
  if (isUtf8(bytes)) return;
  const at = firstInvalidByte(bytes);
  throw new SandboxError(
    "bad_request",
    `'${rel}' is not valid UTF-8 (byte ${at} is not), and an edit would rewrite every invalid byte; change it with bash (e.g. sed), which keeps the bytes`,
  );
}

/** Offset of the first invalid byte: where decoding put a U+FFFD the file does not hold. */
function firstInvalidByte(bytes: Buffer): number {
  const text = bytes.toString("utf8");
  let offset = 0;
  let from = 0;
  for (let at = text.indexOf("\uFFFD"); at !== -1; at = text.indexOf("\uFFFD", at + 1)) {
    offset += Buffer.byteLength(text.slice(from, at), "utf8");
    from = at;
    const real = bytes[offset] === 0xef && bytes[offset + 1] === 0xbf && bytes[offset + 2] === 0xbd;
    if (!real) return offset;
  }
  return offset;
}

function assertSize(bytes: number, max: number, what: string): void {
  if (bytes > max) {
    throw new SandboxError(
      "too_large",
      `${what} is ${bytes} bytes, over the ${max}-byte limit of write and edit (SANDBOX_MAX_WRITE_BYTES); split the file or change it with bash`,
    );
  }
}

/** Lines of `text`: newlines, plus one for a last line without one. */
function countLines(text: string): number {
  if (text === "") return 0;
  let lines = 0;
  for (let at = text.indexOf("\n"); at !== -1; at = text.indexOf("\n", at + 1)) lines++;
  return text.endsWith("\n") ? lines : lines + 1;
}

/** The diff cut at a line boundary to at most `MAX_DIFF_BYTES`, with a closing ` ...` line. */
function boundedDiff(diff: string): string {
  if (Buffer.byteLength(diff, "utf8") <= MAX_DIFF_BYTES) return diff;
  const cut = diff.slice(0, utf8HeadIndex(diff, MAX_DIFF_BYTES - 64));
  const lastLine = cut.lastIndexOf("\n");
  return `${lastLine === -1 ? "" : cut.slice(0, lastLine)}\n ... (diff cut at ${MAX_DIFF_BYTES / 1024} KB)`;
}
