import type { Truncation } from "../../src/core/output/index.ts";
import { AdaptivePublisher, type Clock } from "../../src/core/publish/index.ts";
import {
  type ExitUpdate,
  INPUT_ECHO_WINDOW_MS,
  type ShellUpdate,
} from "../../src/protocol/index.ts";
import type { ViewPosition } from "./source-view.ts";

interface StreamPacing {
  minIntervalMs: number;
  targetBytesPerSecond: number;
  clock?: Clock;
}

/** What a consumer can be brought up to date with (an `ExecRun`'s view). */
interface PublishedView {
  readonly text: string;
  readonly viewPosition: ViewPosition;
  readonly metadata: Truncation;
}

/** A run as its streams see it (`ExecRun` is one). */
export interface StreamedRun extends PublishedView {
  /** Set once the run is over. */
  readonly exit: ExitUpdate | null;
  /** Execs before it in its sandbox's line while it waits its turn; null once it runs. */
  readonly queuedAhead: number | null;
  /** Calls `listener` after every change and at the exit; returns the unsubscribe. */
  subscribe(listener: () => void): () => void;
  /** Calls `listener` at each input (its echo is expected); returns the unsubscribe. */
  onInput(listener: () => void): () => void;
}

/** What one consumer has been sent so far. */
export interface Sent {
  position: ViewPosition;
  metadata: string;
  ahead: number | null;
}

const encoder = new TextEncoder();

/**
 * One consumer's NDJSON stream of Shell updates for `run`: a `replace` base first, then
 * `append` / `slide` / `metadata` deltas paced by an `AdaptivePublisher`, then the final
 * state (forced) and `exit`.
 *
 * Memory stays bounded for a slow consumer: a delta is computed only when the consumer
 * has asked for more (the response's `pull`), so nothing queues behind a stalled socket;
 * meanwhile the run keeps only its bounded view and the next delta covers everything
 * that changed since the last one.
 * @example return new Response(execUpdateStream(run, { minIntervalMs: 100, targetBytesPerSecond: 102400 }));
 */
export function execUpdateStream(
  run: StreamedRun,
  pacing: StreamPacing,
): ReadableStream<Uint8Array> {
  let sent: Sent | null = null;
  let wanted = false;
  let stalled = false;
  let forcing = false;
  let closed = false;
  let release: (() => void) | null = null;
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let unsubscribe = (): void => {};

  const publisher = new AdaptivePublisher<Uint8Array>({
    update: () => {
      if (!wanted && !forcing) {
        stalled = true;
        return null;
      }
      const lines = [nextUpdate(run, sent), queueUpdate(run, sent)].filter((u) => u !== null);
      sent = {
        position: run.viewPosition,
        metadata: JSON.stringify(run.metadata),
        ahead: run.queuedAhead,
      };
      return lines.length === 0 ? null : encoder.encode(lines.map(lineOf).join(""));
    },
    measure: (line) => line.byteLength,
    publish: (line) => emit(line),
    onError: (error) => fail(error),
    minIntervalMs: pacing.minIntervalMs,
    targetBytesPerSecond: pacing.targetBytesPerSecond,
    clock: pacing.clock,
  });

  function emit(line: Uint8Array): void {
    if (closed) return;
    controller.enqueue(line);
    wanted = false;
    release?.();
    release = null;
  }

  function forceFlush(): void {
    forcing = true;
    try {
      publisher.flush(true);
    } finally {
      forcing = false;
    }
  }

  function finish(): void {
    const exit = run.exit;
    if (!exit || closed) return;
    forceFlush();
    emit(encodeLine(exit));
    close();
  }

  function close(): void {
    if (closed) return;
    closed = true;
    unsubscribe();
    publisher.dispose();
    controller.close();
    release?.();
  }

  function fail(error: unknown): void {
    if (closed) return;
    closed = true;
    unsubscribe();
    publisher.dispose();
    controller.error(error);
  }

  return new ReadableStream<Uint8Array>(
    {
      start(c) {
        controller = c;
        forceFlush();
        if (run.exit) {
          finish();
          return;
        }
        const offChange = run.subscribe(() => (run.exit ? finish() : publisher.markDirty()));
        // A key's echo is what its typist waits for: it goes out unpaced (decision 192).
        const offInput = run.onInput(() => publisher.expedite(INPUT_ECHO_WINDOW_MS));
        unsubscribe = () => {
          offChange();
          offInput();
        };
      },
      pull() {
        if (closed) return;
        wanted = true;
        if (stalled) {
          stalled = false;
          publisher.markDirty();
        }
        if (!wanted) return;
        return new Promise<void>((resolve) => {
          release = resolve;
        });
      },
      cancel() {
        closed = true;
        unsubscribe();
        publisher.dispose();
        release?.();
      },
    },
    { highWaterMark: 0 },
  );
}

/**
 * The update that brings a consumer from `sent` to the run's current view: a `replace`
 * base when it has nothing yet, else the smallest of `slide` / `append` / `metadata`,
 * or null when nothing changed. When everything the consumer holds is gone, the slide
 * drops all of it and carries the whole current text.
 */
export function nextUpdate(run: PublishedView, sent: Sent | null): ShellUpdate | null {
  const position = run.viewPosition;
  const metadata = run.metadata;
  if (!sent) return { kind: "replace", output: { text: run.text, ...metadata } };
  const drop = Math.min(position.dropped, sent.position.appended) - sent.position.dropped;
  const text = run.text.slice(Math.max(0, sent.position.appended - position.dropped));
  if (drop > 0) return { kind: "slide", drop, text, metadata };
  if (text !== "") return { kind: "append", text, metadata };
  if (JSON.stringify(metadata) !== sent.metadata) return { kind: "metadata", metadata };
  return null;
}

/**
 * Where the run stands in its sandbox's line, when that changed since `sent`: a run that
 * waits says so after its base, and says `ahead: null` when its turn comes (decision 248).
 */
function queueUpdate(run: StreamedRun, sent: Sent | null): ShellUpdate | null {
  const ahead = run.queuedAhead;
  if (sent ? sent.ahead === ahead : ahead === null) return null;
  return { kind: "queue", ahead };
}

function lineOf(update: ShellUpdate): string {
  return `${JSON.stringify(update)}\n`;
}

function encodeLine(update: ShellUpdate): Uint8Array {
  return encoder.encode(lineOf(update));
}
