import type { ShellOutputMetadata } from "../output/types.ts";

/** Limits for one exec: which end survives and the caps (defaults tail, 50 KiB, 2000 lines). */
export interface ExecLimits {
  retain?: "head" | "tail";
  maxBytes?: number;
  maxLines?: number;
}

/** Body of `POST /v1/exec`. */
export interface ExecRequest {
  execId: string;
  command: string;
  cwd?: string;
  env?: Record<string, string>;
  timeoutSec?: number;
  limits?: ExecLimits;
}

/** One NDJSON line of the exec stream. `drop` counts UTF-16 code units. */
export type ShellUpdate =
  | { kind: "replace"; output: { text: string } & ShellOutputMetadata }
  | { kind: "append"; text: string; metadata: ShellOutputMetadata }
  | { kind: "slide"; drop: number; text: string; metadata: ShellOutputMetadata }
  | { kind: "metadata"; metadata: ShellOutputMetadata }
  | { kind: "exit"; exitCode: number | null; signal?: string; error?: string };
