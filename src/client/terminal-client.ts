/**
 * A tty call's terminal as a person's client reaches it (decision 191): the bytes that
 * draw its screen now (`GET /terminal`, any reader), and with an attach token a
 * person's keys (`POST /terminal/input`) and size (`POST /terminal/resize`). Keys typed
 * while an input is on its way go together in the next one, in order.
 */
import type { TerminalPaint, TerminalSize } from "../protocol/index.ts";
import { errorFromResponse, type ToolwireError, unreachable } from "./errors.ts";

export interface TerminalClientOptions {
  baseUrl: string;
  id: string;
  /** How reads authenticate: the API token (a header) or a subscribe token (`?token=`). */
  token?: string;
  subscribeToken?: string;
  /** The write capability; without it the terminal is read-only. */
  attachToken?: string;
  fetch?: typeof fetch;
}

/** What a resize answered: the size, and when the attach token stops resizing (epoch ms). */
export interface ResizeAnswer extends TerminalSize {
  expiresAt?: number;
}

/** What an input answered: who it typed as. */
export interface TypedAnswer {
  by: string;
  bytes: number;
}

export class TerminalClient {
  readonly #o: TerminalClientOptions;
  readonly #fetch: typeof fetch;
  #pending = "";
  #sending: Promise<void> | null = null;
  /** Called with each input's answer, or the error that refused it. */
  onTyped: (answer: TypedAnswer | ToolwireError) => void = () => {};

  constructor(options: TerminalClientOptions) {
    this.#o = options;
    this.#fetch = options.fetch ?? ((input, init) => fetch(input, init));
  }

  get canType(): boolean {
    return this.#o.attachToken !== undefined;
  }

  /** The bytes that draw the screen now and the output byte they show. */
  async paint(): Promise<TerminalPaint> {
    return (await this.#send("GET", "terminal", undefined, "Reading the screen")) as TerminalPaint;
  }

  /** Types `data`; keys typed meanwhile follow in one input once this one is answered. */
  type(data: string): Promise<void> {
    this.#pending += data;
    this.#sending ??= this.#drain();
    return this.#sending;
  }

  async #drain(): Promise<void> {
    try {
      while (this.#pending !== "") {
        const data = this.#pending;
        this.#pending = "";
        try {
          const answer = await this.#send("POST", "terminal/input", { data }, "Typing");
          this.onTyped(answer as TypedAnswer);
        } catch (error) {
          this.onTyped(error as ToolwireError);
        }
      }
    } finally {
      this.#sending = null;
    }
  }

  /**
   * Resizes the terminal to `size`, or with "restore" gives it back the call's own size;
   * answers the size and until when this token may resize (`expiresAt`, epoch ms).
   */
  async resize(size: TerminalSize | "restore"): Promise<ResizeAnswer> {
    const body = size === "restore" ? { restore: true } : size;
    return (await this.#send("POST", "terminal/resize", body, "Resizing")) as ResizeAnswer;
  }

  /** Gives the call its own size back from a page that is closing: the request outlives the page. */
  restoreOnLeave(): void {
    void this.#send("POST", "terminal/resize", { restore: true }, "Resizing", true).catch(() => {});
  }

  async #send(
    method: "GET" | "POST",
    route: string,
    body: unknown,
    what: string,
    keepalive = false,
  ) {
    const o = this.#o;
    const url = new URL(
      `${o.baseUrl.replace(/\/+$/, "")}/v1/invocations/${encodeURIComponent(o.id)}/${route}`,
    );
    const headers: Record<string, string> = { accept: "application/json" };
    if (method === "POST") {
      if (o.attachToken === undefined) throw new Error(`${what} needs an attach token`);
      headers.authorization = `Bearer ${o.attachToken}`;
      headers["content-type"] = "application/json";
    } else if (o.token) headers.authorization = `Bearer ${o.token}`;
    else if (o.subscribeToken) url.searchParams.set("token", o.subscribeToken);
    let res: Response;
    try {
      res = await this.#fetch(url.toString(), {
        method,
        headers,
        ...(keepalive ? { keepalive } : {}),
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (error) {
      throw unreachable(o.baseUrl, error);
    }
    if (!res.ok) throw await errorFromResponse(res, `${what} (${o.id})`);
    return (await res.json()) as unknown;
  }
}
