// The pi extension describes bash's steering arguments and the job tools to the model
// with the bounds Toolwire checks (src/protocol's caps): pi's own validator accepts each
// argument at its cap and refuses it just over, so a model's mistake is refused before
// the call is made. That these schemas equal what Toolwire serves is checked against a
// running Toolwire in test/e2e/pi-jobs.test.ts.
import { validateToolArguments } from "@mariozechner/pi-ai";
import { createBashToolDefinition } from "@mariozechner/pi-coding-agent";
import { describe, expect, it } from "vitest";
import {
  bashParameters,
  type JsonSchemaObject,
  STEERING_TOOLS,
} from "../../../src/pi/steering-tools.ts";
import {
  MAX_BASH_TIMEOUT_SECONDS,
  MAX_JOB_WAIT_SECONDS,
  MAX_STDIN_KEYS,
  MAX_STDIN_WAIT_SECONDS,
  MAX_WINDOW_BYTES,
  MAX_WINDOW_LINES,
  TTY_MAX_SIZE,
  TTY_MIN_SIZE,
} from "../../../src/protocol/index.ts";

const piBash = bashParameters(
  createBashToolDefinition(process.cwd()).parameters as unknown as JsonSchemaObject,
);
type Name = "bash" | "jobs" | "job_output" | "kill" | "write_stdin";
const piSchemas: Record<Name, JsonSchemaObject> = {
  bash: piBash,
  ...(Object.fromEntries(STEERING_TOOLS.map((t) => [t.name, t.parameters])) as Record<
    "jobs" | "job_output" | "kill" | "write_stdin",
    JsonSchemaObject
  >),
};

function piAccepts(name: Name, args: Record<string, unknown>): boolean {
  try {
    validateToolArguments(
      { name, description: "", parameters: piSchemas[name] } as never,
      { type: "toolCall", id: "t", name, arguments: args } as never,
    );
    return true;
  } catch {
    return false;
  }
}

describe("the pi extension's steering schemas", () => {
  it("keep pi's own words for command and timeout", () => {
    const own = createBashToolDefinition(process.cwd()).parameters as unknown as JsonSchemaObject;
    expect(piBash.properties.command?.description).toBe(own.properties.command?.description);
    expect(piBash.properties.timeout?.description).toBe(own.properties.timeout?.description);
  });

  const cases: [Name, string, Record<string, unknown>, boolean][] = [];
  for (const field of ["head", "tail"]) {
    cases.push(
      ["bash", `${field} 0`, { command: "x", [field]: 0 }, false],
      ["bash", `${field} 1`, { command: "x", [field]: 1 }, true],
      ["bash", `${field} at the cap`, { command: "x", [field]: MAX_WINDOW_LINES }, true],
      ["bash", `${field} over`, { command: "x", [field]: MAX_WINDOW_LINES + 1 }, false],
      ["bash", `${field} not whole`, { command: "x", [field]: 2.5 }, false],
    );
  }
  cases.push(
    ["bash", "maxBytes under", { command: "x", maxBytes: MAX_WINDOW_BYTES - 1 }, true],
    ["bash", "maxBytes at the cap", { command: "x", maxBytes: MAX_WINDOW_BYTES }, true],
    ["bash", "maxBytes over", { command: "x", maxBytes: MAX_WINDOW_BYTES + 1 }, false],
    ["bash", "timeout at the cap", { command: "x", timeout: MAX_BASH_TIMEOUT_SECONDS }, true],
    ["bash", "timeout over", { command: "x", timeout: MAX_BASH_TIMEOUT_SECONDS + 1 }, false],
    ["bash", "timeout 0", { command: "x", timeout: 0 }, false],
    ["bash", "idleTimeout under", { command: "x", idleTimeout: 0.5 }, true],
    [
      "bash",
      "idleTimeout over",
      { command: "x", idleTimeout: MAX_BASH_TIMEOUT_SECONDS + 1 },
      false,
    ],
    ["bash", "background", { command: "x", background: true }, true],
    ["bash", "an unknown argument", { command: "x", lines: 5 }, false],
    ["bash", "an empty command", { command: "" }, false],
    ["job_output", "wait at the cap", { id: "call_1", wait: MAX_JOB_WAIT_SECONDS }, true],
    ["job_output", "wait under", { id: "call_1", wait: MAX_JOB_WAIT_SECONDS - 0.5 }, true],
    ["job_output", "wait over", { id: "call_1", wait: MAX_JOB_WAIT_SECONDS + 0.5 }, false],
    ["job_output", "no id", {}, false],
    ["job_output", "an id with a slash", { id: "a/b" }, false],
    ["kill", "an id of 128 characters", { id: "a".repeat(128) }, true],
    ["kill", "an id of 129 characters", { id: "a".repeat(129) }, false],
    ["jobs", "no arguments", {}, true],
    ["jobs", "an argument", { all: true }, false],
    ["bash", "tty at the smallest size", { command: "x", tty: true, ...TTY_MIN_SIZE }, true],
    ["bash", "tty at the largest size", { command: "x", tty: true, ...TTY_MAX_SIZE }, true],
    ["bash", "tty a column under", { command: "x", tty: true, cols: TTY_MIN_SIZE.cols - 1 }, false],
    ["bash", "tty a row over", { command: "x", tty: true, rows: TTY_MAX_SIZE.rows + 1 }, false],
    ["write_stdin", "text", { id: "call_1", text: "y\n" }, true],
    ["write_stdin", "named keys", { id: "call_1", keys: ["Up", "Enter", "C-c"] }, true],
    ["write_stdin", "an unknown key", { id: "call_1", keys: ["Hyper"] }, false],
    [
      "write_stdin",
      "keys at the cap",
      { id: "call_1", keys: Array(MAX_STDIN_KEYS).fill("Enter") },
      true,
    ],
    [
      "write_stdin",
      "keys over",
      { id: "call_1", keys: Array(MAX_STDIN_KEYS + 1).fill("Enter") },
      false,
    ],
    [
      "write_stdin",
      "wait at the cap",
      { id: "call_1", eof: true, wait: MAX_STDIN_WAIT_SECONDS },
      true,
    ],
    [
      "write_stdin",
      "wait over",
      { id: "call_1", eof: true, wait: MAX_STDIN_WAIT_SECONDS + 1 },
      false,
    ],
  );
  it.each(cases)(
    "%s, %s: pi's validator accepts it or refuses it as Toolwire does",
    (name, _what, args, accepted) => {
      expect(piAccepts(name, args)).toBe(accepted);
    },
  );
});
