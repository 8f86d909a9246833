/**
 * Helpers for the InvocationDO tests: stubs by name, start requests, and a real
 * WebSocket / SSE subscriber that folds what it receives the way a client does.
 */
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { apply, decoder } from "../../../src/core/chord/index.ts";
import type { JsonValue } from "../../../src/core/chord/types.ts";
import type { HarnessEvent } from "../../../src/core/events/types.ts";
import type { ToolOutputState } from "../../../src/core/output/types.ts";
import type {
  InvocationApi,
  InvocationView,
  Outcome,
  StartRequest,
} from "../../../src/protocol/index.ts";

/** The DO's RPC surface as the tests call it (the protocol plus the flush used by tests). */
export type InvocationStub = DurableObjectStub & InvocationApi & { flushOutput(): Promise<void> };

/** The stub of the invocation named `name` (its toolCallId). */
export function stubFor(name: string): InvocationStub {
  return env.INVOCATIONS.getByName(name) as unknown as InvocationStub;
}

export function startRequest(toolCallId: string, tool: string, args: JsonValue): StartRequest {
  return { tool, args, toolCallId, runId: "run-1", turnId: "turn-1", sandbox: "default" };
}

/**
 * Crashes the invocation's object (`ctx.abort()`): its memory, running tool and sockets
 * are gone, its storage stays, at once. `evictDurableObject` instead waits for the
 * running work to drain (a bash stretch parks within SANDBOX_STREAM_WINDOW_SECONDS).
 */
export async function crash(name: string): Promise<void> {
  await runInDurableObject(stubFor(name), (_instance, state) =>
    state.abort("simulated crash"),
  ).catch(() => {});
}

/**
 * Runs the resume a new instance of a running call scheduled at once (lifecycle.ts
 * `#load`), if the runtime has not run it on its own already. When the runtime's own
 * run is still in flight this returns before it is done: a test that crashes the object
 * next first waits for what the resume does.
 */
export async function resumeDue(name: string): Promise<void> {
  await runDurableObjectAlarm(stubFor(name));
}

/** Unwraps an outcome the test expects to succeed. */
export function value<T>(outcome: Outcome<T>): T {
  if (!outcome.ok)
    throw new Error(`expected ok, got ${outcome.error.code}: ${outcome.error.message}`);
  return outcome.value;
}

/** Polls `check` until it returns a value (not undefined) or `timeoutMs` passes. */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 5000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const result = await check();
    if (result !== undefined) return result;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

export async function view(name: string): Promise<InvocationView> {
  return value(await stubFor(name).view());
}

/** The text block of an output state. */
export function textOf(state: Pick<ToolOutputState, "content"> | null): string {
  const first = state?.content[0];
  return first?.type === "text" ? first.text : "";
}

/** A client of the event stream: keeps every event and folds updates into `state`. */
export class Subscriber {
  readonly events: HarnessEvent[] = [];
  state: ToolOutputState | null = null;
  /** Number of updates that were base batches. */
  bases = 0;
  bytes = 0;
  ended = false;
  #decoder = decoder();

  receive(text: string): void {
    this.bytes += new TextEncoder().encode(text).length;
    const event = JSON.parse(text) as HarnessEvent;
    this.events.push(event);
    if (event.type === "tool_update") {
      if (event.ops[0]?.[0] === "r") this.bases++;
      this.state = apply(
        this.state as unknown as JsonValue,
        this.#decoder.decode(event.ops),
      ) as unknown as ToolOutputState;
    } else if (event.type === "tool_end") {
      this.ended = true;
    }
  }

  /** Waits until the folded state equals `expected` (deep). */
  async converge(expected: ToolOutputState): Promise<void> {
    await waitFor("subscriber to converge", () =>
      equal(this.state, expected) ? true : undefined,
    ).catch(() => {
      expect(this.state).toEqual(expected);
    });
  }

  async untilEnded(): Promise<void> {
    await waitFor("tool_end", () => (this.ended ? true : undefined));
  }
}

function equal(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** Opens a real WebSocket to the invocation's DO (as the Worker forwards it). */
export async function connectSocket(
  name: string,
  query = "",
): Promise<Subscriber & { socket: WebSocket }> {
  const res = await stubFor(name).fetch(`http://do/socket${query}`, {
    headers: { Upgrade: "websocket" },
  });
  const socket = res.webSocket;
  if (!socket) throw new Error(`no WebSocket in response (status ${res.status})`);
  socket.accept();
  const sub = Object.assign(new Subscriber(), { socket });
  socket.addEventListener("message", (e) => sub.receive(e.data as string));
  return sub;
}

/**
 * Opens an SSE stream and reads it in the background until it ends; `ids` collects each
 * event's `id:`, `comments` the comment lines (keep-alives). Resolves once the greeting (tool_start and the base) has arrived.
 */
export async function openEvents(
  name: string,
  options: { headers?: Record<string, string>; greeting?: number; sub?: Subscriber } = {},
) {
  const res = await stubFor(name).fetch("http://do/events", { headers: options.headers ?? {} });
  expect(res.headers.get("content-type")).toBe("text/event-stream");
  const body = res.body;
  if (!body) throw new Error("SSE response without a body");
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  const sub = options.sub ?? new Subscriber();
  const ids: number[] = [];
  /** Comment lines (keep-alives), which carry no event. */
  const comments: string[] = [];
  const finished = (async () => {
    let buffer = "";
    for (;;) {
      const { value: chunk, done } = await reader.read();
      if (done) return;
      buffer += chunk;
      let end = buffer.indexOf("\n\n");
      while (end >= 0) {
        const lines = buffer.slice(0, end).split("\n");
        buffer = buffer.slice(end + 2);
        if (lines.every((l) => l.startsWith(":"))) {
          comments.push(...lines);
          end = buffer.indexOf("\n\n");
          continue;
        }
        const data = lines.filter((l) => l.startsWith("data: "));
        expect(data).toHaveLength(1);
        ids.push(Number(lines.find((l) => l.startsWith("id: "))?.slice(4)));
        sub.receive(data[0]?.slice(6) ?? "");
        end = buffer.indexOf("\n\n");
      }
    }
  })();
  const greeting = options.greeting ?? 2;
  await waitFor("SSE greeting", () => (sub.events.length >= greeting ? true : undefined));
  return { sub, ids, comments, finished };
}
