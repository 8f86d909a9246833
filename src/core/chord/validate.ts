import { InvalidOpError } from "./errors.ts";
import { assertJsonPayload, MAX_JSON_DEPTH } from "./json.ts";
import { assertSafeKey, isCount } from "./segments.ts";
import type { Op, Path, WireOp } from "./types.ts";

/** Tuple length of each verb with its path; the short wire form is one less. */
const ARITY: Readonly<Record<string, number>> = { r: 2, s: 3, d: 2, a: 3, t: 3, p: 5, m: 3 };

/** `true` when wire op `w` carries its path (or a path id), `false` for the short form. */
export function carriesPath(w: WireOp): boolean {
  return w.length === ARITY[w[0]];
}

/** Verbs whose path may be the root `[]` (`r` replaces the root and carries no path). */
const ROOT_VERBS: ReadonlySet<string> = new Set(["p", "m"]);

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

function verbOf(op: unknown, wire: boolean): string {
  if (!Array.isArray(op)) {
    return fail(op, 'an op is a tuple array such as ["s", ["key"], value]');
  }
  const verb = op[0];
  if (wire && verb === "#") return verb;
  if (typeof verb !== "string" || ARITY[verb] === undefined) {
    return fail(
      op,
      `unknown verb ${show(verb)}; expected one of r, s, d, a, t, p, m${wire ? " or #" : ""}`,
    );
  }
  return verb;
}

/** Checks a path: an array of safe string keys and non-negative integer indexes. */
function assertValidPath(path: unknown, op: unknown, allowEmpty: boolean): asserts path is Path {
  if (!Array.isArray(path)) fail(op, "the path must be an array of keys and indexes");
  if (path.length > MAX_JSON_DEPTH) {
    fail(
      op,
      `the path has ${path.length} segments; the limit is ${MAX_JSON_DEPTH} (MAX_JSON_DEPTH, the deepest a document may nest)`,
    );
  }
  if (path.length === 0 && !allowEmpty) {
    fail(op, 'the path must not be empty (only "p" and "m" may address the root; "r" replaces it)');
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
    case "m":
      assertPermutation(op[at], op);
      return;
  }
}

/**
 * A permutation of `0..n-1`: every index once, nothing else. Whether `n` is the target
 * array's length is for `apply` to check.
 */
function assertPermutation(order: unknown, op: unknown): void {
  if (!Array.isArray(order)) fail(op, "the reorder permutation must be an array of indexes");
  const seen = new Uint8Array(order.length);
  for (const index of order) {
    if (!isCount(index) || index >= order.length) {
      fail(
        op,
        `the reorder permutation holds ${show(index)}; a permutation of ${order.length} elements holds each integer 0..${order.length - 1}`,
      );
    }
    if (seen[index] === 1) {
      fail(op, `the reorder permutation holds ${index} twice; each index must appear once`);
    }
    seen[index] = 1;
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
  const verb = verbOf(op, false);
  const tuple = op as unknown[];
  if (tuple.length !== ARITY[verb]) {
    fail(op, `"${verb}" takes ${ARITY[verb]} elements, got ${tuple.length}`);
  }
  if (verb === "r") {
    assertJsonPayload(tuple[1], `The value of ${show(op)}`);
    return;
  }
  assertValidPath(tuple[1], op, ROOT_VERBS.has(verb));
  assertOperands(verb, tuple, 2, tuple[1].length);
}

/**
 * Throws `InvalidOpError` (or `UnsafePathError`) unless `w` is a well-formed wire op:
 * a definition `["#", id, path]`, or an op whose path is inline, an id, or omitted (the
 * short form). Guards `decode`.
 *
 * @example
 * assertValidWireOp(["#", 3, ["text"]]); // ok: defines id 3
 * assertValidWireOp(["a", 3, "more"]);   // ok: path given by id 3
 * assertValidWireOp(["a", "more"]);      // ok: short form
 */
export function assertValidWireOp(w: unknown): asserts w is WireOp {
  const verb = verbOf(w, true);
  const tuple = w as unknown[];
  if (verb === "#") {
    if (tuple.length !== 3) fail(w, `"#" takes 3 elements, got ${tuple.length}`);
    if (!isCount(tuple[1])) fail(w, "a path id must be a non-negative integer");
    // The root is a legal definition: "p" and "m" may address it.
    assertValidPath(tuple[2], w, true);
    return;
  }
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
      if (!isCount(wirePath)) fail(w, "a path id must be a non-negative integer");
    } else {
      assertValidPath(wirePath, w, ROOT_VERBS.has(verb));
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

/** `true` for a verb whose path may be the root `[]`: `p` and `m`. */
export function mayAddressRoot(verb: string): boolean {
  return ROOT_VERBS.has(verb);
}
