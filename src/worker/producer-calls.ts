/**
 * Validation of the producer API body (`POST /v1/invocations/:id/output`):
 * `{ calls: Call[], end?: { isError, error? } }`, where each call has exactly one key.
 * `details` ops are untrusted input and go through Chord's own op validation.
 */
import { z } from "zod";
import { assertValidOp } from "../core/chord/index.ts";
import type { Op } from "../core/chord/types.ts";
import type { ProducerCall, ProducerEnd } from "../protocol/index.ts";
import { raise } from "./errors.ts";
import { parseWith } from "./schemas.ts";

const CALL_KINDS = [
  "write",
  "replace",
  "image",
  "details",
  "usage",
  "addTools",
  "terminate",
] as const;
type CallKind = (typeof CALL_KINDS)[number];

const callValue: Record<Exclude<CallKind, "details">, z.ZodType> = {
  write: z.string(),
  replace: z.string(),
  image: z.strictObject({
    data: z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/, "must be base64"),
    mimeType: z
      .string()
      .regex(/^image\/[A-Za-z0-9.+-]+$/, "must be an image MIME type, e.g. image/png"),
  }),
  usage: z.record(
    z.string(),
    z.number().nonnegative("must be a non-negative number").finite("must be finite"),
  ),
  addTools: z.array(z.string().min(1).max(64)).max(256),
  terminate: z.boolean(),
};

const body = z.strictObject({
  calls: z.array(z.unknown()),
  end: z.strictObject({ isError: z.boolean(), error: z.string().optional() }).optional(),
  /** The producer's sequence number: 0 for its first body, +1 for each next (docs/decisions/110). */
  seq: z
    .number()
    .int("must be an integer")
    .min(0, "must be 0 or more")
    .max(Number.MAX_SAFE_INTEGER, "must be at most 2^53 - 1")
    .optional(),
});

/** A validated producer body; `seq` absent means not retry-safe (today's behaviour). */
interface ProducerBody {
  calls: ProducerCall[];
  end?: ProducerEnd;
  seq?: number;
}

function parseDetails(value: unknown, path: string): Op[] {
  if (!Array.isArray(value)) raise("bad_request", `${path}: must be an array of Chord ops`);
  value.forEach((op, i) => {
    try {
      assertValidOp(op);
    } catch (err) {
      raise("bad_request", `${path}[${i}]: ${(err as Error).message}`);
    }
    if ((op as Op)[0] === "r" && i !== 0) {
      raise("bad_request", `${path}[${i}]: an "r" op may only be the first op of a batch`);
    }
  });
  return value as Op[];
}

function parseCall(value: unknown, path: string): ProducerCall {
  const keys =
    typeof value === "object" && value !== null && !Array.isArray(value)
      ? Object.keys(value)
      : null;
  const kind = keys?.length === 1 ? (keys[0] as CallKind) : undefined;
  if (kind === undefined || !CALL_KINDS.includes(kind)) {
    const got = keys === null ? JSON.stringify(value)?.slice(0, 40) : `keys [${keys.join(", ")}]`;
    raise(
      "bad_request",
      `${path}: a call is an object with exactly one of ${CALL_KINDS.join(", ")}; got ${got}`,
    );
  }
  const raw = (value as Record<string, unknown>)[kind];
  if (kind === "details") return { details: parseDetails(raw, `${path}.details`) };
  return { [kind]: parseWith(callValue[kind], raw, `${path}.${kind}`) } as ProducerCall;
}

/**
 * The validated calls, end marker and seq, or a 400 naming the first bad field and why.
 * @example parseProducerBody({ calls: [{ write: "hi" }], end: { isError: false }, seq: 0 })
 */
export function parseProducerBody(value: unknown): ProducerBody {
  const parsed = parseWith(body, value, "body");
  const calls = parsed.calls.map((call, i) => parseCall(call, `body.calls[${i}]`));
  const result: ProducerBody = { calls };
  if (parsed.end !== undefined) result.end = parsed.end;
  if (parsed.seq !== undefined) result.seq = parsed.seq;
  return result;
}
