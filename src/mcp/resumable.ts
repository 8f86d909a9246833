/**
 * A 2025-11-25 request of a live session, served so that its SSE stream can be resumed
 * (SEP-1699, docs/decisions/107): the SDK's streamable HTTP transport, stateless as the
 * SDK's own 2025 fallback, given the session's event store and a `retry` hint, so every
 * POST stream opens with a priming event and a `GET` with `Last-Event-ID` replays what
 * followed. When a stream ends before its response (the client left, or the call closed
 * it), the exchange is kept open in the background until the response is stored (at
 * most `REPLAY_WAIT_MS`), so a reconnect gets it.
 */
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/server";
import { REPLAY_WAIT_MS, sessionEventStore } from "./event-store.ts";
import { type ToolwireServerOptions, toolwireServer } from "./server.ts";

/** Milliseconds a client is told (`retry:`) to wait before it reconnects. */
const RETRY_MS = 1000;

function isEventStream(res: Response): boolean {
  return (res.headers.get("content-type") ?? "").split(";")[0]?.trim() === "text/event-stream";
}

/**
 * Serves `req` (a POST, or a GET with `Last-Event-ID`) of 2025-11-25 session `sessionId`;
 * `parsedBody` is the POST's JSON as the endpoint parsed it (undefined: the transport reads it).
 * @example await serveResumable(req, options, sessionId, parsedBody)
 */
export async function serveResumable(
  req: Request,
  options: ToolwireServerOptions & { keepAliveMs: number },
  sessionId: string,
  parsedBody?: unknown,
): Promise<Response> {
  const store = sessionEventStore(options.sessions, sessionId);
  const server = toolwireServer(options, { era: "legacy", requestInfo: req });
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    eventStore: store,
    retryInterval: RETRY_MS,
    keepAliveMs: options.keepAliveMs,
  });
  await server.connect(transport);
  const teardown = () => {
    transport.close().catch(() => {});
    server.close().catch(() => {});
  };
  const res = await transport.handleRequest(req, parsedBody === undefined ? {} : { parsedBody });
  if (res.body === null || !isEventStream(res)) {
    teardown();
    return res;
  }
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    if (req.method !== "POST") return teardown();
    // The call may still be running: keep the exchange until its response is stored.
    const bounded = new Promise<void>((resolve) => setTimeout(resolve, REPLAY_WAIT_MS));
    const done = Promise.race([store.responded, bounded]).then(teardown);
    options.waitUntil?.(done);
  };
  const reader = res.body.getReader();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          end();
          controller.close();
          return;
        }
        controller.enqueue(value);
      } catch (error) {
        end();
        controller.error(error);
      }
    },
    cancel(reason) {
      end();
      return reader.cancel(reason).catch(() => {});
    },
  });
  return new Response(body, {
    status: res.status,
    statusText: res.statusText,
    headers: res.headers,
  });
}
