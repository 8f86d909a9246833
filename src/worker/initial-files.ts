/**
 * Initial files of `POST /v1/sandboxes` (docs/sandboxes.md): a map of workspace path ->
 * UTF-8 text, written as a ustar archive so that it takes exactly the upload's road (the
 * host's entry checks, the disk quota, extraction inside the jail). The whole create
 * body is bounded by the Worker's 1 MiB; larger trees go through `PUT …/files`.
 */
import { concatBytes } from "../protocol/bytes.ts";

const BLOCK = 512;
const encoder = new TextEncoder();

/**
 * Why `path` cannot be an initial file's path, or null when it can: relative, no `.` or
 * `..` segment, no empty segment, no NUL, at most 255 bytes (ustar's name + prefix).
 * @example initialPathProblem("src/main.ts") // null
 */
export function initialPathProblem(path: string): string | null {
  if (path === "") return "is empty";
  if (path.startsWith("/")) return "is absolute; give a path relative to the workspace";
  if (path.includes("\0")) return "contains a NUL byte";
  const segments = path.split("/");
  if (segments.some((s) => s === "" || s === "." || s === "..")) {
    return "has an empty, '.' or '..' segment";
  }
  if (encoder.encode(path).length > 255) return "is longer than 255 bytes";
  if (splitName(encoder.encode(path)) === null) {
    return "cannot be split into a ustar name (100 bytes) and prefix (155 bytes)";
  }
  return null;
}

/**
 * A ustar archive of regular files (mode 0644, owner 0), in the order given.
 * @example ustarOf({ "README.md": "# hi\n" }) // Uint8Array of 2048 bytes
 */
export function ustarOf(files: Record<string, string>): Uint8Array {
  const parts: Uint8Array[] = [];
  for (const [path, text] of Object.entries(files)) {
    const body = encoder.encode(text);
    parts.push(header(path, body.length), body);
    const pad = (BLOCK - (body.length % BLOCK)) % BLOCK;
    if (pad > 0) parts.push(new Uint8Array(pad));
  }
  parts.push(new Uint8Array(2 * BLOCK));
  return concatBytes(parts);
}

/** `name` (≤ 100 bytes) and `prefix` (≤ 155 bytes) split at a `/`, or null. */
function splitName(bytes: Uint8Array): { name: Uint8Array; prefix: Uint8Array } | null {
  if (bytes.length <= 100) return { name: bytes, prefix: new Uint8Array(0) };
  for (let i = bytes.length - 1; i > 0; i--) {
    if (bytes[i] !== 0x2f) continue;
    if (i <= 155 && bytes.length - i - 1 <= 100 && bytes.length - i - 1 > 0) {
      return { name: bytes.subarray(i + 1), prefix: bytes.subarray(0, i) };
    }
  }
  return null;
}

function header(path: string, size: number): Uint8Array {
  const h = new Uint8Array(BLOCK);
  const split = splitName(encoder.encode(path));
  if (!split) throw new Error(`initial file ${path}: name does not fit ustar`);
  const field = (at: number, text: string) => h.set(encoder.encode(text), at);
  const octal = (at: number, width: number, value: number) =>
    field(at, `${value.toString(8).padStart(width - 1, "0")}\0`);
  h.set(split.name, 0);
  octal(100, 8, 0o644);
  octal(108, 8, 0);
  octal(116, 8, 0);
  octal(124, 12, size);
  octal(136, 12, 0);
  field(156, "0");
  field(257, "ustar\0");
  field(263, "00");
  h.set(split.prefix, 345);
  // The checksum is taken with its own field as spaces.
  field(148, "        ");
  const sum = h.reduce((n, b) => n + b, 0);
  field(148, `${sum.toString(8).padStart(6, "0")}\0 `);
  return h;
}
