/**
 * The tracker: a proxy over a JSON value that records what each write changed, and a
 * flush that turns the records into ops. Read top to bottom: the public face, the
 * records kept per node, how writes are recorded, the array methods, the proxy traps,
 * the flush, discard, writes by path (`set`, known text edits), and `track` itself,
 * which only wires them.
 *
 * Depends only on this folder (json, segments, text-ops, overlap, types, errors); keep
 * the arrows pointing that way. Functions are module-level and take the node's record,
 * so a read, a scalar write and a flush make no closure (decisions 016 and 126).
 */
import { NotJsonError } from "./errors.ts";
import { cloneJson, importJson, registerProxy, targetOfProxy } from "./json.ts";
import { MAX_CANDIDATES } from "./overlap.ts";
import { assertSafeKey, describePath, indexOfKey, isUnsafeSegment } from "./segments.ts";
import { textOps } from "./text-ops.ts";
import type { JsonObject, JsonValue, Op, Path, Seg } from "./types.ts";

// ─── Public face ─────────────────────────────────────────────────────────────────────

/**
 * Types whose values are JSON. Interfaces qualify too (no index signature needed);
 * an optional property means "absent". Functions, Maps, Dates and the like do not.
 */
type JsonShape<T> = [T] extends [JsonValue]
  ? T
  : T extends string | number | boolean | null | undefined
    ? T
    : T extends (...args: never[]) => unknown
      ? never
      : T extends readonly unknown[]
        ? { [I in keyof T]: JsonShape<T[I]> }
        : T extends object
          ? { [K in keyof T]: K extends string ? JsonShape<T[K]> : never }
          : never;

/** A tracked value: mutate `state` as plain JS, then `flush()` the ops that changed it. */
export interface Tracker<T> {
  /**
   * The live draft. Setting it replaces the whole value (copied in) and makes the next
   * flush a base batch.
   */
  state: T;
  /** `true` when something was written (or a base is due) since the last flush. */
  readonly dirty: boolean;
  /**
   * What the last flush compared: nodes visited and entries (keys, elements) looked at.
   * It grows with what changed, never with the size of the state.
   */
  readonly work: FlushWork;
  /**
   * The ops that turn the accepted baseline into the current state, then accepts the
   * current state as the new baseline. The first flush, and the first after `rebase()`
   * or a `state` assignment, is a base batch `[["r", snapshot]]`.
   */
  flush(): Op[];
  /**
   * Records a change to the string at `path` that the caller already knows:
   * `next = current.slice(drop) + append`. The next flush sends it as `t` / `a` exactly,
   * without comparing the strings, and the edit never copies the text (cost is the
   * appended text, whatever the string's length). Several edits before a flush fold into
   * one `t` and one `a`; a plain assignment to the same string in between makes the flush
   * compare as usual. Throws and changes nothing when `path` does not hold a string or
   * `drop` is not an integer in `[0, current.length]`.
   * @example t.editText(["content", 0, "text"], 32, "32 new characters…")
   */
  editText(path: Path, drop: number, append: string): void;
  /**
   * `value` into the slot at `path`, exactly as assigning through `state` would (the same
   * checks and errors, the same ops; `undefined` deletes an object's key). For callers
   * that write by a key held in a variable: V8 runs a keyed store on a Proxy through the
   * runtime (~100 ns, against ~10 ns for this call; decision 016). Throws and changes
   * nothing when the path's parent is not an object or array in the state.
   * @example t.set(["truncation", "totalLines"], 1251)
   */
  set(path: Path, value: unknown): void;
  /** Makes the next flush a base batch. */
  rebase(): void;
  /**
   * Puts the state back to the baseline (the state at the last flush, or the value
   * given to `track` before any flush): every write since then is undone, including a
   * `state` assignment. A pending `rebase()` stays pending.
   */
  discard(): void;
}

/** Work done by one flush: nodes visited, entries (keys, elements) compared. */
interface FlushWork {
  readonly nodes: number;
  readonly entries: number;
}

// ─── Records ─────────────────────────────────────────────────────────────────────────

/** Marks "this key did not exist" in a node's record of first-write values. */
const ABSENT: unique symbol = Symbol("absent");
type Slot = JsonValue | typeof ABSENT;
type Node = JsonObject | JsonValue[];

/**
 * Where a node keeps its record: a non-enumerable symbol property on the plain node
 * (which JSON, `Object.keys` and the copies in ops never see). A property read is a few
 * times faster than a WeakMap lookup, and reads through the proxy do one per level.
 */
const META: unique symbol = Symbol("chord.meta");
type Held = Node & { [META]?: Meta };

/** One tracker's own state: its root, what the next flush owes, and its counters. */
interface Tree {
  root: JsonValue;
  rootMeta: Meta | null;
  /** Root as of the last flush, kept while a `state` assignment is pending (for discard). */
  replaced: { root: JsonValue; meta: Meta | null } | null;
  /** Base batches are due for the first flush and after `rebase()`. */
  baseDue: boolean;
  rebaseAsked: boolean;
  /** Arrays sorted or reversed since the last flush: a reorder may be their smallest delta. */
  reordered: Set<Meta>;
  /** This tracker's counters for its last flush. */
  work: { nodes: number; entries: number };
}

/** Per-node bookkeeping: who holds the node, and what it looked like at the baseline. */
interface Meta {
  tree: Tree;
  node: Node;
  proxy: Node;
  isArray: boolean;
  parent: Meta | null;
  /** Key in the parent. For arrays an index, refreshed when flush sees the array move. */
  key: Seg;
  /** Baseline value of every key written since the last flush (objects; arrays outside `old`). */
  changed: Map<Seg, Slot> | null;
  /** Arrays: baseline length when only appends (and index writes) happened; else -1. */
  appendFrom: number;
  /** Arrays: the baseline element list, once a structural change happened. */
  old: JsonValue[] | null;
  /**
   * Children with pending changes somewhere below them, each once (`queued` guards the
   * push). Emptied, not dropped, when settled: no allocation per flush (decision 016).
   */
  dirtyChildren: Meta[] | null;
  /** Registered in `parent.dirtyChildren`. */
  queued: boolean;
  methods: Record<string, (...args: unknown[]) => unknown> | null;
  /** Known string edits since the last flush, by key (see `editText`). */
  edits: Map<Seg, TextEdit> | null;
  /** How strings edited through `editText` are held, by key; outlives flushes. */
  ropes: Map<Seg, TextRope> | null;
}

/** A known change since the baseline: `result = baseline.slice(drop) + append`. */
interface TextEdit {
  baseLength: number;
  drop: number;
  append: string;
  /** The string the edit produced; anything else in the slot means a plain write came after. */
  result: string;
}

/**
 * An edited string as a slice of a flat `backing` plus the text appended since:
 * `value === backing.slice(start) + tail`. Slicing a flat string and appending to a
 * concatenation are O(1) in JS engines, while slicing a concatenation flattens (copies)
 * it, so an edit that drops from the start of `value` itself would copy the whole
 * string every time (decision 014). The backing is rebuilt only when a drop reaches past
 * it into the tail, i.e. at most once per its own length of appended text.
 */
interface TextRope {
  value: string;
  backing: string;
  start: number;
  tail: string;
}

function metaOf(node: Node): Meta | undefined {
  return (node as Held)[META];
}

function isNode(v: unknown): v is Node {
  return typeof v === "object" && v !== null;
}

/** A JSON scalar that needs no checking or copying (a non-finite number is not one). */
function isPlainScalar(v: unknown): v is string | boolean | number | null {
  return (
    typeof v === "string" ||
    typeof v === "boolean" ||
    v === null ||
    (typeof v === "number" && Number.isFinite(v))
  );
}

function newMeta(tree: Tree, node: Node, parent: Meta | null, key: Seg): Meta {
  const meta: Meta = {
    tree,
    node,
    proxy: node,
    isArray: Array.isArray(node),
    parent,
    key,
    changed: null,
    appendFrom: -1,
    old: null,
    dirtyChildren: null,
    queued: false,
    methods: null,
    edits: null,
    ropes: null,
  };
  meta.proxy = new Proxy(node, TRAPS);
  registerProxy(meta.proxy, node);
  registerProxy(node, node);
  Object.defineProperty(node, META, { value: meta });
  return meta;
}

/** Makes `next` the tree's root (its record is made now, so the proxy exists). */
function attach(tree: Tree, next: JsonValue): void {
  tree.root = next;
  tree.rootMeta = isNode(next) ? newMeta(tree, next, null, "") : null;
}

function proxyOf(node: Node, parent: Meta, key: Seg): Node {
  return (metaOf(node) ?? newMeta(parent.tree, node, parent, key)).proxy;
}

function pathOf(meta: Meta): Seg[] {
  const segs: Seg[] = [];
  for (let m: Meta | null = meta; m?.parent; m = m.parent) segs.push(m.key);
  return segs.reverse();
}

/** Registers `meta` up the chain so flush can find it from the root. */
function touch(meta: Meta): void {
  for (let m = meta; m.parent && !m.queued; m = m.parent) {
    m.queued = true;
    if (m.parent.dirtyChildren === null) m.parent.dirtyChildren = [];
    m.parent.dirtyChildren.push(m);
  }
}

function recordKey(meta: Meta, key: Seg, old: Slot): void {
  if (meta.changed === null) meta.changed = new Map();
  if (!meta.changed.has(key)) meta.changed.set(key, old);
}

function hasPending(meta: Meta | null): boolean {
  return (
    meta !== null &&
    (meta.changed !== null ||
      meta.old !== null ||
      meta.appendFrom >= 0 ||
      (meta.dirtyChildren !== null && meta.dirtyChildren.length > 0))
  );
}

// ─── Recording writes ────────────────────────────────────────────────────────────────

/** Arrays: before a change that moves elements, keep the baseline element list. */
function beginStructural(meta: Meta): void {
  if (meta.old !== null) return;
  // Elements may move: known edits are re-derived by comparison at flush.
  meta.edits = null;
  const arr = meta.node as JsonValue[];
  const old = arr.slice(0, meta.appendFrom >= 0 ? meta.appendFrom : arr.length);
  if (meta.changed !== null) {
    for (const [i, v] of meta.changed) old[i as number] = v as JsonValue;
    meta.changed = null;
  }
  meta.appendFrom = -1;
  meta.old = old;
}

function beginAppend(meta: Meta): void {
  if (meta.old === null && meta.appendFrom < 0) meta.appendFrom = meta.node.length as number;
}

function writeIndex(meta: Meta, i: number, v: JsonValue): void {
  const arr = meta.node as JsonValue[];
  if (i === arr.length) {
    beginAppend(meta);
    arr.push(v);
  } else {
    if (meta.old === null && (meta.appendFrom < 0 || i < meta.appendFrom)) {
      recordKey(meta, i, arr[i] as JsonValue);
    }
    arr[i] = v;
  }
  touch(meta);
}

function notJson(meta: Meta, what: string): never {
  throw new NotJsonError(`Cannot write ${what} at ${describePath(pathOf(meta))}.`);
}

function setLength(meta: Meta, value: unknown): void {
  const arr = meta.node as JsonValue[];
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
    notJson(meta, `length ${String(value)}: an array length must be a non-negative integer`);
  }
  const n = value as number;
  if (n === arr.length) return;
  if (n < arr.length) {
    beginStructural(meta);
    arr.length = n;
  } else {
    beginAppend(meta);
    while (arr.length < n) arr.push(null);
  }
  touch(meta);
}

/**
 * A private copy of `v` for slot `key` of `meta`, checked as JSON. A string, boolean,
 * finite number or null is its own copy: taking it here skips `importJson`'s closures
 * and arrays, allocated at every write of a total or a flag otherwise.
 */
function importAt(meta: Meta, key: Seg, v: unknown): JsonValue {
  return isPlainScalar(v) ? v : importJson(v, () => [...pathOf(meta), key]);
}

/** `draft[prop] = value` on the node of `meta`: every write by key lands here. */
function writeProp(meta: Meta, prop: string, value: unknown): void {
  if (meta.isArray) {
    writeElement(meta, prop, value);
    return;
  }
  // The message's closure is made only for a key that is refused (it was a per-write cost).
  if (isUnsafeSegment(prop)) assertSafeKey(prop, () => describePath([...pathOf(meta), prop]));
  const obj = meta.node as JsonObject;
  const has = Object.hasOwn(obj, prop);
  if (value === undefined) {
    if (has) removeKey(meta, obj, prop);
    return;
  }
  if (has && sameSlot(obj[prop], value)) return;
  const v = importAt(meta, prop, value);
  recordKey(meta, prop, has ? (obj[prop] as JsonValue) : ABSENT);
  obj[prop] = v;
  touch(meta);
}

/** `array[prop] = value`: an index (at most one past the end) or `length`. */
function writeElement(meta: Meta, prop: string, value: unknown): void {
  if (prop === "length") {
    setLength(meta, value);
    return;
  }
  const arr = meta.node as JsonValue[];
  const i = indexOfKey(prop);
  if (i < 0) {
    notJson(meta, `property ${JSON.stringify(prop)} on an array: arrays take indexes only`);
  }
  if (i > arr.length) {
    notJson(
      meta,
      `index ${i} of an array of length ${arr.length}: that would leave a hole (sparse arrays are not JSON); push, or set length first`,
    );
  }
  if (value === undefined) notJson(meta, "undefined into an array (use null)");
  if (i < arr.length && sameSlot(arr[i], value)) return;
  writeIndex(meta, i, importAt(meta, i, value));
}

function removeKey(meta: Meta, obj: JsonObject, key: string): void {
  recordKey(meta, key, obj[key] as JsonValue);
  delete obj[key];
  touch(meta);
}

/** Assigning a node's own draft (or an equal primitive) back to its slot changes nothing. */
function sameSlot(current: JsonValue | undefined, value: unknown): boolean {
  return current === value || (isNode(current) && targetOfProxy(value) === current);
}

// ─── Array methods ───────────────────────────────────────────────────────────────────

const ARRAY_MUTATORS: ReadonlySet<string> = new Set([
  "push",
  "pop",
  "shift",
  "unshift",
  "splice",
  "sort",
  "reverse",
  "fill",
  "copyWithin",
]);

/**
 * The mutators of one tracked array, made once per array on first use and kept on its
 * record (`const push = draft.push; push(x)` works, as on a plain array).
 */
function arrayMethods(meta: Meta): Record<string, (...args: unknown[]) => unknown> {
  const arr = meta.node as JsonValue[];
  const importItems = (items: unknown[], at: number): JsonValue[] =>
    items.map((item, i) => {
      if (item === undefined) notJson(meta, "undefined into an array (use null)");
      return importAt(meta, at + i, item);
    });
  const out = (v: JsonValue | undefined, i: number): unknown =>
    isNode(v) ? proxyOf(v, meta, i) : v;
  return {
    push: (...items) => {
      const values = importItems(items, arr.length);
      if (values.length === 0) return arr.length;
      beginAppend(meta);
      for (const v of values) arr.push(v);
      touch(meta);
      return arr.length;
    },
    pop: () => {
      if (arr.length === 0) return undefined;
      beginStructural(meta);
      const v = arr.pop();
      touch(meta);
      return out(v, arr.length);
    },
    shift: () => {
      if (arr.length === 0) return undefined;
      beginStructural(meta);
      const v = arr.shift();
      touch(meta);
      return out(v, 0);
    },
    unshift: (...items) => {
      const values = importItems(items, 0);
      if (values.length === 0) return arr.length;
      beginStructural(meta);
      arr.unshift(...values);
      touch(meta);
      return arr.length;
    },
    splice: (...args) => {
      if (args.length === 0) return [];
      const start = relativeIndex(args[0], arr.length, 0);
      const count =
        args.length < 2
          ? arr.length - start
          : Math.min(Math.max(toInteger(args[1]), 0), arr.length - start);
      const values = importItems(args.slice(2), start);
      if (count === 0 && values.length === 0) return [];
      beginStructural(meta);
      const removed = arr.splice(start, count, ...values);
      touch(meta);
      return removed.map((v, i) => out(v, start + i));
    },
    sort: (compare) => {
      if (compare !== undefined && typeof compare !== "function") {
        throw new TypeError("sort(compare): compare must be a function.");
      }
      beginStructural(meta);
      const cmp = compare as ((a: unknown, b: unknown) => number) | undefined;
      arr.sort(cmp && ((a, b) => cmp(out(a, -1), out(b, -1))));
      meta.tree.reordered.add(meta);
      touch(meta);
      return meta.proxy;
    },
    reverse: () => {
      beginStructural(meta);
      arr.reverse();
      meta.tree.reordered.add(meta);
      touch(meta);
      return meta.proxy;
    },
    fill: (value, start, end) => {
      const from = relativeIndex(start, arr.length, 0);
      const to = relativeIndex(end, arr.length, arr.length);
      if (value === undefined) notJson(meta, "undefined into an array (use null)");
      const v = importAt(meta, from, value);
      if (from >= to) return meta.proxy;
      beginStructural(meta);
      for (let i = from; i < to; i++) arr[i] = i === from ? v : cloneJson(v);
      touch(meta);
      return meta.proxy;
    },
    copyWithin: (target, start, end) => {
      beginStructural(meta);
      arr.copyWithin(
        relativeIndex(target, arr.length, 0),
        relativeIndex(start, arr.length, 0),
        relativeIndex(end, arr.length, arr.length),
      );
      // copyWithin duplicates references; every node must have exactly one holder.
      const seen = new Set<Node>();
      for (let i = 0; i < arr.length; i++) {
        const v = arr[i];
        if (!isNode(v)) continue;
        if (seen.has(v)) arr[i] = cloneJson(v);
        else seen.add(v);
      }
      touch(meta);
      return meta.proxy;
    },
  };
}

function toInteger(v: unknown): number {
  const n = Math.trunc(Number(v));
  return Number.isNaN(n) ? 0 : n;
}

/** Array-method index arguments: negative counts from the end, clamped to [0, length]. */
function relativeIndex(v: unknown, length: number, fallback: number): number {
  if (v === undefined) return fallback;
  const n = toInteger(v);
  return n < 0 ? Math.max(length + n, 0) : Math.min(n, length);
}

// ─── Proxy traps ─────────────────────────────────────────────────────────────────────

/**
 * One handler for every proxy of every tracker; each trap finds the node's record on
 * the node itself. A handler per node cost an object and five closures for every node
 * read through the state (decision 126).
 */
const TRAPS: ProxyHandler<Node> = {
  get(target, prop) {
    if (typeof prop === "symbol" || prop === "__proto__") return Reflect.get(target, prop);
    const meta = metaOf(target) as Meta;
    if (meta.isArray && ARRAY_MUTATORS.has(prop)) {
      if (meta.methods === null) meta.methods = arrayMethods(meta);
      return meta.methods[prop];
    }
    const v = (target as Record<string, unknown>)[prop];
    if (!isNode(v)) return v;
    return (metaOf(v) ?? newMeta(meta.tree, v, meta, meta.isArray ? Number(prop) : prop)).proxy;
  },
  set(target, prop, value) {
    const meta = metaOf(target) as Meta;
    if (typeof prop === "symbol") {
      return notJson(meta, `to symbol key ${String(prop)}: symbol keys are not JSON`);
    }
    writeProp(meta, prop, value);
    return true;
  },
  deleteProperty(target, prop) {
    if (typeof prop === "symbol") return true;
    const meta = metaOf(target) as Meta;
    if (meta.isArray) {
      return notJson(meta, `delete [${prop}] on an array: it would leave a hole; use splice`);
    }
    const obj = target as JsonObject;
    if (Object.hasOwn(obj, prop)) removeKey(meta, obj, prop);
    return true;
  },
  defineProperty(target) {
    return notJson(metaOf(target) as Meta, "with defineProperty: assign plain values instead");
  },
  setPrototypeOf(target) {
    return notJson(metaOf(target) as Meta, "a prototype: tracked values are plain JSON");
  },
};

// ─── Flush ───────────────────────────────────────────────────────────────────────────

/** How many elements may be rewritten one by one before a run is sent as one splice. */
const PAIRWISE_LIMIT = 4;

function flushTree(tree: Tree): Op[] {
  tree.work.nodes = 0;
  tree.work.entries = 0;
  if (tree.baseDue || tree.rebaseAsked || tree.replaced !== null) {
    tree.baseDue = false;
    tree.rebaseAsked = false;
    tree.replaced = null;
    tree.reordered.clear();
    if (tree.rootMeta !== null) settle(tree.rootMeta);
    return [["r", cloneJson(tree.root)]];
  }
  const ops: Op[] = [];
  if (tree.rootMeta !== null && hasPending(tree.rootMeta)) diffNode(tree.rootMeta, [], ops);
  // Clearing even an empty Set allocates a new table in V8: only when there is something.
  if (tree.reordered.size > 0) tree.reordered.clear();
  return ops;
}

/** Forgets pending changes of `meta` and everything below it (already sent or dropped). */
function settle(meta: Meta): void {
  meta.changed = null;
  meta.edits = null;
  meta.appendFrom = -1;
  meta.old = null;
  meta.queued = false;
  const children = meta.dirtyChildren;
  if (children !== null && children.length > 0) {
    for (let i = 0; i < children.length; i++) settle(children[i] as Meta);
    children.length = 0;
  }
}

/**
 * `[...path, key]`. Written out because `Array.prototype.concat` checks every argument
 * for `Symbol.isConcatSpreadable`, which made it the largest single cost of a flush that
 * writes a few primitives (profiled on the sink bench's update, decision 016).
 */
function childPath(path: Path, key: Seg): Seg[] {
  const n = path.length;
  const out = new Array<Seg>(n + 1);
  for (let i = 0; i < n; i++) out[i] = path[i] as Seg;
  out[n] = key;
  return out;
}

/** Ops for one slot whose value changed from `prev` to `next` (not the same node). */
function slotOps(tree: Tree, path: Path, prev: Slot, next: Slot, ops: Op[]): void {
  tree.work.entries++;
  if (prev === next) return;
  if (next === ABSENT) ops.push(["d", path]);
  else if (typeof prev === "string" && typeof next === "string") textOps(path, prev, next, ops);
  else ops.push(["s", path, cloneJson(next)]);
}

/** The ops of a known edit: `t` for what left the start, `a` for what came at the end. */
function editOps(path: Path, edit: TextEdit, ops: Op[]): void {
  if (edit.drop > 0) ops.push(["t", path, edit.drop]);
  if (edit.append !== "") ops.push(["a", edit.drop > 0 ? path.slice() : path, edit.append]);
}

/** Descends into a child node that stayed in place, if it has pending changes. */
function visitChild(child: JsonValue | undefined, key: Seg, path: Path, ops: Op[]): void {
  if (!isNode(child)) return;
  const meta = metaOf(child);
  if (meta === undefined) return;
  meta.key = key;
  if (meta.queued) diffNode(meta, childPath(path, key), ops);
}

function diffNode(meta: Meta, path: Path, ops: Op[]): void {
  meta.tree.work.nodes++;
  if (meta.old !== null) {
    diffArray(meta, meta.old, path, ops);
  } else {
    if (meta.changed !== null) diffKeys(meta, meta.changed, path, ops);
    if (meta.dirtyChildren !== null) diffChildren(meta, meta.dirtyChildren, path, ops);
    if (meta.appendFrom >= 0) {
      const arr = meta.node as JsonValue[];
      if (arr.length > meta.appendFrom) {
        ops.push(["p", path, meta.appendFrom, 0, cloneJson(arr.slice(meta.appendFrom))]);
      }
    }
  }
  settle(meta);
}

/** The keys written since the last flush: a known edit as `t`/`a`, anything else compared. */
function diffKeys(meta: Meta, changed: Map<Seg, Slot>, path: Path, ops: Op[]): void {
  const node = meta.node as Record<Seg, JsonValue>;
  for (const [key, prev] of changed) {
    const has = meta.isArray || Object.hasOwn(node, key);
    const edit = meta.edits?.get(key);
    if (edit !== undefined && has && node[key] === edit.result) {
      meta.tree.work.entries++;
      editOps(childPath(path, key), edit, ops);
    } else {
      slotOps(meta.tree, childPath(path, key), prev, has ? (node[key] as JsonValue) : ABSENT, ops);
    }
  }
}

/** Children with changes below them that are still where they were (not rewritten whole). */
function diffChildren(meta: Meta, children: Meta[], path: Path, ops: Op[]): void {
  const node = meta.node as Record<Seg, JsonValue>;
  const limit = meta.appendFrom >= 0 ? meta.appendFrom : Number.POSITIVE_INFINITY;
  for (const child of children) {
    meta.tree.work.entries++;
    if (!child.queued) continue;
    if (meta.isArray && node[child.key] !== child.node) {
      // The index went stale (the element moved in a batch that ended in a base).
      const i = (meta.node as JsonValue[]).indexOf(child.node);
      if (i >= 0) child.key = i;
    }
    const inPlace =
      node[child.key] === child.node &&
      !meta.changed?.has(child.key) &&
      !(meta.isArray && (child.key as number) >= limit);
    if (inPlace) diffNode(child, childPath(path, child.key), ops);
  }
}

/**
 * Arrays after a structural change. An array only sorted or reversed since the last
 * flush, with no pending change inside its elements, is sent as one `m` where that is
 * smaller than the splices (docs/decisions/009); otherwise as splices.
 */
function diffArray(meta: Meta, prev: JsonValue[], path: Path, ops: Op[]): void {
  const order = meta.tree.reordered.has(meta) ? reorderOf(meta, prev) : null;
  if (order === null) {
    spliceArray(meta, prev, path, ops);
    return;
  }
  // The splice form visits no pending child (there is none) and rekeys the moved
  // ones, which the reorder needs as well; only the ops differ.
  const spliced: Op[] = [];
  spliceArray(meta, prev, path, spliced);
  const reorder: Op = ["m", path, order];
  if (wireLength([reorder]) < wireLength(spliced)) ops.push(reorder);
  else for (const op of spliced) ops.push(op);
}

/** Common head and tail stay, the middle is one splice. */
function spliceArray(meta: Meta, prev: JsonValue[], path: Path, ops: Op[]): void {
  const next = meta.node as JsonValue[];
  const shorter = Math.min(prev.length, next.length);
  let head = 0;
  while (head < shorter && prev[head] === next[head]) head++;
  let tail = 0;
  while (tail < shorter - head && prev[prev.length - 1 - tail] === next[next.length - 1 - tail]) {
    tail++;
  }
  meta.tree.work.entries += head + tail;
  const removed = prev.length - head - tail;
  const inserted = next.length - head - tail;
  if (head === 0 && removed > 0 && inserted > 0) {
    const drop = droppedFromFront(prev, next);
    if (drop > 0) {
      rollArray(meta, prev.length - drop, drop, path, ops);
      return;
    }
  }
  if (removed > 0 && inserted > 0 && removed === prev.length) {
    // The whole array changed: say so with one set (or a base when it is the root).
    if (path.length === 0) ops.push(["r", cloneJson(next)]);
    else ops.push(["s", path, cloneJson(next)]);
    for (let i = 0; i < next.length; i++) rekey(next[i], i);
    return;
  }
  for (let i = 0; i < head; i++) visitChild(next[i], i, path, ops);
  if (removed === inserted && removed <= PAIRWISE_LIMIT) {
    for (let i = head; i < head + removed; i++) {
      if (prev[i] === next[i]) {
        visitChild(next[i], i, path, ops);
      } else {
        slotOps(meta.tree, childPath(path, i), prev[i] as JsonValue, next[i] as JsonValue, ops);
        rekey(next[i], i);
      }
    }
  } else if (removed > 0 || inserted > 0) {
    ops.push(["p", path, head, removed, cloneJson(next.slice(head, head + inserted))]);
    for (let i = head; i < head + inserted; i++) rekey(next[i], i);
  }
  for (let i = next.length - tail; i < next.length; i++) visitChild(next[i], i, path, ops);
}

/** A rolling list: `drop` items left the front, the `kept` rest moved up, new items follow. */
function rollArray(meta: Meta, kept: number, drop: number, path: Path, ops: Op[]): void {
  const next = meta.node as JsonValue[];
  meta.tree.work.entries += kept;
  ops.push(["p", path, 0, drop, []]);
  for (let i = 0; i < kept; i++) visitChild(next[i], i, path, ops);
  if (next.length > kept) ops.push(["p", path, kept, 0, cloneJson(next.slice(kept))]);
  for (let i = kept; i < next.length; i++) rekey(next[i], i);
}

/** A node sent whole (or moved) gets its current index, and its pending changes are moot. */
function rekey(v: JsonValue | undefined, i: number): void {
  if (!isNode(v)) return;
  const meta = metaOf(v);
  if (meta === undefined) return;
  meta.key = i;
  if (meta.queued) settle(meta);
}

/**
 * About the JSON length `ops` take on the wire: an op's path is left out when it repeats
 * the previous op's, as the encoder does (ids are left aside: both forms share the path).
 */
function wireLength(ops: readonly Op[]): number {
  let length = 0;
  let previous = "";
  for (const op of ops) {
    length += JSON.stringify(op).length + 1;
    if (op[0] === "r") continue;
    const path = JSON.stringify(op[1]);
    if (path === previous) length -= path.length + 1;
    previous = path;
  }
  return length;
}

/**
 * The permutation that turns `prev` into the array's elements now
 * (`now[i] = prev[order[i]]`), or null when they are not the same elements (by
 * identity) or an element has changes pending inside it.
 */
function reorderOf(meta: Meta, prev: JsonValue[]): number[] | null {
  const now = meta.node as JsonValue[];
  if (now.length !== prev.length) return null;
  if (meta.dirtyChildren !== null) {
    for (const child of meta.dirtyChildren) if (child.queued) return null;
  }
  const places = new Map<JsonValue, number[]>();
  for (let i = prev.length - 1; i >= 0; i--) {
    const v = prev[i] as JsonValue;
    const list = places.get(v);
    if (list === undefined) places.set(v, [i]);
    else list.push(i);
  }
  const order = new Array<number>(now.length);
  for (let i = 0; i < now.length; i++) {
    const at = places.get(now[i] as JsonValue)?.pop();
    if (at === undefined) return null;
    order[i] = at;
  }
  return order;
}

/**
 * How many items left the front of `prev` when `next` starts with the rest of it
 * (`next = prev.slice(drop).concat(newItems)`), or 0. Like the string probe: at most
 * `MAX_CANDIDATES` positions of `next[0]`, each verified item by item.
 */
function droppedFromFront(prev: JsonValue[], next: JsonValue[]): number {
  let from = 1;
  for (let n = 0; n < MAX_CANDIDATES; n++) {
    const drop = prev.indexOf(next[0] as JsonValue, from);
    if (drop < 0) return 0;
    const kept = prev.length - drop;
    if (kept <= next.length) {
      let i = 0;
      while (i < kept && prev[drop + i] === next[i]) i++;
      if (i === kept) return drop;
    }
    from = drop + 1;
  }
  return 0;
}

// ─── Discard ─────────────────────────────────────────────────────────────────────────

function discardTree(tree: Tree): void {
  if (tree.replaced !== null) {
    tree.root = tree.replaced.root;
    tree.rootMeta = tree.replaced.meta;
    tree.replaced = null;
  }
  tree.reordered.clear();
  if (tree.rootMeta !== null) restore(tree.rootMeta);
}

/** Puts `meta`'s node and every node below it with pending changes back to the baseline. */
function restore(meta: Meta): void {
  if (meta.isArray) {
    const arr = meta.node as JsonValue[];
    if (meta.old !== null) {
      arr.length = 0;
      for (let i = 0; i < meta.old.length; i++) {
        arr.push(meta.old[i] as JsonValue);
        if (isNode(arr[i])) {
          const m = metaOf(arr[i] as Node);
          if (m !== undefined) m.key = i;
        }
      }
    } else if (meta.appendFrom >= 0) {
      arr.length = meta.appendFrom;
    }
  }
  if (meta.changed !== null) {
    const node = meta.node as Record<Seg, JsonValue>;
    for (const [key, prev] of meta.changed) {
      if (prev === ABSENT) delete node[key];
      else node[key] = prev;
    }
  }
  if (meta.dirtyChildren !== null) {
    for (const child of meta.dirtyChildren) restore(child);
    meta.dirtyChildren.length = 0;
  }
  meta.changed = null;
  meta.edits = null;
  meta.appendFrom = -1;
  meta.old = null;
  meta.queued = false;
}

// ─── Writes by path: set and known text edits ────────────────────────────────────────

/**
 * What `meta`'s node holds at `seg` (an own key of an object, an in-range index of an
 * array), or undefined when it holds nothing there. `path` names the whole path for an
 * unsafe key's message.
 */
function ownedChild(meta: Meta, seg: Seg, path: Path): JsonValue | undefined {
  const node = meta.node as Record<Seg, JsonValue>;
  const owned = meta.isArray
    ? typeof seg === "number" &&
      Number.isInteger(seg) &&
      seg >= 0 &&
      seg < (node as unknown as JsonValue[]).length
    : typeof seg === "string" && Object.hasOwn(node, seg);
  if (!owned) return undefined;
  if (typeof seg === "string" && isUnsafeSegment(seg)) {
    assertSafeKey(seg, () => describePath(path));
  }
  return node[seg];
}

/**
 * The node at the first `length` segments of `path` (an object or array in the state),
 * or null when they do not lead to one.
 */
function nodeAt(tree: Tree, path: Path, length: number): Meta | null {
  if (tree.rootMeta === null) return null;
  let meta: Meta = tree.rootMeta;
  for (let i = 0; i < length; i++) {
    const seg = path[i] as Seg;
    const child = ownedChild(meta, seg, path);
    if (!isNode(child)) return null;
    meta = metaOf(child) ?? newMeta(tree, child, meta, seg);
  }
  return meta;
}

function setAt(tree: Tree, path: Path, value: unknown): void {
  if (!Array.isArray(path) || path.length === 0) {
    throw new TypeError(
      `set: the path must name a slot inside the state, got ${JSON.stringify(path)}.`,
    );
  }
  const meta = nodeAt(tree, path, path.length - 1);
  const key = path[path.length - 1];
  if (meta === null || (typeof key !== "string" && typeof key !== "number")) {
    throw new TypeError(
      `set: ${describePath(path)} is not a slot of an object or array in the state.`,
    );
  }
  writeProp(meta, String(key), value);
}

/** The node holding the last segment of `path`, and its proxy (which records writes). */
function parentOf(tree: Tree, path: Path): { meta: Meta; key: Seg } {
  if (!Array.isArray(path) || path.length === 0 || tree.rootMeta === null) {
    throw new TypeError(
      `editText: the path must name a string inside the state, got ${JSON.stringify(path)}.`,
    );
  }
  const meta = nodeAt(tree, path, path.length - 1);
  const key = path[path.length - 1] as Seg;
  if (meta !== null && typeof ownedChild(meta, key, path) === "string") return { meta, key };
  throw new TypeError(`editText: ${describePath(path)} is not a string in the state.`);
}

/** `rope.value.slice(drop) + append`, without copying the text (see `TextRope`). */
function ropeEdit(meta: Meta, key: Seg, current: string, drop: number, add: string): string {
  if (meta.ropes === null) meta.ropes = new Map();
  let rope = meta.ropes.get(key);
  if (rope === undefined || rope.value !== current) {
    rope = { value: current, backing: current, start: 0, tail: "" };
    meta.ropes.set(key, rope);
  }
  const inBacking = rope.backing.length - rope.start;
  if (drop <= inBacking) {
    rope.start += drop;
    rope.tail += add;
  } else {
    rope.backing = rope.tail.slice(drop - inBacking) + add;
    rope.start = 0;
    rope.tail = "";
  }
  rope.value =
    rope.tail === ""
      ? rope.backing.slice(rope.start)
      : rope.start === rope.backing.length
        ? rope.tail
        : rope.backing.slice(rope.start) + rope.tail;
  return rope.value;
}

function editTextAt(tree: Tree, path: Path, drop: number, append: string): void {
  if (typeof append !== "string") {
    throw new TypeError(`editText: append must be a string, got ${typeof append}.`);
  }
  const { meta, key } = parentOf(tree, path);
  const node = meta.node as Record<Seg, JsonValue>;
  const current = node[key] as string;
  if (!Number.isSafeInteger(drop) || drop < 0 || drop > current.length) {
    throw new RangeError(
      `editText: drop must be an integer from 0 to ${current.length} (the string's length) at ${describePath(path)}, got ${String(drop)}.`,
    );
  }
  if (drop === 0 && append === "") return;
  const next = ropeEdit(meta, key, current, drop, append);
  const pending = meta.edits?.get(key);
  const written = meta.changed?.has(key) === true;
  // Arrays outside plain index writes, and a slot assigned since the flush, are compared.
  const known =
    (!written || (pending !== undefined && pending.result === current)) &&
    !(
      meta.isArray &&
      (meta.old !== null || (meta.appendFrom >= 0 && (key as number) >= meta.appendFrom))
    );
  if (!known) {
    (meta.proxy as Record<Seg, JsonValue>)[key] = next;
    return;
  }
  if (pending === undefined) {
    recordKey(meta, key, current);
    if (meta.edits === null) meta.edits = new Map();
    meta.edits.set(key, { baseLength: current.length, drop, append, result: next });
  } else {
    foldEdit(pending, drop, append, next);
  }
  node[key] = next;
  touch(meta);
}

/** A later known edit folded into the pending one: still one `t` and one `a` from the baseline. */
function foldEdit(pending: TextEdit, drop: number, append: string, result: string): void {
  const kept = pending.baseLength - pending.drop;
  if (drop <= kept) {
    pending.drop += drop;
    pending.append += append;
  } else {
    pending.append = pending.append.slice(drop - kept) + append;
    pending.drop = pending.baseLength;
  }
  pending.result = result;
}

// ─── track ───────────────────────────────────────────────────────────────────────────

/**
 * Tracks a JSON value. Mutate `state` as plain JS; `flush()` returns the `Op[]` that
 * brings a replica from the last flush to now, comparing only what was written
 * against the accepted baseline (there is no op log).
 *
 * Values are copied in when assigned: after `state.a = obj`, later changes to `obj`
 * itself are not seen (change `state.a` instead). Non-JSON values throw `NotJsonError`.
 *
 * @example
 * const t = track({ text: "", items: [] as string[] });
 * t.flush();                 // [["r", { text: "", items: [] }]]
 * t.state.text += "hello";
 * t.state.items.push("x");
 * t.flush();                 // [["a", ["text"], "hello"], ["p", ["items"], 0, 0, ["x"]]]
 */
export function track<T>(
  value: T,
  // Only JSON-shaped types take one argument; a Map, Date or function asks for a second.
  ..._valueMustBeJson: [T] extends [JsonShape<T>] ? [] : [valueMustBeJson: never]
): Tracker<T> {
  const tree: Tree = {
    root: null,
    rootMeta: null,
    replaced: null,
    baseDue: true,
    rebaseAsked: false,
    reordered: new Set(),
    work: { nodes: 0, entries: 0 },
  };
  attach(
    tree,
    importJson(value, () => []),
  );
  // The methods close over `tree` once per tracker, so they work unbound
  // (`const { flush } = t`), as they always have.
  return {
    get state(): T {
      return (tree.rootMeta ? tree.rootMeta.proxy : tree.root) as T;
    },
    set state(next: T) {
      const imported = importJson(next, () => []);
      if (tree.replaced === null) tree.replaced = { root: tree.root, meta: tree.rootMeta };
      attach(tree, imported);
    },
    get dirty(): boolean {
      return (
        tree.baseDue || tree.rebaseAsked || tree.replaced !== null || hasPending(tree.rootMeta)
      );
    },
    get work(): FlushWork {
      return { nodes: tree.work.nodes, entries: tree.work.entries };
    },
    flush: () => flushTree(tree),
    editText: (path, drop, append) => editTextAt(tree, path, drop, append),
    set: (path, value) => setAt(tree, path, value),
    rebase(): void {
      tree.rebaseAsked = true;
    },
    discard: () => discardTree(tree),
  };
}
