import { ApplyError, InvalidOpError } from "./errors.ts";
import { cloneJson } from "./json.ts";
import { describePath } from "./segments.ts";
import type { JsonObject, JsonValue, Op, Path, Seg } from "./types.ts";
import { assertValidOp } from "./validate.ts";

type Container = JsonObject | JsonValue[];

function isContainer(v: unknown): v is Container {
  return typeof v === "object" && v !== null;
}

function define(container: Container, key: Seg, value: JsonValue): void {
  Object.defineProperty(container, key, {
    value,
    writable: true,
    enumerable: true,
    configurable: true,
  });
}

/** The value at `path`, following own properties and in-range indexes only. */
function resolve(root: JsonValue, path: Path, depth: number, op: Op): JsonValue {
  let cur: JsonValue = root;
  for (let i = 0; i < depth; i++) {
    cur = childOf(cur, path[i] as Seg, path, i, op);
  }
  return cur;
}

function childOf(cur: JsonValue, seg: Seg, path: Path, i: number, op: Op): JsonValue {
  const where = () => describePath(path.slice(0, i + 1), "target");
  if (Array.isArray(cur)) {
    if (typeof seg !== "number") {
      throw new ApplyError(`Cannot apply "${op[0]}": ${where()} indexes an array with a string.`);
    }
    if (seg >= cur.length) {
      throw new ApplyError(
        `Cannot apply "${op[0]}": ${where()} is past the end of an array of length ${cur.length}.`,
      );
    }
    return cur[seg] as JsonValue;
  }
  if (isContainer(cur)) {
    if (typeof seg !== "string") {
      throw new ApplyError(`Cannot apply "${op[0]}": ${where()} indexes an object with a number.`);
    }
    if (!Object.hasOwn(cur, seg)) {
      throw new ApplyError(`Cannot apply "${op[0]}": ${where()} does not exist.`);
    }
    return cur[seg] as JsonValue;
  }
  throw new ApplyError(
    `Cannot apply "${op[0]}": ${describePath(path.slice(0, i), "target")} is ${cur === null ? "null" : typeof cur}, not an object or array.`,
  );
}

/** The container holding the last segment of `path`, checked to take that key. */
function parentOf(root: JsonValue, path: Path, op: Op, mayAppend: boolean): [Container, Seg] {
  const parent = resolve(root, path, path.length - 1, op);
  const key = path[path.length - 1] as Seg;
  const where = () => describePath(path, "target");
  if (Array.isArray(parent)) {
    if (typeof key !== "number") {
      throw new ApplyError(`Cannot apply "${op[0]}": ${where()} indexes an array with a string.`);
    }
    const limit = mayAppend ? parent.length : parent.length - 1;
    if (key > limit) {
      throw new ApplyError(
        `Cannot apply "${op[0]}": ${where()} is past the end of an array of length ${parent.length}.`,
      );
    }
    return [parent, key];
  }
  if (!isContainer(parent)) {
    throw new ApplyError(
      `Cannot apply "${op[0]}": the parent of ${where()} is not an object or array.`,
    );
  }
  if (typeof key !== "string") {
    throw new ApplyError(`Cannot apply "${op[0]}": ${where()} indexes an object with a number.`);
  }
  return [parent, key];
}

/** Writes `key` and returns how to put it back. */
function write(container: Container, key: Seg, value: JsonValue): () => void {
  if (Array.isArray(container) && key === container.length) {
    container.push(value);
    return () => {
      container.pop();
    };
  }
  const had = Object.hasOwn(container, key);
  const old = (container as Record<Seg, JsonValue>)[key] as JsonValue;
  define(container, key, value);
  return had
    ? () => define(container, key, old)
    : () => {
        delete (container as Record<Seg, JsonValue>)[key];
      };
}

function stringAt(root: JsonValue, path: Path, op: Op): [Container, Seg, string] {
  const [parent, key] = parentOf(root, path, op, false);
  const value = childOf(parent, key, path, path.length - 1, op);
  if (typeof value !== "string") {
    throw new ApplyError(
      `Cannot apply "${op[0]}": ${describePath(path, "target")} is ${Array.isArray(value) ? "an array" : value === null ? "null" : typeof value}, not a string.`,
    );
  }
  return [parent, key, value];
}

function applyOne(root: JsonValue, op: Op, undo: (() => void)[]): JsonValue {
  switch (op[0]) {
    case "r":
      return cloneJson(op[1]);
    case "s": {
      const [parent, key] = parentOf(root, op[1], op, true);
      undo.push(write(parent, key, cloneJson(op[2])));
      return root;
    }
    case "d": {
      const [parent, key] = parentOf(root, op[1], op, false);
      if (Array.isArray(parent)) {
        throw new ApplyError(
          `Cannot apply "d": ${describePath(op[1], "target")} is an array element; remove it with "p".`,
        );
      }
      // Deleting an absent key is a no-op, as in the reference Chord, whose tracker sends
      // "d" for a key added and removed within one flush (docs/decisions/007).
      if (!Object.hasOwn(parent, key)) return root;
      const old = parent[key as string] as JsonValue;
      delete parent[key as string];
      undo.push(() => define(parent, key, old));
      return root;
    }
    case "a": {
      const [parent, key, text] = stringAt(root, op[1], op);
      undo.push(write(parent, key, text + op[2]));
      return root;
    }
    case "t": {
      const [parent, key, text] = stringAt(root, op[1], op);
      if (op[2] > text.length) {
        throw new ApplyError(
          `Cannot apply "t": dropping ${op[2]} code units from ${describePath(op[1], "target")}, which has only ${text.length}.`,
        );
      }
      undo.push(write(parent, key, text.slice(op[2])));
      return root;
    }
    case "p": {
      const [, path, index, remove, items] = op;
      const arr = resolve(root, path, path.length, op);
      if (!Array.isArray(arr)) {
        throw new ApplyError(`Cannot apply "p": ${describePath(path, "target")} is not an array.`);
      }
      if (index > arr.length || index + remove > arr.length) {
        throw new ApplyError(
          `Cannot apply "p": splicing ${remove} at ${index} in ${describePath(path, "target")}, an array of length ${arr.length}.`,
        );
      }
      const removed = arr.splice(index, remove, ...cloneJson(items));
      undo.push(() => {
        arr.splice(index, items.length, ...removed);
      });
      return root;
    }
    case "m": {
      const [, path, order] = op;
      const arr = resolve(root, path, path.length, op);
      if (!Array.isArray(arr)) {
        throw new ApplyError(`Cannot apply "m": ${describePath(path, "target")} is not an array.`);
      }
      if (order.length !== arr.length) {
        throw new ApplyError(
          `Cannot apply "m": a permutation of ${order.length} elements does not reorder ${describePath(path, "target")}, an array of length ${arr.length}.`,
        );
      }
      const old = arr.slice();
      for (let i = 0; i < order.length; i++) arr[i] = old[order[i] as number] as JsonValue;
      undo.push(() => {
        for (let i = 0; i < old.length; i++) arr[i] = old[i] as JsonValue;
      });
      return root;
    }
  }
}

/**
 * Applies a batch to `target` and returns the new value: mutates `target` in place
 * (except for `r`, which yields a new value), so always use the result. Every op is
 * validated first (`assertValidOp`); own properties only; payloads are copied in.
 * All or nothing: if any op does not fit, every earlier op of the batch is undone and
 * the error is thrown.
 *
 * @example
 * let doc: JsonValue = { text: "abc" };
 * doc = apply(doc, [["t", ["text"], 1], ["a", ["text"], "d"]]); // { text: "bcd" }
 */
export function apply(target: JsonValue, ops: readonly Op[]): JsonValue {
  if (!Array.isArray(ops)) throw new InvalidOpError("Invalid batch: ops must be an array.");
  for (let i = 0; i < ops.length; i++) {
    const op: unknown = ops[i];
    assertValidOp(op);
    if (op[0] === "r" && i > 0) {
      throw new InvalidOpError(`Invalid batch: "r" at index ${i}; it may only come first.`);
    }
  }
  const undo: (() => void)[] = [];
  let root = target;
  try {
    for (const op of ops) root = applyOne(root, op, undo);
  } catch (error) {
    for (let i = undo.length - 1; i >= 0; i--) (undo[i] as () => void)();
    throw error;
  }
  return root;
}
