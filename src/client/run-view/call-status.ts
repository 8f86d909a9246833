import type { RunCall } from "../../core/events/run-call.ts";
import { timedOutWords } from "../call-story.ts";

/** A run's call as the page styles it (`kind`) and says it (`words`, as every face does). */
interface RunCallStatus {
  kind: RunCall["status"] | "timedout";
  words: string;
}

/**
 * How a call of a run stands, in the words of the viewer and the CLI (decision 260).
 * @example runCallStatus({ status: "error", stoppedBy: { limit: "timeout", seconds: 2 } } as RunCall) // { kind: "timedout", words: "timed out after 2 s (timeout)" }
 */
export function runCallStatus(call: RunCall): RunCallStatus {
  if (call.status === "error" && call.stoppedBy) {
    return { kind: "timedout", words: timedOutWords(call.stoppedBy.limit, call.stoppedBy.seconds) };
  }
  const failed = call.exitCode ? `failed (exit ${call.exitCode})` : "failed";
  const words = { running: "running", done: "done", error: failed, cancelled: "cancelled" };
  return { kind: call.status, words: words[call.status] };
}
