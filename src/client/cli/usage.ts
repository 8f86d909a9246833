/**
 * The CLI's command names and the error of a command line it cannot take: what every
 * part of the CLI that reads arguments shares, so none of them imports another's parser.
 */

export type CommandName =
  | "run"
  | "watch"
  | "attach"
  | "link"
  | "output"
  | "result"
  | "tools"
  | "sandbox";
export const COMMANDS: readonly CommandName[] = [
  "run",
  "watch",
  "attach",
  "link",
  "output",
  "result",
  "tools",
  "sandbox",
];

/** A mistake in the command line: exit code 2, with the message and a pointer to help. */
export class UsageError extends Error {
  readonly topic: CommandName | undefined;
  constructor(message: string, topic?: CommandName) {
    super(message);
    this.name = "UsageError";
    this.topic = topic;
  }
}
