/**
 * The server's clock as seen from the browser. Elapsed time subtracts the server's
 * `createdAt` from "now", and a browser whose clock is off by minutes would show
 * minutes too many (or a clock stuck at zero). Each API answer's `Date` header says
 * the server's time to the second at some moment of the request; the offset kept is
 * the smallest correction consistent with every answer seen, so a browser clock that
 * already agrees is left alone.
 *
 * @example
 * const clock = new ServerClock();
 * clock.observe(res.headers.get("date"), sentAt, Date.now());
 * const elapsed = clock.now(Date.now()) - createdAt;
 */
export class ServerClock {
  /** Server time minus browser time, in milliseconds. */
  offsetMs = 0;
  #low = Number.NEGATIVE_INFINITY;
  #high = Number.POSITIVE_INFINITY;

  /** One answer: its `Date` header, and the browser's time when the request was sent and answered. */
  observe(dateHeader: string | null, sentAt: number, receivedAt: number): void {
    const serverSecond = dateHeader === null ? Number.NaN : Date.parse(dateHeader);
    if (!Number.isFinite(serverSecond)) return;
    // The server's clock read [second, second + 1000) at a browser time in [sentAt, receivedAt].
    const low = Math.max(this.#low, serverSecond - receivedAt);
    const high = Math.min(this.#high, serverSecond + 1000 - sentAt);
    // Answers that disagree (the browser's clock was changed meanwhile): trust the newest.
    if (low > high) {
      this.#low = serverSecond - receivedAt;
      this.#high = serverSecond + 1000 - sentAt;
    } else {
      this.#low = low;
      this.#high = high;
    }
    this.offsetMs = Math.min(Math.max(0, this.#low), this.#high);
  }

  /** The server's time at browser time `browserNow`. */
  now(browserNow: number): number {
    return browserNow + this.offsetMs;
  }
}
