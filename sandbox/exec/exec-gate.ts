import { SandboxError } from "../errors.ts";

/** Seconds a refused caller is told to wait (`Retry-After`). */
const RETRY_AFTER_SEC = 5;

/**
 * The host's bound on commands running at once (decision 162): past `maxRunning`, a new
 * exec waits up to `queueMs` for a running one to end, then is refused with a 503
 * `busy` and `Retry-After`. Bounding the work keeps the event loop, and with it
 * `/healthz` and every stream, answering under load.
 * @example const release = await gate.enter(); run.subscribe(() => run.exit && release());
 */
export class ExecGate {
  readonly maxRunning: number;
  readonly queueMs: number;
  #running = 0;
  readonly #waiting: (() => void)[] = [];

  constructor(maxRunning: number, queueMs: number) {
    this.maxRunning = maxRunning;
    this.queueMs = queueMs;
  }

  /** Commands running now. */
  get running(): number {
    return this.#running;
  }

  /** Waits for a slot; resolves with the function that frees it (call it once). */
  async enter(): Promise<() => void> {
    // A freed slot passes straight to the first waiter, so a newcomer cannot take it
    // between the release and the waiter's turn.
    if (this.#running < this.maxRunning) this.#running++;
    else await this.#wait();
    let freed = false;
    return () => {
      if (freed) return;
      freed = true;
      const next = this.#waiting.shift();
      if (next) next();
      else this.#running--;
    };
  }

  #wait(): Promise<void> {
    return new Promise((resolve, reject) => {
      const turn = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        const at = this.#waiting.indexOf(turn);
        if (at >= 0) this.#waiting.splice(at, 1);
        reject(
          new SandboxError(
            "busy",
            `this sandbox host is running its limit of ${this.maxRunning} commands at once (SANDBOX_MAX_RUNNING_EXECS), and none ended within ${this.queueMs / 1000} s; the command was not started; try again in ${RETRY_AFTER_SEC} s`,
            RETRY_AFTER_SEC,
          ),
        );
      }, this.queueMs);
      this.#waiting.push(turn);
    });
  }
}
