import type { ProducerCall, ProducerEnd } from "../core/output/types.ts";
import type { InvocationView as InvocationInfo } from "../protocol/index.ts";
import { type BackoffPolicy, backoffDelay } from "./backoff.ts";
import { ToolwireError } from "./errors.ts";

export interface OutputProducerOptions {
  /** The seq of the first body (default 0; another value continues an earlier producer). */
  firstSeq?: number;
  /** Spacing and number of attempts per body (default 100 ms … 2 s, 8 attempts). */
  retry?: Partial<BackoffPolicy>;
}

/** One attempt at sending a body under `seq`. */
type SendBody = (
  calls: ProducerCall[],
  end: ProducerEnd | undefined,
  seq: number,
) => Promise<InvocationInfo>;

const DEFAULT_RETRY: BackoffPolicy = { initialMs: 100, maxMs: 2000, maxAttempts: 8 };

/**
 * Sends producer bodies in order, each under the next `seq` (docs/decisions/110), and
 * retries a body whose answer was lost (no connection, a 5xx, a timeout) with the same
 * `seq`: the server answers a repeat of the last accepted body as it did the first time
 * and applies nothing again, so every body lands exactly once.
 *
 * A refusal (400, 409, 413) is thrown and the seq stays: nothing of that body was
 * applied. When retries run out the body may or may not have landed; the seq stays too,
 * so sending that same body again is safe (and anything else is a 409 until it is).
 *
 * @example
 * const out = client.producer("ext_1");
 * await out.send([{ write: "running\n" }]);
 * await out.send([{ write: "done\n" }], { isError: false });
 */
export class OutputProducer {
  readonly #send: SendBody;
  readonly #retry: BackoffPolicy;
  #seq: number;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(send: SendBody, options: OutputProducerOptions = {}) {
    this.#send = send;
    this.#retry = { ...DEFAULT_RETRY, ...options.retry };
    this.#seq = options.firstSeq ?? 0;
  }

  /** The seq the next body will carry. */
  get nextSeq(): number {
    return this.#seq;
  }

  /** Sends one body after every earlier one was answered; resolves with the server's view. */
  send(calls: ProducerCall[], end?: ProducerEnd): Promise<InvocationInfo> {
    const sent = this.#queue.then(() => this.#deliver(calls, end));
    this.#queue = sent.catch(() => {});
    return sent;
  }

  async #deliver(calls: ProducerCall[], end: ProducerEnd | undefined): Promise<InvocationInfo> {
    const seq = this.#seq;
    for (let attempt = 0; ; attempt++) {
      try {
        const answer = await this.#send(calls, end, seq);
        this.#seq = seq + 1;
        return answer;
      } catch (error) {
        const retryable = error instanceof ToolwireError && !error.permanent;
        if (!retryable || attempt + 1 >= this.#retry.maxAttempts) throw error;
        await new Promise((resolve) => setTimeout(resolve, backoffDelay(attempt, this.#retry)));
      }
    }
  }
}
