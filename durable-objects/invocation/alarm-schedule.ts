/**
 * The one alarm of an invocation and what it is due for. A Durable Object has a single
 * alarm; what it stands for depends on the invocation's state:
 *
 * - a tool runs in this instance: a heartbeat, which keeps the object alive and lets a
 *   later alarm notice a crash (docs/decisions/041);
 * - a stretch parked, or the object restarted mid-run: resume, due at once;
 * - an `external` invocation: its idle deadline (docs/decisions/044);
 * - settled: retirement once the retention period is over.
 *
 * The alarm runs at least once per scheduled time (maybe more), so every due kind is
 * idempotent.
 */

import { workerConfig } from "../../src/protocol/index.ts";
import { EXTERNAL_TOOL } from "../../src/tools/index.ts";
import type { InvocationRecord } from "./output/store.ts";

/** Keep-alive alarm spacing while a tool runs (docs/decisions/041). */
export const HEARTBEAT_MS = 15_000;

/** What the invocation is, as far as the alarm is concerned. */
type AlarmSubject =
  | { status: "settled"; deleteAt: number }
  | { status: "running"; external: true }
  | { status: "running"; external: false; runLive: boolean };

/**
 * The alarm's view of a stored invocation.
 * @example subjectOf(record, runs.live) // { status: "running", external: false, runLive: true }
 */
export function subjectOf(record: InvocationRecord, runLive: boolean): AlarmSubject {
  if (record.status === "settled") return { status: "settled", deleteAt: record.deleteAt ?? 0 };
  if (record.tool === EXTERNAL_TOOL) return { status: "running", external: true };
  return { status: "running", external: false, runLive };
}

/** What a firing alarm should do. */
type Due =
  | { kind: "wait"; until: number }
  | { kind: "retire" }
  | { kind: "heartbeat" }
  | { kind: "endIdle"; timeoutMs: number }
  | { kind: "resume" };

/**
 * Sets the alarm for each state and says, when it fires, what is due.
 * @example
 * const alarms = new AlarmSchedule(ctx.storage, env);
 * await alarms.heartbeat(); // a tool started
 * alarms.due({ status: "running", external: false, runLive: false }); // { kind: "resume" }
 */
export class AlarmSchedule {
  readonly #storage: DurableObjectStorage;
  readonly #idleTimeoutMs: number;
  /** When an `external` invocation times out unless the producer calls again (this instance only). */
  #idleDeadline: number | null = null;

  constructor(storage: DurableObjectStorage, env: Pick<Env, "EXTERNAL_IDLE_TIMEOUT_SECONDS">) {
    this.#storage = storage;
    this.#idleTimeoutMs = workerConfig(env).externalIdleTimeoutMs;
  }

  /** A tool runs: the next beat. */
  heartbeat(): Promise<void> {
    return this.#storage.setAlarm(Date.now() + HEARTBEAT_MS);
  }

  /** A stretch parked: the next one is due now (from the alarm, so the object may be evicted first). */
  resumeNow(): Promise<void> {
    return this.#storage.setAlarm(Date.now());
  }

  /** The producer of an `external` invocation called: its deadline moves to one timeout from now. */
  extendIdle(): Promise<void> {
    this.#idleDeadline = Date.now() + this.#idleTimeoutMs;
    return this.#storage.setAlarm(this.#idleDeadline);
  }

  /** Settled: the alarm retires the invocation at `deleteAt`. */
  retireAt(deleteAt: number): Promise<void> {
    this.#idleDeadline = null;
    return this.#storage.setAlarm(deleteAt);
  }

  /** Re-arms for a time that has not come yet. */
  waitUntil(time: number): Promise<void> {
    return this.#storage.setAlarm(time);
  }

  /**
   * What the alarm is due for now. An idle deadline this instance moved later waits;
   * after a restart the instance knows no later producer call, so the alarm, which never
   * fires before its time, is the deadline.
   */
  due(subject: AlarmSubject, now = Date.now()): Due {
    if (subject.status === "settled") {
      return now < subject.deleteAt
        ? { kind: "wait", until: subject.deleteAt }
        : { kind: "retire" };
    }
    if (subject.external) {
      const deadline = this.#idleDeadline;
      if (deadline !== null && now < deadline) return { kind: "wait", until: deadline };
      return { kind: "endIdle", timeoutMs: this.#idleTimeoutMs };
    }
    return subject.runLive ? { kind: "heartbeat" } : { kind: "resume" };
  }
}
