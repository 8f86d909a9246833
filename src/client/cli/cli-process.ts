import type { Terminal } from "./live-printer.ts";

/** What the CLI needs from its process: output streams, environment, Ctrl-C, the keyboard. */
export interface CliProcess extends Terminal {
  env: Record<string, string | undefined>;
  /** Registers a Ctrl-C handler; returns a function that removes it. */
  onInterrupt(handler: () => void): () => void;
  version: string;
  /** The person's terminal, when stdin and stdout are one (`toolwire attach`); absent otherwise. */
  keyboard?: Keyboard;
}

/** A person's terminal as `toolwire attach` holds it. */
export interface Keyboard {
  /** Its size in character cells now. */
  size(): { cols: number; rows: number };
  /** Raw mode on: every key goes to `onData` as typed (Ctrl-C too); returns what restores it. */
  raw(onData: (data: Uint8Array) => void): () => void;
  /** Calls `handler` after each resize of the terminal (SIGWINCH); returns what stops it. */
  onResize(handler: () => void): () => void;
}
