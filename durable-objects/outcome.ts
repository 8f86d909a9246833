import { type Outcome, refusal } from "../src/protocol/index.ts";

/** This object holds no invocation (never started, or retired after retention). */
export function notFound<T>(): Outcome<T> {
  return refusal(
    "not_found",
    "No invocation with this id (never created, or deleted after its retention period).",
  );
}
