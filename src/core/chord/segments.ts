import { UnsafePathError } from "./errors.ts";
import type { Path, Seg } from "./types.ts";

/** Keys that could reach or replace an object's prototype; never accepted as a segment. */
const UNSAFE_SEGMENTS: ReadonlySet<string> = new Set(["__proto__", "constructor", "prototype"]);

export function isUnsafeSegment(seg: string): boolean {
  return UNSAFE_SEGMENTS.has(seg);
}

/** Throws `UnsafePathError` for `__proto__`, `constructor` and `prototype`. */
export function assertSafeKey(key: string, where: () => string): void {
  if (UNSAFE_SEGMENTS.has(key)) {
    throw new UnsafePathError(
      `Unsafe key ${JSON.stringify(key)} at ${where()}: "__proto__", "constructor" and "prototype" are never accepted as keys or path segments; rename the key.`,
    );
  }
}

/** `true` for a non-negative safe integer: a valid array index, count or id. */
export function isCount(n: unknown): n is number {
  return typeof n === "number" && Number.isSafeInteger(n) && n >= 0;
}

/** The array index a property key names ("3" → 3), or -1 when it is not a canonical index. */
export function indexOfKey(key: string): number {
  const n = Number(key);
  return Number.isSafeInteger(n) && n >= 0 && String(n) === key ? n : -1;
}

/** A path as people read it in error messages: `state.content[0].text`. */
export function describePath(path: readonly Seg[], root = "state"): string {
  let out = root;
  for (const seg of path) {
    out +=
      typeof seg === "number"
        ? `[${seg}]`
        : /^[A-Za-z_$][\w$]*$/.test(seg)
          ? `.${seg}`
          : `[${JSON.stringify(seg)}]`;
  }
  return out;
}

export function pathKey(path: Path): string {
  return JSON.stringify(path);
}
