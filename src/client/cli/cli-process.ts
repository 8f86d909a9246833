import type { Terminal } from "./live-printer.ts";

/** What the CLI needs from its process: output streams, environment, Ctrl-C. */
export interface CliProcess extends Terminal {
  env: Record<string, string | undefined>;
  /** Registers a Ctrl-C handler; returns a function that removes it. */
  onInterrupt(handler: () => void): () => void;
  version: string;
}
