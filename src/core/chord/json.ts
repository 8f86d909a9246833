import { InvalidOpError, NotJsonError } from "./errors.ts";
import { assertSafeKey, describePath } from "./segments.ts";
import type { JsonObject, JsonValue, Seg } from "./types.ts";

/**
 * How deep arrays and objects may nest in a tracked document or an op's target
 * (docs/decisions/005). A scalar has depth 0, `[]` 1, `{"a":[1]}` 2. A value at a path
 * of n segments sits n levels down, so a path may have at most this many segments and
 * a value written at it at most this many levels minus n.
 */
export const MAX_JSON_DEPTH = 64;

/**
 * `true` when `value` nests arrays and objects at most `limit` levels deep. Stops
 * descending past `limit`, so it is safe on untrusted values of any depth.
 *
 * @example
 * fitsDepth([[1]], 2); // true
 * fitsDepth([[1]], 1); // false
 */
export function fitsDepth(value: unknown, limit: number): boolean {
  if (typeof value !== "object" || value === null) return true;
  if (limit <= 0) return false;
  for (const item of Object.values(value)) if (!fitsDepth(item, limit - 1)) return false;
  return true;
}

function tooDeep(room: number, below: string): string {
  return `arrays and objects nested more than ${room} levels deep ${below}; a document may nest at most ${MAX_JSON_DEPTH} levels (MAX_JSON_DEPTH), counting the path it is written at. Flatten the value or send its deep part as a JSON string`;
}

/** Proxy → the plain node it stands for, for every tracker. Lets an assigned draft be copied. */
const proxyTargets = new WeakMap<object, JsonObject | JsonValue[]>();

export function registerProxy(proxy: object, target: JsonObject | JsonValue[]): void {
  proxyTargets.set(proxy, target);
}

/** The plain node behind a tracker proxy, or `undefined` for anything else. */
export function targetOfProxy(value: unknown): JsonObject | JsonValue[] | undefined {
  return typeof value === "object" && value !== null ? proxyTargets.get(value) : undefined;
}

/** Deep copy of a value already known to be JSON. */
export function cloneJson<T extends JsonValue>(value: T): T;
export function cloneJson(value: JsonValue): JsonValue {
  if (typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) {
    const out: JsonValue[] = new Array(value.length);
    for (let i = 0; i < value.length; i++) out[i] = cloneJson(value[i] as JsonValue);
    return out;
  }
  const out: JsonObject = {};
  for (const key of Object.keys(value)) out[key] = cloneJson(value[key] as JsonValue);
  return out;
}

function kindOf(value: unknown): string {
  if (typeof value === "bigint") return "a BigInt";
  if (typeof value === "function") return "a function";
  if (typeof value === "symbol") return "a symbol";
  if (value === undefined) return "undefined";
  if (typeof value === "number") return String(value);
  const proto = Object.getPrototypeOf(value);
  const name = (proto as { constructor?: { name?: unknown } } | null)?.constructor?.name;
  return typeof name === "string" && name !== "" ? `a ${name}` : "a non-plain object";
}

/**
 * Checks that `value` is plain JSON and returns a private deep copy of it (tracker
 * record time). Drafts from any tracker are copied from their current contents.
 * Object properties holding `undefined` are left out, as `JSON.stringify` does.
 */
export function importJson(value: unknown, at: () => Seg[]): JsonValue {
  const ancestors: object[] = [];
  const segs: Seg[] = [];
  // Levels left below `at()`; computed on the first array or object (scalars need none).
  let room: number | undefined;
  const roomLeft = (): number => {
    room ??= MAX_JSON_DEPTH - at().length;
    return room;
  };
  const where = () => describePath([...at(), ...segs]);
  const refuse = (what: string): never => {
    throw new NotJsonError(
      `Cannot track ${what} at ${where()}: only JSON values (null, booleans, finite numbers, strings, arrays, plain objects) are accepted; convert it first (e.g. a Date to an ISO string, a Map to an object).`,
    );
  };
  const visit = (v: unknown): JsonValue => {
    switch (typeof v) {
      case "string":
      case "boolean":
        return v;
      case "number":
        return Number.isFinite(v) ? v : refuse(kindOf(v));
      case "object": {
        if (v === null) return null;
        const draft = proxyTargets.get(v);
        // Checked on the way down, so a too-deep value is refused before it can exhaust the stack.
        if (
          segs.length >= roomLeft() ||
          (draft !== undefined && !fitsDepth(draft, roomLeft() - segs.length))
        ) {
          throw new NotJsonError(
            `Cannot track ${tooDeep(roomLeft(), `below ${describePath(at())}`)}.`,
          );
        }
        if (draft !== undefined) return cloneJson(draft);
        if (ancestors.includes(v)) return refuse("a cycle (an object that contains itself)");
        if (Object.getOwnPropertySymbols(v).length > 0) return refuse("an object with symbol keys");
        ancestors.push(v);
        let out: JsonValue;
        if (Array.isArray(v)) {
          if (Object.getPrototypeOf(v) !== Array.prototype) refuse(kindOf(v));
          const arr: JsonValue[] = new Array(v.length);
          for (let i = 0; i < v.length; i++) {
            segs.push(i);
            if (!(i in v)) refuse("a sparse array (a hole)");
            const item: unknown = v[i];
            if (item === undefined) refuse("undefined inside an array");
            arr[i] = visit(item);
            segs.pop();
          }
          out = arr;
        } else {
          const proto = Object.getPrototypeOf(v);
          if (proto !== Object.prototype && proto !== null) refuse(kindOf(v));
          const obj: JsonObject = {};
          for (const key of Object.keys(v)) {
            segs.push(key);
            assertSafeKey(key, where);
            const item: unknown = (v as Record<string, unknown>)[key];
            if (item !== undefined) obj[key] = visit(item);
            segs.pop();
          }
          out = obj;
        }
        ancestors.pop();
        return out;
      }
      default:
        return refuse(kindOf(v));
    }
  };
  return visit(value);
}

/**
 * Throws `InvalidOpError` unless `value` is a JSON value whose object keys are all safe
 * and which nests at most `room` levels (op payloads are untrusted input; `room` is
 * `MAX_JSON_DEPTH` minus the length of the path the value is written at).
 */
export function assertJsonPayload(
  value: unknown,
  what: string,
  room: number = MAX_JSON_DEPTH,
): asserts value is JsonValue {
  const ancestors: object[] = [];
  const refuse = (reason: string): never => {
    throw new InvalidOpError(
      `${what} holds ${reason}, which is not JSON; payloads must be null, booleans, finite numbers, strings, arrays or plain objects.`,
    );
  };
  const visit = (v: unknown): void => {
    switch (typeof v) {
      case "string":
      case "boolean":
        return;
      case "number":
        if (!Number.isFinite(v)) refuse(kindOf(v));
        return;
      case "object": {
        if (v === null) return;
        // Checked on the way down, so a too-deep payload is refused before it can exhaust the stack.
        if (ancestors.length >= room) {
          throw new InvalidOpError(`${what} holds ${tooDeep(room, "at its path")}.`);
        }
        if (ancestors.includes(v)) refuse("a cycle");
        if (Object.getOwnPropertySymbols(v).length > 0) refuse("symbol keys");
        ancestors.push(v);
        if (Array.isArray(v)) {
          if (Object.getPrototypeOf(v) !== Array.prototype) refuse(kindOf(v));
          for (let i = 0; i < v.length; i++) {
            if (!(i in v)) refuse("a sparse array");
            visit(v[i]);
          }
        } else {
          const proto = Object.getPrototypeOf(v);
          if (proto !== Object.prototype && proto !== null) refuse(kindOf(v));
          for (const key of Object.keys(v)) {
            assertSafeKey(key, () => what);
            visit((v as Record<string, unknown>)[key]);
          }
        }
        ancestors.pop();
        return;
      }
      default:
        refuse(kindOf(v));
    }
  };
  visit(value);
}
