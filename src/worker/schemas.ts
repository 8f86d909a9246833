/**
 * The shapes of request bodies, route parameters and query strings, declared once with
 * zod. `parseWith` turns a failed parse into a 400 naming each field and its problem.
 */
import { type ZodType, z } from "zod";
import { fitsDepth, MAX_JSON_DEPTH } from "../core/chord/index.ts";
import { INVOCATION_ID_PATTERN } from "../protocol/index.ts";
import { formatIssues } from "../tools/index.ts";
import { raise } from "./errors.ts";

const invocationId = z
  .string()
  .regex(
    INVOCATION_ID_PATTERN,
    "must be 1-128 characters of A-Z a-z 0-9 . _ : - starting with a letter or digit",
  );

const label = z.string().min(1).max(256);

/** `POST /v1/invocations` */
export const createInvocationBody = z.strictObject({
  tool: z.string().min(1, "name a tool (GET /v1/tools lists them)"),
  // Capped before any tool's schema walks it (docs/decisions/005).
  args: z
    .unknown()
    .refine((v) => fitsDepth(v, MAX_JSON_DEPTH), {
      message: `must nest arrays and objects at most ${MAX_JSON_DEPTH} levels deep (MAX_JSON_DEPTH); flatten them or send the deep part as a JSON string`,
    })
    .optional(),
  toolCallId: invocationId.optional(),
  runId: label.optional(),
  turnId: label.optional(),
  sandbox: z.string().min(1).max(64).optional(),
});

/** `:id` of every `/v1/invocations/:id/...` and `/view/:id` route. */
export const invocationIdParam = invocationId;

/** Longest a `?wait=` long-poll may hold a request: 30 seconds. */
const MAX_WAIT_SECONDS = 30;

/** `?wait=S` of the result route: non-negative seconds, capped at `MAX_WAIT_SECONDS`. */
export const waitQuery = z
  .string()
  .regex(/^\d+(\.\d+)?$/, "must be a non-negative number of seconds, e.g. wait=10")
  .transform((s) => Math.min(Number(s), MAX_WAIT_SECONDS))
  .optional();

/**
 * The parsed value, or a 400 whose message lists every problem under `prefix`.
 * @example parseWith(createInvocationBody, body, "body")
 */
export function parseWith<S extends ZodType>(
  schema: S,
  value: unknown,
  prefix: string,
): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) raise("bad_request", formatIssues(prefix, result.error));
  return result.data;
}
