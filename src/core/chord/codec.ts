import { CodecError, InvalidOpError } from "./errors.ts";
import { pathKey } from "./segments.ts";
import type { JsonValue, Op, Path, WireOp, WirePath } from "./types.ts";
import { assertValidWireOp, carriesPath, isBase, mayAddressRoot } from "./validate.ts";

/** Encodes one stream's batches. Keep one per consumer (per subscriber, per durable log). */
interface Encoder {
  encode(ops: readonly Op[]): WireOp[];
}

/** Decodes one stream's batches, mirroring the encoder's tables. */
export interface Decoder {
  decode(wire: readonly unknown[]): Op[];
}

function withPath(op: Op, wirePath: WirePath | null): WireOp {
  switch (op[0]) {
    case "r":
      return ["r", op[1]];
    case "s":
      return wirePath === null ? ["s", op[2]] : ["s", wirePath, op[2]];
    case "d":
      return wirePath === null ? ["d"] : ["d", wirePath];
    case "a":
      return wirePath === null ? ["a", op[2]] : ["a", wirePath, op[2]];
    case "t":
      return wirePath === null ? ["t", op[2]] : ["t", wirePath, op[2]];
    case "p":
      return wirePath === null ? ["p", op[2], op[3], op[4]] : ["p", wirePath, op[2], op[3], op[4]];
    case "m":
      return wirePath === null ? ["m", op[2]] : ["m", wirePath, op[2]];
  }
}

/**
 * A stream encoder with two compressions, the wire of the reference Chord
 * (`@earendil-works/chord/delta`): a path used a second time is defined by a wire op of
 * its own, `["#", id, path]`, placed just before the op, which then carries the number
 * `id`, as do later uses; an op whose path repeats the previous op's path in the same
 * batch drops it (arity tells the forms apart). Both tables reset on a base batch, so
 * every base is a self-contained recovery point. Payloads are not copied: the wire ops
 * share them with `ops`.
 *
 * @example
 * const enc = encoder();
 * enc.encode([["r", { text: "" }]]);                        // [["r", { text: "" }]]
 * enc.encode([["t", ["text"], 3], ["a", ["text"], "xyz"]]); // [["t", ["text"], 3], ["a", "xyz"]]
 * enc.encode([["a", ["text"], "!"]]);                       // [["#", 0, ["text"]], ["a", 0, "!"]]
 * enc.encode([["a", ["text"], "?"]]);                       // [["a", 0, "?"]]
 */
export function encoder(): Encoder {
  let ids = new Map<string, number>();
  let seen = new Set<string>();
  return {
    encode(ops) {
      for (let i = 1; i < ops.length; i++) {
        if ((ops[i] as Op)[0] === "r") {
          throw new InvalidOpError(`Invalid batch: "r" at index ${i}; it may only come first.`);
        }
      }
      if (isBase(ops)) {
        ids = new Map();
        seen = new Set();
      }
      const out: WireOp[] = [];
      let previous: string | null = null;
      for (let i = 0; i < ops.length; i++) {
        const op = ops[i] as Op;
        if (op[0] === "r") {
          out.push(["r", op[1]]);
          previous = null;
          continue;
        }
        const path: Path = op[1];
        const key = pathKey(path);
        let wirePath: WirePath | null;
        if (key === previous) {
          wirePath = null;
        } else {
          const id = ids.get(key);
          if (id !== undefined) {
            wirePath = id;
          } else if (seen.has(key)) {
            const next = ids.size;
            ids.set(key, next);
            out.push(["#", next, path]);
            wirePath = next;
          } else {
            seen.add(key);
            wirePath = path;
          }
        }
        previous = key;
        out.push(withPath(op, wirePath));
      }
      return out;
    },
  };
}

/**
 * The decoder paired with `encoder()` (and with the reference Chord's encoder).
 * Validates every wire op (`assertValidWireOp`) and throws `CodecError` for an unknown
 * id, a definition out of order, or a short form with no previous path. A batch that
 * throws leaves the tables as they were; the consumer should then ask for a base batch,
 * which resets them.
 *
 * @example
 * const dec = decoder();
 * dec.decode([["r", { text: "" }]]);
 * dec.decode([["a", ["text"], "hi"], ["a", "!"]]); // [["a", ["text"], "hi"], ["a", ["text"], "!"]]
 * dec.decode([["#", 0, ["text"]], ["a", 0, "?"]]); // [["a", ["text"], "?"]]
 */
export function decoder(): Decoder {
  let table: Path[] = [];
  return {
    decode(wire) {
      if (!Array.isArray(wire)) {
        throw new InvalidOpError("Invalid batch: a wire batch must be an array of wire ops.");
      }
      const base = wire.length > 0 && Array.isArray(wire[0]) && wire[0][0] === "r";
      const known = base ? [] : table;
      // Ids defined by this batch; they join the table only if the whole batch decodes.
      const added: Path[] = [];
      const lookup = (id: number): Path | undefined =>
        id < known.length ? known[id] : added[id - known.length];
      const out: Op[] = [];
      let previous: Path | null = null;
      for (let i = 0; i < wire.length; i++) {
        const w: unknown = wire[i];
        assertValidWireOp(w);
        if (w[0] === "#") {
          // Ids count up from 0 after each base, so a definition out of order means a
          // batch was lost or reordered: no later reference could be trusted.
          const expected = known.length + added.length;
          if (w[1] !== expected) {
            throw new CodecError(
              `Cannot decode op ${i}: path id ${w[1]} defined out of order (expected ${expected}); resync from a base batch.`,
            );
          }
          added.push(w[2]);
          continue;
        }
        if (w[0] === "r") {
          if (i > 0) {
            throw new InvalidOpError(`Invalid batch: "r" at index ${i}; it may only come first.`);
          }
          out.push(["r", w[1]]);
          previous = null;
          continue;
        }
        const full = carriesPath(w);
        let path: Path;
        if (!full) {
          if (previous === null) {
            throw new CodecError(
              `Cannot decode op ${i} (${w[0]}): it omits its path but no earlier op in this batch has one; resync from a base batch.`,
            );
          }
          path = previous;
        } else {
          const wirePath = w[1] as WirePath;
          if (typeof wirePath === "number") {
            const defined = lookup(wirePath);
            if (defined === undefined) {
              throw new CodecError(
                `Cannot decode op ${i}: path id ${wirePath} was never defined on this stream (${known.length + added.length} known); resync from a base batch.`,
              );
            }
            path = defined;
          } else {
            path = wirePath;
          }
        }
        if (path.length === 0 && !mayAddressRoot(w[0])) {
          throw new InvalidOpError(
            `Invalid op ${i} (${w[0]}): its path resolves to the root; only "p" and "m" may address the root ("r" replaces it).`,
          );
        }
        out.push(toOp(w, path.slice(), full ? 2 : 1));
        previous = path;
      }
      table = known;
      for (const path of added) table.push(path);
      return out;
    },
  };
}

function toOp(w: WireOp, path: Path, at: number): Op {
  const rest = w as unknown[];
  switch (w[0]) {
    case "s":
      return ["s", path, rest[at] as JsonValue];
    case "d":
      return ["d", path];
    case "a":
      return ["a", path, rest[at] as string];
    case "t":
      return ["t", path, rest[at] as number];
    case "m":
      return ["m", path, rest[at] as number[]];
    default:
      return ["p", path, rest[at] as number, rest[at + 1] as number, rest[at + 2] as JsonValue[]];
  }
}
