import { createParser } from "eventsource-parser";
import { errorFromResponse, ToolwireError, unreachable } from "./errors.ts";
import { DEFAULT_KEEP_ALIVE, type KeepAlivePolicy, seconds } from "./keep-alive.ts";
import { redact } from "./socket-transport.ts";
import type { ResumePoint, Transport } from "./transport.ts";

interface SseTransportOptions {
  /** Extra request headers, e.g. `Authorization` in Node. */
  headers?: Record<string, string>;
  fetch?: typeof fetch;
  /** `sseQuietMs`: how long a stream may send nothing at all before it is dead. */
  keepAlive?: Partial<KeepAlivePolicy>;
}

/**
 * A transport over the invocation's Server-Sent Events (`/v1/invocations/:id/events`),
 * read with a streaming `fetch` (no `EventSource`, so it runs in Node and can send
 * headers), parsed by `eventsource-parser` (the WHATWG rules). It cannot ask for a base
 * mid-stream: recovery is a new connection, which sends `Last-Event-ID` when resuming.
 * Each event's `data` (its `data:` lines joined with "\n") is one frame, with its `id`;
 * comment lines (`:`, the server's keep-alives) are skipped; a stream that sends no
 * bytes at all for `sseQuietMs` is dead and reported closed (the subscription reconnects).
 *
 * @example
 * subscribe(url, { connect: sseTransport("https://host/v1/invocations/abc/events?token=…") })
 */
export function sseTransport(url: string, options: SseTransportOptions = {}): Transport {
  const doFetch = options.fetch ?? fetch;
  const quietMs = options.keepAlive?.sseQuietMs ?? DEFAULT_KEEP_ALIVE.sseQuietMs;
  return (handlers, resume?: ResumePoint) => {
    const abort = new AbortController();
    let done = false;
    let quiet: ReturnType<typeof setTimeout> | null = null;
    const finish = (error?: ToolwireError) => {
      if (quiet !== null) clearTimeout(quiet);
      quiet = null;
      if (done) return;
      done = true;
      handlers.closed(error);
    };
    /** (Re)starts the silence deadline; called when the request starts and on every chunk. */
    const heard = () => {
      if (quiet !== null) clearTimeout(quiet);
      quiet = null;
      // Closed (e.g. by the tool_end just fed): a read that never returns must hold no timer.
      if (done) return;
      quiet = setTimeout(() => {
        finish(
          new ToolwireError(
            "unreachable",
            `The event stream went silent: no bytes, not even a keep-alive, for ${seconds(quietMs)}.`,
            0,
          ),
        );
        abort.abort();
      }, quietMs);
    };
    const run = async () => {
      heard();
      let res: Response;
      try {
        res = await doFetch(url, {
          headers: {
            accept: "text/event-stream",
            ...(resume ? { "last-event-id": String(resume.after) } : {}),
            ...options.headers,
          },
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
      const parser = createParser({
        onEvent: (event) => {
          if (!done) handlers.message(event.data, event.id);
        },
      });
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      try {
        for (;;) {
          heard();
          const { value, done: ended } = await reader.read();
          if (ended || done) break;
          parser.feed(value);
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
        if (quiet !== null) clearTimeout(quiet);
        quiet = null;
        abort.abort();
      },
    };
  };
}
