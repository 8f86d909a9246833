import { type ExecLoad, QUEUE_RETRY_AFTER_SEC } from "../../src/protocol/index.ts";
import { SandboxError } from "../errors.ts";

/**
 * How far past `maxQueued` the host still queues (decision 248): the Worker admits a call
 * only while fewer than `maxQueued` wait, but creates racing the same look at the queue
 * may all be admitted; the host holds them rather than fail a call it was told to run.
 */
const RACE_ROOM = 2;

/** A place in line: `admitted` resolves with the slot's release when its turn comes. */
export interface ExecTicket {
  readonly admitted: Promise<() => void>;
  /** Leaves the line (a kill while waiting); nothing once admitted. */
  cancel(): void;
}

interface Waiter {
  turn: (release: () => void) => void;
  ahead: (count: number) => void;
}

/**
 * The bound on commands running at once in one sandbox's app (decisions 162, 248): past
 * `maxRunning`, a new exec waits its turn in line, first come first served, for as long
 * as the commands before it run (each is bounded by its own timeout). The line is bounded
 * by length, not time: the Worker refuses a call with a 429 while `maxQueued` wait, so an
 * accepted call never fails for want of a slot; the host itself refuses (503 `busy`) only
 * past `maxQueued` × 2, which only racing creates can reach. Bounding the work keeps the
 * event loop, and with it `/healthz` and every stream, answering under load.
 * @example const ticket = gate.enter((ahead) => run.wait(ahead)); const release = await ticket.admitted;
 */
export class ExecGate {
  readonly maxRunning: number;
  readonly maxQueued: number;
  #running = 0;
  readonly #waiting: Waiter[] = [];

  constructor(maxRunning: number, maxQueued: number) {
    this.maxRunning = maxRunning;
    this.maxQueued = maxQueued;
  }

  /** Commands running now. */
  get running(): number {
    return this.#running;
  }

  /** What `/healthz` reports, and the Worker admits by. */
  load(): ExecLoad {
    return {
      running: this.#running,
      queued: this.#waiting.length,
      maxRunning: this.maxRunning,
      maxQueued: this.maxQueued,
    };
  }

  /**
   * A slot now, or a place in line: `ahead` is told how many wait before this exec, at
   * once and each time the line moves. Throws 503 `busy` when even the race room is full.
   */
  enter(ahead: (count: number) => void): ExecTicket {
    if (this.#running < this.maxRunning) {
      this.#running++;
      return { admitted: Promise.resolve(this.#releaser()), cancel: () => {} };
    }
    if (this.#waiting.length >= this.maxQueued * RACE_ROOM) {
      throw new SandboxError(
        "busy",
        `this sandbox runs its limit of ${this.maxRunning} commands at once and ${this.#waiting.length} more wait their turn; the command was not started; try again in ${QUEUE_RETRY_AFTER_SEC} s`,
        QUEUE_RETRY_AFTER_SEC,
      );
    }
    let waiter!: Waiter;
    const admitted = new Promise<() => void>((resolve) => {
      waiter = { turn: resolve, ahead };
    });
    this.#waiting.push(waiter);
    ahead(this.#waiting.length - 1);
    return {
      admitted,
      cancel: () => {
        const at = this.#waiting.indexOf(waiter);
        if (at < 0) return;
        this.#waiting.splice(at, 1);
        this.#moved(at);
      },
    };
  }

  /** The function that frees a slot, once: a freed slot passes straight to the first in line. */
  #releaser(): () => void {
    let freed = false;
    return () => {
      if (freed) return;
      freed = true;
      const next = this.#waiting.shift();
      if (!next) {
        this.#running--;
        return;
      }
      next.turn(this.#releaser());
      this.#moved(0);
    };
  }

  /** Everyone from `from` on moved up one place. */
  #moved(from: number): void {
    for (let i = from; i < this.#waiting.length; i++) this.#waiting[i]!.ahead(i);
  }
}
