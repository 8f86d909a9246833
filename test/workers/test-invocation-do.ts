/**
 * The Invocation DO the worker tests bind (vitest.config.ts points `main` at
 * test/workers/test-entry.ts): production's class plus the seams only crash tests need
 * (docs/decisions/093). Each lives in memory, so a new instance after a crash has none.
 */
import { InvocationDO } from "../../durable-objects/invocation/invocation.ts";

/** Batches the last recovery of each instance decoded (set while the base class constructs). */
const recoveredBatches = new WeakMap<InvocationDO, number>();

export class TestInvocationDO extends InvocationDO {
  /**
   * Called by `context.setMemo` just before and just after it writes the memo and its
   * checkpoint. Returning `"halt"` stops the run at that point as a crash would, so a test
   * can crash the object exactly between a memo and the next write (docs/decisions/049).
   */
  memoHook: ((name: string, moment: "before" | "after") => "halt" | undefined) | null = null;
  /** Called before every flush of the sink; a throw stands for a flush that fails. */
  flushHook: (() => void) | null = null;

  /** What the last recovery in this instance decoded. */
  get recovery(): { batches: number } {
    return { batches: recoveredBatches.get(this) ?? 0 };
  }

  protected override memoMoment(name: string, moment: "before" | "after"): "halt" | undefined {
    return this.memoHook?.(name, moment);
  }

  protected override beforeFlush(): void {
    this.flushHook?.();
  }

  protected override recovered(batches: number): void {
    // The base class recovers in its constructor, before this class's fields exist.
    recoveredBatches.set(this, batches);
  }
}
