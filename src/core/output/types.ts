import type { JsonValue, Op } from "../chord/types.ts";

/** Token and cost accounting. Every field is a non-negative number; `usage()` adds field by field. */
export interface Usage {
  input?: number;
  output?: number;
  cacheRead?: number;
  cacheWrite?: number;
  cost?: number;
  [field: string]: number | undefined;
}

export interface TextContent {
  type: "text";
  text: string;
}
export interface ImageContent {
  type: "image";
  data: string;
  mimeType: string;
}
/** Exactly one text block, then zero or more images. */
export type OutputContent = [TextContent, ...ImageContent[]];

/** How a tool's text is bounded: which end survives, and the caps. */
export interface OutputPolicy {
  retain: "head" | "tail";
  maxBytes: number;
  maxLines: number;
}

/** Defaults from docs/protocol.md#bounded-output: tail, 50 KiB, 2000 lines. */
export const DEFAULT_OUTPUT_POLICY: OutputPolicy = {
  retain: "tail",
  maxBytes: 50 * 1024,
  maxLines: 2000,
};

/** Truncation totals. Totals (`total*`) cover everything ever written. */
export interface Truncation {
  truncated: boolean;
  truncatedBy: "lines" | "bytes" | null;
  totalLines: number;
  totalBytes: number;
  outputLines: number;
  outputBytes: number;
  maxLines: number;
  maxBytes: number;
  lastLinePartial: boolean;
  firstLineExceedsLimit: boolean;
  spillPath?: string;
}

/** Source-owned totals and spill path, as reported by a sandbox (`capture`). */
export type ShellOutputMetadata = Truncation;

/** The whole observable state of one invocation's output: what is tracked and synced. */
export interface ToolOutputState {
  content: (TextContent | ImageContent)[];
  details: JsonValue;
  usage?: Usage;
  addedTools?: string[];
  terminate: boolean;
  truncation: Truncation;
}

/** The sink a tool writes to. */
export interface ToolOutput<D extends JsonValue = JsonValue> {
  /** Append to the text block (bounded by the tool's policy). */
  write(text: string): void;
  /** Append an image; never windowed. At most 8, each at most 1 MiB of base64. */
  image(img: { data: string; mimeType: string }): void;
  /** Replace the retained text. */
  replace(text: string): void;
  /**
   * Drop `drop` UTF-16 units from the start of the retained text, then append `text`: how a
   * source that windows at its end (a sandbox's `slide` update) reports a moving window.
   */
  slide(drop: number, text: string): void;
  /** Adopt source-owned totals and spill path (the text was already windowed at the source). */
  capture(meta: ShellOutputMetadata): void;
  /** Mutate directly; tracked. At most 64 KiB serialized. */
  readonly details: D;
  /** Accumulate usage field by field. */
  usage(u: Usage): void;
  /** Replace the list of tools this call adds. */
  addTools(names: string[]): void;
  /** Replace the terminate flag. */
  terminate(value: boolean): void;
}

/** The settled result of an invocation, stored as one record. */
export interface SettledResult {
  content: (TextContent | ImageContent)[];
  details: JsonValue;
  usage?: Usage;
  addedTools?: string[];
  terminate: boolean;
  isError: boolean;
  truncation: Truncation;
}

/** One sink call sent over the producer API (`POST /v1/invocations/:id/output`). */
export type ProducerCall =
  | { write: string }
  | { replace: string }
  | { image: { data: string; mimeType: string } }
  | { details: Op[] }
  | { usage: Usage }
  | { addTools: string[] }
  | { terminate: boolean };

/** Ends an agent-side invocation through the producer API. */
export interface ProducerEnd {
  isError: boolean;
  error?: string;
}
