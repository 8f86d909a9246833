/**
 * What the pi extension adds to pi's own tools so the model can steer its output
 * (docs/steering.md): bash's window (`head`, `tail`, `maxBytes`), `idleTimeout`, `cwd`
 * `background` and `tty` (with `cols`, `rows`), and the tools that look after background
 * calls (`jobs`, `job_output`, `kill`, `write_stdin`). The schemas are plain JSON Schema (pi validates those as they
 * are); their caps come from src/protocol, where the server's checks read them, and
 * test/node/pi/steering-tools.test.ts holds them equal to what Toolwire serves.
 */
import {
  INVOCATION_ID_PATTERN,
  JOB_OUTPUT_BYTES,
  JOB_OUTPUT_LINES,
  MAX_BASH_TIMEOUT_SECONDS,
  MAX_JOB_WAIT_SECONDS,
  MAX_STDIN_KEYS,
  MAX_STDIN_WAIT_SECONDS,
  MAX_WINDOW_BYTES,
  MAX_WINDOW_LINES,
  OUTPUT_BYTES,
  OUTPUT_LINES,
  STDIN_KEY_NAMES,
  TTY_DEFAULT_SIZE,
  TTY_MAX_SIZE,
  TTY_MIN_SIZE,
} from "../protocol/index.ts";

/** A JSON Schema object, as pi's `registerTool` takes one. */
export interface JsonSchemaObject {
  type: "object";
  properties: Record<string, Record<string, unknown>>;
  required?: string[];
  additionalProperties?: boolean;
}

const seconds = (description: string) => ({
  type: "number",
  exclusiveMinimum: 0,
  maximum: MAX_BASH_TIMEOUT_SECONDS,
  description,
});

const lines = (description: string) => ({
  type: "integer",
  minimum: 1,
  maximum: MAX_WINDOW_LINES,
  description,
});

/** bash's arguments beyond pi's `command` and `timeout`. */
const BASH_STEERING: JsonSchemaObject["properties"] = {
  idleTimeout: seconds(
    "Seconds without output before the command is stopped (a command that keeps printing runs on); timeout stays the hard limit. Output is kept either way",
  ),
  cwd: {
    type: "string",
    maxLength: 4096,
    description:
      "Working directory, relative to the sandbox workspace root (/workspace) or under it",
  },
  background: {
    type: "boolean",
    description:
      "Answer after the first second with the job id and what it printed; the command runs on in Toolwire (it survives pi leaving). Read on with job_output, stop with kill, list with jobs",
  },
  tty: {
    type: "boolean",
    description:
      "Run under a terminal (isatty, TERM set, Ctrl-C works) for prompts (npm init, 'Proceed? [y/N]'), REPLs and full-screen programs (less, vim, top). Runs in the background: answers with the job id, what the terminal shows and whether it waits for input; type into it with write_stdin",
  },
  cols: {
    type: "integer",
    minimum: TTY_MIN_SIZE.cols,
    maximum: TTY_MAX_SIZE.cols,
    description: `Terminal width of a tty call (${TTY_MIN_SIZE.cols}-${TTY_MAX_SIZE.cols}, default ${TTY_DEFAULT_SIZE.cols})`,
  },
  rows: {
    type: "integer",
    minimum: TTY_MIN_SIZE.rows,
    maximum: TTY_MAX_SIZE.rows,
    description: `Terminal height of a tty call (${TTY_MIN_SIZE.rows}-${TTY_MAX_SIZE.rows}, default ${TTY_DEFAULT_SIZE.rows})`,
  },
  head: lines(
    `Show the first N lines (1-${MAX_WINDOW_LINES}); with tail, the first N and the last M, the middle named in the footer`,
  ),
  tail: lines(
    `Show the last N lines (1-${MAX_WINDOW_LINES}; default ${OUTPUT_LINES} when head is not given)`,
  ),
  maxBytes: {
    type: "integer",
    minimum: 1,
    maximum: MAX_WINDOW_BYTES,
    description: `Byte budget of the shown output (1-${MAX_WINDOW_BYTES}; default ${OUTPUT_BYTES}); head and tail share it`,
  },
};

/**
 * pi's bash schema with Toolwire's steering arguments and the server's bound on
 * `timeout`; pi's own descriptions of `command` and `timeout` stay.
 * @example bashParameters(createBashToolDefinition(cwd).parameters)
 */
export function bashParameters(piBash: JsonSchemaObject): JsonSchemaObject {
  return {
    type: "object",
    properties: {
      ...piBash.properties,
      command: { ...piBash.properties.command, type: "string", minLength: 1 },
      timeout: {
        ...piBash.properties.timeout,
        type: "number",
        exclusiveMinimum: 0,
        maximum: MAX_BASH_TIMEOUT_SECONDS,
      },
      ...BASH_STEERING,
    },
    required: piBash.required ?? ["command"],
    additionalProperties: false,
  };
}

const jobId = {
  type: "string",
  pattern: INVOCATION_ID_PATTERN.source,
  description: "The job id bash { background: true } answered with",
};

/** One tool the extension registers besides pi's own: its name, label, words and schema. */
interface SteeringTool {
  name: "jobs" | "job_output" | "kill" | "write_stdin";
  label: string;
  description: string;
  parameters: JsonSchemaObject;
}

export const STEERING_TOOLS: readonly SteeringTool[] = [
  {
    name: "jobs",
    label: "jobs",
    description:
      "Lists this session's running and recent background bash calls in the Toolwire sandbox (newest first, at most 50): id, status, lines so far, the command.",
    parameters: { type: "object", properties: {}, additionalProperties: false },
  },
  {
    name: "job_output",
    label: "job_output",
    description: `Reads a background bash call: where it stands (running, or how it ended) and its output lines no earlier job_output returned, each line exactly once, at most ${JOB_OUTPUT_LINES} lines or ${JOB_OUTPUT_BYTES / 1024} KB a call. With wait (up to ${MAX_JOB_WAIT_SECONDS} s), waits for new lines or the end.`,
    parameters: {
      type: "object",
      properties: {
        id: jobId,
        wait: {
          type: "number",
          minimum: 0,
          maximum: MAX_JOB_WAIT_SECONDS,
          description: `Seconds to wait for new output or the end when there is none yet (0-${MAX_JOB_WAIT_SECONDS}, default 0)`,
        },
      },
      required: ["id"],
      additionalProperties: false,
    },
  },
  {
    name: "kill",
    label: "kill",
    description:
      "Stops a running Toolwire call (a background bash call, or any other) and answers with its output, which is kept. A call that has already ended is left as it is.",
    parameters: {
      type: "object",
      properties: { id: { ...jobId, description: "The id of the call to stop" } },
      required: ["id"],
      additionalProperties: false,
    },
  },
  {
    name: "write_stdin",
    label: "write_stdin",
    description:
      'Types into a background bash call in the Toolwire sandbox: its terminal (tty: true) or its stdin (background: true). Answers when the output settles (the command waits for input again, is quiet for half a second, or ends) with the lines since your last read, the screen of a full-screen program, and whether it now waits for input ("[waiting for input: …]").',
    parameters: {
      type: "object",
      properties: {
        id: jobId,
        text: {
          type: "string",
          description: 'Text to type, as is: "\\n" is Enter, "\\u0003" Ctrl-C, "\\u0004" Ctrl-D',
        },
        keys: {
          type: "array",
          items: { type: "string", enum: [...STDIN_KEY_NAMES] },
          maxItems: MAX_STDIN_KEYS,
          description: "Named keys pressed after the text, in order (Enter, Up, Escape, C-c, …)",
        },
        eof: { type: "boolean", description: "Close the input after the text" },
        wait: {
          type: "number",
          minimum: 0,
          maximum: MAX_STDIN_WAIT_SECONDS,
          description: `Most seconds to wait for the output to settle (0-${MAX_STDIN_WAIT_SECONDS}, default 10)`,
        },
      },
      required: ["id"],
      additionalProperties: false,
    },
  },
];
