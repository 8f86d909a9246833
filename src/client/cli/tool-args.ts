import type { JsonValue } from "../../core/chord/types.ts";
import { type RawArg, UsageError } from "./parse-args.ts";

type Schema = { type?: unknown; properties?: Record<string, { type?: unknown }> };

/**
 * Builds a tool's `args` from `--args '<json>'` and `--key value` pairs (the pairs
 * win). With the tool's JSON Schema, each value takes its parameter's type
 * (`--timeout 30` is a number, `--command 30` stays a string); without one, numbers,
 * booleans and null are recognised and the rest stays text.
 *
 * @example
 * toolArgs({ command: "ls", timeout: "5" }, undefined, bashSchema) // { command: "ls", timeout: 5 }
 */
export function toolArgs(
  pairs: Record<string, RawArg>,
  argsJson: string | undefined,
  schema: JsonValue | undefined,
): Record<string, JsonValue> {
  const args: Record<string, JsonValue> = {};
  if (argsJson !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(argsJson);
    } catch (error) {
      throw new UsageError(`--args is not valid JSON (${(error as Error).message}).`, "run");
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
      throw new UsageError(
        '--args must be a JSON object, e.g. --args \'{"command":"ls"}\'.',
        "run",
      );
    }
    Object.assign(args, parsed);
  }
  const properties = (schema as Schema | undefined)?.properties ?? {};
  for (const [key, raw] of Object.entries(pairs)) {
    args[key] = coerce(key, raw, properties[key]?.type);
  }
  return args;
}

function coerce(key: string, raw: RawArg, type: unknown): JsonValue {
  if (raw === true) {
    if (type === undefined || type === "boolean") return true;
    throw new UsageError(`--${key} needs a value.`, "run");
  }
  switch (type) {
    case "string":
      return raw;
    case "number":
    case "integer": {
      const n = Number(raw);
      if (raw.trim() === "" || !Number.isFinite(n)) {
        throw new UsageError(`--${key} must be a number, got "${raw}".`, "run");
      }
      return n;
    }
    case "boolean":
      if (raw === "true" || raw === "false") return raw === "true";
      throw new UsageError(`--${key} must be true or false, got "${raw}".`, "run");
    case "array":
    case "object":
      try {
        return JSON.parse(raw) as JsonValue;
      } catch {
        throw new UsageError(`--${key} must be JSON (${type}), got "${raw}".`, "run");
      }
    default:
      return /^(-?\d+(\.\d+)?([eE][+-]?\d+)?|true|false|null)$/.test(raw)
        ? (JSON.parse(raw) as JsonValue)
        : raw;
  }
}
