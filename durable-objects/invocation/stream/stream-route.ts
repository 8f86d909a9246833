/**
 * The Invocation Durable Object's Durable Stream face (`/stream`, forwarded by the Worker
 * after it checked the credential): a stream made with `PUT` is read and written here; a
 * call's output without one is read here too, from what the call wrote (decision 200):
 * an `external` call's appended bytes, another tool's settled text. Bash is read from its
 * spill by the Worker.
 */
import type { SettledResult } from "../../../src/core/output/index.ts";
import {
  answerRead,
  SECURITY_HEADERS,
  type StreamSource,
  streamError,
} from "../../../src/protocol/durable-streams/index.ts";
import { EXTERNAL_TOOL } from "../../../src/tools/index.ts";
import type { InvocationRecord } from "../output/store.ts";
import {
  deleteStream,
  release,
  type StreamLineage,
  softDeleted,
  stillHeld,
} from "./stream-lineage.ts";
import { expired, type StreamLog } from "./stream-log.ts";
import { appendToStream, createStream, lifeHeaders } from "./stream-writes.ts";

/** What the face reads of the invocation this object holds. */
interface StreamedInvocation {
  record(): InvocationRecord | undefined;
  result(): SettledResult | undefined;
  /** Resolves when the invocation settles, or after `ms`. */
  settled(ms: number): Promise<unknown>;
}

/** The type a call's output is served as: the text the tool wrote, in UTF-8. */
const OUTPUT_TYPE = "text/plain; charset=utf-8";

/**
 * Answers one stream request.
 * @example return answerStream(request, { log, forks, peers }, invocation, 20_000)
 */
export async function answerStream(
  request: Request,
  lineage: StreamLineage,
  invocation: StreamedInvocation,
  longPollMs: number,
): Promise<Response> {
  const method = request.method;
  const log = lineage.log;
  let meta = log.meta();
  if (meta && expired(meta, Date.now())) {
    await release(lineage, meta);
    meta = null;
  }
  if (meta?.deleted && !(await stillHeld(lineage, meta))) meta = null;
  if (method === "PUT") {
    if (!meta && invocation.record()) {
      return streamError(
        "conflict",
        "this name is a tool call's id; its output is read here but it is written through its producer API",
      );
    }
    return createStream(request, log, lineage.peers);
  }
  // The Worker routes only GET, HEAD, PUT, POST and DELETE here.
  if (meta?.deleted) return softDeleted();
  if (method === "POST") return appendToStream(request, log);
  if (method === "DELETE") return deleteStream(lineage);
  if (method !== "GET" && method !== "HEAD") {
    return streamError("method_not_allowed", `${method} is not allowed on a stream`, {
      Allow: "GET, HEAD, PUT, POST, DELETE",
    });
  }
  // A read keeps a stream with a TTL alive; a HEAD does not.
  if (meta && method === "GET") log.touch();
  const source = meta ? writtenSource(log) : invocationSource(log, invocation);
  if (!source) return streamError("not_found", "no such stream or call", SECURITY_HEADERS);
  return answerRead(request, source, longPollMs);
}

function writtenSource(log: StreamLog): StreamSource | null {
  const meta = log.meta();
  if (!meta) return null;
  return {
    contentType: meta.contentType,
    identity: meta.generation,
    headers: lifeHeaders(meta),
    async read(from, maxBytes) {
      const now = log.meta();
      if (!now) return "gone";
      return log.slice(from, maxBytes, now.closed, /^application\/json/i.test(now.contentType));
    },
    wait: (_from, until, signal) => log.wait(until, signal),
  };
}

function invocationSource(log: StreamLog, invocation: StreamedInvocation): StreamSource | null {
  const record = invocation.record();
  if (!record) return null;
  const identity = `c${record.createdAt.toString(36)}`;
  const wait = async (_from: number, until: number, signal: AbortSignal) => {
    await Promise.race([log.wait(until, signal), invocation.settled(until - Date.now())]);
  };
  if (record.tool === EXTERNAL_TOOL) {
    return {
      contentType: OUTPUT_TYPE,
      identity,
      async read(from, maxBytes) {
        const settled = invocation.record()?.status === "settled";
        return log.slice(from, maxBytes, settled, false);
      },
      wait,
    };
  }
  return {
    contentType: OUTPUT_TYPE,
    identity,
    async read(from, maxBytes) {
      const result = invocation.result();
      const bytes = new TextEncoder().encode(result ? textOf(result) : "");
      const end = maxBytes === 0 ? from : Math.min(bytes.byteLength, from + maxBytes);
      const parts = end > from ? [bytes.subarray(from, end)] : [];
      return {
        parts,
        next: Math.max(from, end),
        tail: bytes.byteLength,
        closed: result !== undefined,
      };
    },
    wait,
  };
}

/** A settled call's text: its text content, in order. */
function textOf(result: SettledResult): string {
  return result.content.map((item) => (item.type === "text" ? item.text : "")).join("");
}
