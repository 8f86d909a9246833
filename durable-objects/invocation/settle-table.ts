/**
 * How a run ended, and what that makes of its result: the notice that ends the output,
 * `isError` and `cancelled`. One row per ending, read by `InvocationDO`'s settle step.
 */
import { messageOf } from "../../src/protocol/index.ts";
import { idleNotice } from "./idle-timeout.ts";

/** How a run ended. */
export type Ending =
  | { kind: "completed" }
  /** The tool threw (or the producer ended with an error text): the text is appended. */
  | { kind: "failed"; error: unknown }
  /** The producer ended with `isError` and no text. */
  | { kind: "failedQuietly" }
  | { kind: "cancelled" }
  | { kind: "interrupted" }
  /** An `external` invocation whose producer sent nothing for the idle timeout. */
  | { kind: "idle"; timeoutMs: number }
  /** Publishing the output threw (the sink could not flush, storage refused the batch). */
  | { kind: "unpublishable"; error: unknown };

export const CANCELLED_NOTICE =
  "[Cancelled: the call was stopped before it finished; the output above is what it wrote until then.]";

export const INTERRUPTED_NOTICE =
  "[Interrupted: the call was cut off by a restart and is not safe to run again; the output above is what it wrote before the restart.]";

/** Ends the output of an invocation whose publication path threw (docs/decisions/006). */
function unpublishableNotice(error: unknown): string {
  return `[Output failed: publishing it threw "${messageOf(error)}", so the call was ended; the output above is what was published before that.]`;
}

/** What an ending makes of the result. */
export interface Settlement {
  /** The last words of the output: an error (the sink words it) or a notice; none for a plain end. */
  last: { error: unknown } | { notice: string } | null;
  isError: boolean;
  cancelled: boolean;
  /**
   * The sink is broken: a fresh one over the published state carries the last words, and
   * the result is taken from it rather than from what was published.
   */
  freshSink: boolean;
}

type Table = { [K in Ending["kind"]]: (ending: Extract<Ending, { kind: K }>) => Settlement };

const failure = { isError: true, cancelled: false, freshSink: false } as const;

const SETTLEMENTS: Table = {
  completed: () => ({ last: null, isError: false, cancelled: false, freshSink: false }),
  failed: ({ error }) => ({ ...failure, last: { error } }),
  failedQuietly: () => ({ ...failure, last: null }),
  cancelled: () => ({ ...failure, cancelled: true, last: { notice: CANCELLED_NOTICE } }),
  interrupted: () => ({ ...failure, last: { notice: INTERRUPTED_NOTICE } }),
  idle: ({ timeoutMs }) => ({ ...failure, last: { notice: idleNotice(timeoutMs) } }),
  unpublishable: ({ error }) => ({
    ...failure,
    freshSink: true,
    last: { error: unpublishableNotice(error) },
  }),
};

/**
 * The row of `ending`.
 * @example settlementOf({ kind: "cancelled" }) // { last: { notice: CANCELLED_NOTICE }, isError: true, cancelled: true, freshSink: false }
 */
export function settlementOf(ending: Ending): Settlement {
  return (SETTLEMENTS[ending.kind] as (ending: Ending) => Settlement)(ending);
}
