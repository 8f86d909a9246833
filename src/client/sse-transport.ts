import { errorFromResponse, ToolwireError, unreachable } from "./errors.ts";
import { redact } from "./socket-transport.ts";
import { SseParser } from "./sse-parser.ts";
import type { Transport } from "./transport.ts";

export interface SseTransportOptions {
  /** Extra request headers, e.g. `Authorization` in Node. */
  headers?: Record<string, string>;
  fetch?: typeof fetch;
}

/**
 * A transport over the invocation's Server-Sent Events (`/v1/invocations/:id/events`),
 * read with a streaming `fetch` (no `EventSource`, so it runs in Node and can send
 * headers). It cannot ask for a base mid-stream: recovery is a new connection.
 *
 * @example
 * subscribe(url, { connect: sseTransport("https://host/v1/invocations/abc/events?token=…") })
 */
export function sseTransport(url: string, options: SseTransportOptions = {}): Transport {
  const doFetch = options.fetch ?? fetch;
  return (handlers) => {
    const abort = new AbortController();
    let done = false;
    const finish = (error?: ToolwireError) => {
      if (done) return;
      done = true;
      handlers.closed(error);
    };
    const run = async () => {
      let res: Response;
      try {
        res = await doFetch(url, {
          headers: { accept: "text/event-stream", ...options.headers },
          signal: abort.signal,
        });
      } catch (error) {
        return finish(unreachable(redact(url), error));
      }
      if (!res.ok) return finish(await errorFromResponse(res, "Subscribing"));
      if (!res.headers.get("content-type")?.startsWith("text/event-stream") || !res.body) {
        await res.body?.cancel();
        return finish(
          new ToolwireError(
            "bad_response",
            `${redact(url)} did not answer with an event stream. Check the URL.`,
            res.status,
          ),
        );
      }
      const parser = new SseParser();
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      try {
        for (;;) {
          const { value, done: ended } = await reader.read();
          if (ended || done) break;
          for (const message of parser.push(value)) {
            if (done) break;
            handlers.message(message.data);
          }
        }
        finish();
      } catch (error) {
        finish(unreachable(redact(url), error));
      }
    };
    void run();
    return {
      resync: () => false,
      close() {
        done = true;
        abort.abort();
      },
    };
  };
}
