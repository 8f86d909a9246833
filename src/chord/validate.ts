import { InvalidOpError } from "./errors.ts";
import { assertJsonPayload, MAX_JSON_DEPTH } from "./json.ts";
import { assertSafeKey, isCount } from "./segments.ts";
import type { Op, Path, WireOp } from "./types.ts";

/** Tuple length of each verb with its path; the short wire form is one less. */
const ARITY: Readonly<Record<string, number>> = { r: 2, s: 3, d: 2, a: 3, t: 3, p: 5 };

/**
 * `true` when the batch starts with `r`: a self-contained recovery point. A token
 * comparison, never a path inspection.
 *
 * @example
 * isBase([["r", {}]]); // true
 */
export function isBase(ops: readonly (Op | WireOp)[]): boolean {
  return ops[0]?.[0] === "r";
}

function show(value: unknown): string {
  try {
    const text = JSON.stringify(value) ?? String(value);
    return text.length > 120 ? `${text.slice(0, 117)}...` : text;
  } catch {
    // Too deep or too odd to print (String() would recurse as deep as stringify did).
    return Array.isArray(value) ? "[...]" : typeof value;
  }
}

function fail(what: unknown, problem: string): never {
  throw new InvalidOpError(`Invalid op ${show(what)}: ${problem}.`);
}

function verbOf(op: unknown): string {
  if (!Array.isArray(op)) {
    return fail(op, 'an op is a tuple array such as ["s", ["key"], value]');
  }
  const verb = op[0];
  if (typeof verb !== "string" || ARITY[verb] === undefined) {
    return fail(op, `unknown verb ${show(verb)}; expected one of r, s, d, a, t, p`);
  }
  return verb;
}

/** Checks a path: an array of safe string keys and non-negative integer indexes. */
export function assertValidPath(
  path: unknown,
  op: unknown,
  allowEmpty: boolean,
): asserts path is Path {
  if (!Array.isArray(path)) fail(op, "the path must be an array of keys and indexes");
  if (path.length > MAX_JSON_DEPTH) {
    fail(
      op,
      `the path has ${path.length} segments; the limit is ${MAX_JSON_DEPTH} (MAX_JSON_DEPTH, the deepest a document may nest)`,
    );
  }
  if (path.length === 0 && !allowEmpty) {
    fail(op, 'the path must not be empty (only "r" and "p" may address the root)');
  }
  for (const seg of path) {
    if (typeof seg === "string") assertSafeKey(seg, () => `path ${show(path)}`);
    else if (!isCount(seg)) {
      fail(op, `path segment ${show(seg)} must be a string key or a non-negative integer index`);
    }
  }
}

/**
 * Checks everything after the path, starting at `at`. `pathLength` is the length of the
 * op's path (0 when the wire form omits or interns it; `apply` checks again with it).
 */
function assertOperands(verb: string, op: unknown[], at: number, pathLength: number): void {
  const room = MAX_JSON_DEPTH - pathLength;
  switch (verb) {
    case "s":
      assertJsonPayload(op[at], `The value of ${show(op)}`, room);
      return;
    case "a":
      if (typeof op[at] !== "string") fail(op, "the appended text must be a string");
      return;
    case "t":
      if (!isCount(op[at])) fail(op, "the trim count must be a non-negative integer");
      return;
    case "p": {
      if (!isCount(op[at])) fail(op, "the splice index must be a non-negative integer");
      if (!isCount(op[at + 1])) fail(op, "the splice remove count must be a non-negative integer");
      const items = op[at + 2];
      if (!Array.isArray(items)) fail(op, "the splice items must be an array");
      assertJsonPayload(items, `The items of ${show(op)}`, room);
      return;
    }
  }
}

/**
 * Throws `InvalidOpError` (or `UnsafePathError`) unless `op` is a well-formed op. Guards
 * `apply`: ops are untrusted input.
 *
 * @example
 * assertValidOp(["t", ["text"], 3]);   // ok
 * assertValidOp(["t", ["text"], -1]);  // throws InvalidOpError
 */
export function assertValidOp(op: unknown): asserts op is Op {
  const verb = verbOf(op);
  const tuple = op as unknown[];
  if (tuple.length !== ARITY[verb]) {
    fail(op, `"${verb}" takes ${ARITY[verb]} elements, got ${tuple.length}`);
  }
  if (verb === "r") {
    assertJsonPayload(tuple[1], `The value of ${show(op)}`);
    return;
  }
  assertValidPath(tuple[1], op, verb === "p");
  assertOperands(verb, tuple, 2, tuple[1].length);
}

/** `true` for the interning form `["#", id, path]`. */
export function isInternForm(p: unknown): p is ["#", number, unknown] {
  return Array.isArray(p) && p.length === 3 && p[0] === "#" && Array.isArray(p[2]);
}

/**
 * Throws `InvalidOpError` (or `UnsafePathError`) unless `w` is a well-formed wire op:
 * a full path, an interned id, `["#", id, path]`, or the short form with no path.
 * Guards `decode`.
 *
 * @example
 * assertValidWireOp(["a", 3, "more"]);  // ok: path interned as id 3
 * assertValidWireOp(["a", "more"]);     // ok: short form
 */
export function assertValidWireOp(w: unknown): asserts w is WireOp {
  const verb = verbOf(w);
  const tuple = w as unknown[];
  const full = ARITY[verb] as number;
  if (verb === "r") {
    if (tuple.length !== 2) fail(w, `"r" takes 2 elements, got ${tuple.length}`);
    assertJsonPayload(tuple[1], `The value of ${show(w)}`);
    return;
  }
  if (tuple.length === full) {
    const wirePath = tuple[1];
    let pathLength = 0;
    if (typeof wirePath === "number") {
      if (!isCount(wirePath)) fail(w, "an interned path id must be a non-negative integer");
    } else if (isInternForm(wirePath)) {
      if (!isCount(wirePath[1])) fail(w, "an interned path id must be a non-negative integer");
      assertValidPath(wirePath[2], w, verb === "p");
      pathLength = wirePath[2].length;
    } else {
      assertValidPath(wirePath, w, verb === "p");
      pathLength = wirePath.length;
    }
    assertOperands(verb, tuple, 2, pathLength);
  } else if (tuple.length === full - 1) {
    assertOperands(verb, tuple, 1, 0);
  } else {
    fail(
      w,
      `"${verb}" takes ${full} elements (or ${full - 1} without its path), got ${tuple.length}`,
    );
  }
}
