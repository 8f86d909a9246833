/**
 * SSE resumability for 2025-11-25 sessions (SEP-1699, docs/decisions/107): the SDK
 * transport's `EventStore`, kept in the session's object so that a `GET` with
 * `Last-Event-ID` is answered by whichever isolate gets it. Event ids are
 * `<stream id>_<number>`; a replay waits (up to `REPLAY_WAIT_MS`) until the stream's
 * response is stored, since the isolate that runs the call may still be writing it.
 */
import type { EventStore, JSONRPCMessage } from "@modelcontextprotocol/server";
import type { SessionStore } from "./port.ts";

/** How long a replay waits for the response of the stream it resumes. */
export const REPLAY_WAIT_MS = 25_000;
const REPLAY_POLL_MS = 200;

const EVENT_ID = /^([A-Za-z0-9-]{1,64})_(\d{1,10})$/;

/** Whether `message` answers a request (a result or an error). */
function isResponse(message: unknown): boolean {
  if (typeof message !== "object" || message === null) return false;
  return "id" in message && ("result" in message || "error" in message);
}

/**
 * Splits an event id into its stream and number; undefined for an id this store did not issue.
 * @example parseEventId("3f2a_4") // { streamId: "3f2a", seq: 4 }
 */
export function parseEventId(eventId: string): { streamId: string; seq: number } | undefined {
  const match = EVENT_ID.exec(eventId);
  if (!match) return undefined;
  return { streamId: match[1] as string, seq: Number(match[2]) };
}

/** An event store for one request of session `sessionId`, and when its response was stored. */
interface SessionEventStore extends EventStore {
  /** Resolves once a response (result or error) has been stored. */
  readonly responded: Promise<void>;
}

/**
 * The event store of one 2025-11-25 request of a session.
 * @example new WebStandardStreamableHTTPServerTransport({ eventStore: sessionEventStore(sessions, id) })
 */
export function sessionEventStore(sessions: SessionStore, sessionId: string): SessionEventStore {
  let markResponded = () => {};
  const responded = new Promise<void>((resolve) => {
    markResponded = resolve;
  });
  return {
    responded,
    async storeEvent(streamId, message) {
      const seq = await sessions.appendEvent(sessionId, streamId, JSON.stringify(message));
      if (isResponse(message)) markResponded();
      return `${streamId}_${seq}`;
    },
    async getStreamIdForEventId(eventId) {
      return parseEventId(eventId)?.streamId;
    },
    async replayEventsAfter(lastEventId, { send }) {
      const from = parseEventId(lastEventId);
      if (from === undefined)
        throw new Error(
          `Last-Event-ID ${JSON.stringify(lastEventId)} is not an event of this server`,
        );
      let seq = from.seq;
      const deadline = Date.now() + REPLAY_WAIT_MS;
      for (;;) {
        let answered = false;
        for (const event of await sessions.eventsAfter(sessionId, from.streamId, seq)) {
          seq = event.seq;
          const message = JSON.parse(event.message) as JSONRPCMessage;
          // The priming event is stored as `{}`: nothing to resend.
          if (Object.keys(message).length === 0) continue;
          await send(`${from.streamId}_${event.seq}`, message);
          if (isResponse(message)) answered = true;
        }
        if (answered || Date.now() >= deadline) return from.streamId;
        await new Promise((resolve) => setTimeout(resolve, REPLAY_POLL_MS));
      }
    },
  };
}
