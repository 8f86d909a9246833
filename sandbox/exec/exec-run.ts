import { constants } from "node:os";
import type { Readable } from "node:stream";
import type { ExecLimits, ExitUpdate } from "../../src/execenv/index.ts";
import {
  DEFAULT_OUTPUT_POLICY,
  type OutputPolicy,
  type Truncation,
} from "../../src/output/index.ts";
import type { Jail, JailedCommand } from "../jail/jail.ts";
import { formatBytes } from "../jail/limits.ts";
import type { Workspace } from "../workspace.ts";
import {
  type GroupTermination,
  type KillTarget,
  spawnShell,
  terminateGroup,
} from "./process-group.ts";
import { type Pipe, SourceView, type ViewPosition } from "./source-view.ts";
import { SpillFile, SpillRefusedError } from "./spill-file.ts";

export interface ExecRunOptions {
  execId: string;
  command: string;
  /** Absolute, already confined to the workspace. */
  cwd: string;
  /** The call's own variables (the jail adds its clean base: PATH, HOME, LANG, TMPDIR). */
  env: Record<string, string>;
  /** The jail every command runs in. */
  jail: Jail;
  timeoutSec?: number;
  limits?: ExecLimits;
  /** Absolute path of the spill file (created only if the cap is exceeded). */
  spillAbsPath: string;
  /** The same path relative to the workspace root, as published in metadata. */
  spillPath: string;
  /** The workspace the spill file must stay inside. */
  workspace: Workspace;
  /** Grace between SIGTERM and SIGKILL. */
  killGraceMs: number;
  /** Output past this many bytes stops the command; the spill file holds exactly this many. */
  maxSpillBytes: number;
}

/**
 * One command and its bounded view. stdout and stderr chunks go, in arrival order, to
 * one `SourceView` (which decodes each pipe on its own, so a UTF-8 sequence split
 * across chunks stays whole). Raw bytes are kept until the cap is first exceeded; from then on the
 * complete raw stream goes to the spill file, each chunk written before the next is read.
 */
export class ExecRun {
  readonly execId: string;
  private readonly options: ExecRunOptions;
  private readonly policy: OutputPolicy;
  private readonly view: SourceView;
  private readonly spill: SpillFile;
  private rawPrefix: Buffer[] | null = [];
  private rawPrefixBytes = 0;
  /** Bytes taken from both pipes so far (at most `maxSpillBytes`). */
  private bytesSeen = 0;
  private spillOpened = false;
  private jailed: JailedCommand | null = null;
  private target: KillTarget = { outer: -1, group: null };
  private exitUpdate: ExitUpdate | null = null;
  private failure: string | null = null;
  private termination: GroupTermination | null = null;
  private timeoutTimer: NodeJS.Timeout | null = null;
  private readonly listeners = new Set<() => void>();

  constructor(options: ExecRunOptions) {
    this.execId = options.execId;
    this.options = options;
    this.policy = { ...DEFAULT_OUTPUT_POLICY, ...definedLimits(options.limits) };
    this.view = new SourceView(this.policy, (bytes) => this.released(bytes));
    this.spill = new SpillFile(options.spillAbsPath, options.workspace, (err) =>
      this.fail(
        err instanceof SpillRefusedError
          ? `spill file refused: ${err.message}; the host writes spill files only as plain files inside the workspace. Remove what is there and run the command again (it was stopped so that no output is lost)`
          : `spill write failed (${err.message}); the command was stopped so that no output is lost`,
      ),
    );
  }

  /** Spawns the command: `bash -c command`, in the jail. */
  start(): void {
    const { jail, command, cwd, env } = this.options;
    let jailed: JailedCommand;
    try {
      jailed = jail.wrap({ argv: ["/bin/bash", "-c", command], cwd, env, writable: true });
    } catch (err) {
      this.failure = `could not start the command: ${(err as Error).message}`;
      void this.onClose(null, null);
      return;
    }
    this.jailed = jailed;
    const child = spawnShell(jailed, cwd);
    this.target = { outer: child.pid ?? -1, group: jailed.statusFd ? null : (child.pid ?? null) };
    const status = child.stdio[3];
    if (status && "setEncoding" in status) this.readJailStatus(status as Readable);
    child.stdout.on("data", (chunk: Buffer) => this.onChunk(chunk, 0));
    child.stderr.on("data", (chunk: Buffer) => this.onChunk(chunk, 1));
    child.stdout.on("end", () => this.onEnd(0));
    child.stderr.on("end", () => this.onEnd(1));
    child.on("error", (err) => this.fail(`could not start the command: ${err.message}`));
    child.on("close", (code, signal) => void this.onClose(code, signal));
    const timeoutSec = this.options.timeoutSec;
    if (timeoutSec !== undefined) {
      this.timeoutTimer = setTimeout(
        () => this.terminate(`timed out after ${timeoutSec} s; the process group was killed`),
        timeoutSec * 1000,
      );
      this.timeoutTimer.unref();
    }
  }

  /** Terminates the process group (SIGTERM, then SIGKILL after the grace). */
  kill(): void {
    this.terminate("killed on request; the process group was terminated");
  }

  /** Current text of the view. */
  get text(): string {
    return this.view.text;
  }

  /** Where the current text sits in the stream of everything appended. */
  get viewPosition(): ViewPosition {
    return this.view.position;
  }

  /** Source-owned totals (exact, everything ever printed) plus the spill path once it exists. */
  get metadata(): Truncation {
    const truncation = this.view.truncation();
    return this.spillOpened ? { ...truncation, spillPath: this.options.spillPath } : truncation;
  }

  /** The exit, once the process is gone, its pipes drained and the spill file closed. */
  get exit(): ExitUpdate | null {
    return this.exitUpdate;
  }

  /** Calls `listener` after every change, and once more when the run exits. */
  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private onChunk(whole: Buffer, pipe: Pipe): void {
    const room = this.options.maxSpillBytes - this.bytesSeen;
    if (room <= 0) return; // past the cap: the command is being stopped
    const chunk = whole.length > room ? whole.subarray(0, room) : whole;
    this.bytesSeen += chunk.length;
    this.keepRaw(chunk);
    this.view.push(pipe, chunk);
    this.notify();
    if (!this.spillOpened && (this.view.truncated || this.rawPrefixBytes > this.policy.maxBytes)) {
      this.openSpill();
    }
    if (chunk !== whole) this.spillCapReached();
  }

  /** The output reached the cap: the spill keeps exactly the cap, and the command is stopped. */
  private spillCapReached(): void {
    if (!this.spillOpened) this.openSpill();
    this.fail(
      `output reached the ${formatBytes(this.options.maxSpillBytes)} limit; the command was stopped; everything up to there is in ${this.options.spillPath}`,
    );
  }

  private keepRaw(chunk: Buffer): void {
    if (this.spillOpened) {
      this.spill.write(chunk);
      return;
    }
    this.rawPrefix?.push(chunk);
    this.rawPrefixBytes += chunk.length;
  }

  private openSpill(): void {
    this.spillOpened = true;
    for (const chunk of this.rawPrefix ?? []) if (!this.spill.write(chunk)) break;
    this.rawPrefix = null;
    this.rawPrefixBytes = 0;
    this.notify();
  }

  /**
   * The view is done with `chunk`. Once the spill file exists, every chunk the view
   * holds is already on disk (writes are synchronous), so nothing needs it any more.
   */
  private released(chunk: Uint8Array): void {
    if (this.spillOpened) freeChunk(chunk);
  }

  private onEnd(pipe: Pipe): void {
    this.view.end(pipe);
    this.notify();
  }

  private fail(message: string): void {
    if (this.failure) return;
    // Bytes that arrive from now on are counted but cannot be kept.
    this.failure = message;
    this.stopGroup();
  }

  private terminate(message: string): void {
    if (this.exitUpdate || this.failure) return;
    this.failure = message;
    this.stopGroup();
  }

  private stopGroup(): void {
    if (this.target.outer < 0 || this.termination) return;
    this.termination = terminateGroup(this.target, this.options.killGraceMs);
  }

  /** bubblewrap's first status object names the jail's PID 1, the group SIGTERM goes to. */
  private readJailStatus(status: Readable): void {
    let text = "";
    status.setEncoding("utf8");
    status.on("data", (piece: string) => {
      if (this.target.group !== null) return;
      text += piece;
      const pid = /"child-pid":\s*(\d+)/.exec(text)?.[1];
      if (pid !== undefined) this.target.group = Number(pid);
    });
  }

  private async onClose(code: number | null, signal: NodeJS.Signals | null): Promise<void> {
    if (this.timeoutTimer) clearTimeout(this.timeoutTimer);
    // A terminated command is over once its shell is gone: whatever is left of the group
    // (SIGTERM ignored, pipes not held, so nothing kept the exec open) is killed now.
    this.termination?.killNow();
    this.jailed?.release();
    try {
      await this.spill.close();
    } catch (err) {
      this.failure ??= `spill write failed (${(err as Error).message}); output is incomplete`;
    }
    this.rawPrefix = null;
    const update: ExitUpdate = { kind: "exit", exitCode: code };
    if (signal) update.signal = signal;
    // bubblewrap exits with 128 + n when the command died of signal n; on a
    // termination the host caused, that is reported as the signal, as unjailed.
    const jailSignal = this.termination && code !== null ? signalOf(code) : undefined;
    if (jailSignal) {
      update.exitCode = null;
      update.signal = jailSignal;
    }
    if (this.failure) update.error = this.failure;
    this.exitUpdate = update;
    this.notify();
    this.listeners.clear();
  }

  private notify(): void {
    for (const listener of this.listeners) listener();
  }
}

/**
 * Frees a pipe chunk's memory now, by detaching the `ArrayBuffer` it owns alone (each
 * pipe read gets its own). Left to the garbage collector, dead chunks pile up to ~32 MiB
 * before V8's external-memory trigger runs a scavenge; freeing them at once keeps the
 * host's resident set flat and lets malloc reuse warm memory (decision 037).
 */
function freeChunk(chunk: Uint8Array): void {
  const buffer = chunk.buffer as ArrayBuffer & { transfer?: (length: number) => ArrayBuffer };
  if (chunk.byteOffset === 0 && buffer.byteLength === chunk.byteLength) buffer.transfer?.(0);
}

/** The signal a jailed command died of, from bubblewrap's exit code 128 + n. */
function signalOf(code: number): NodeJS.Signals | undefined {
  if (code <= 128) return undefined;
  const n = code - 128;
  return (Object.keys(constants.signals) as NodeJS.Signals[]).find(
    (name) => constants.signals[name] === n,
  );
}

function definedLimits(limits: ExecLimits | undefined): Partial<OutputPolicy> {
  const out: Partial<OutputPolicy> = {};
  if (limits?.retain !== undefined) out.retain = limits.retain;
  if (limits?.maxBytes !== undefined) out.maxBytes = limits.maxBytes;
  if (limits?.maxLines !== undefined) out.maxLines = limits.maxLines;
  return out;
}
