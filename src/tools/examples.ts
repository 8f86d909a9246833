/**
 * Example tools: small, real tools that show what the sink and the Durable Object do
 * (streaming over time, failure, memos and replay, details and usage). They are
 * registered with the built-ins and callable through `POST /v1/invocations`.
 *
 * - `emit`: writes numbered lines over time; not replay-safe (after a crash it
 *   settles with what it had written plus an interruption notice).
 * - `steps`: runs numbered steps and memoises each; replay-safe (after a crash it
 *   re-executes on its checkpointed output and skips the steps already done).
 * - `report`: fills `details`, usage, added tools, the terminate flag and an image.
 */
import { z } from "zod";
import type { JsonObject } from "../core/chord/types.ts";
import { defineTool } from "./registry.ts";

/** A pause in milliseconds, 0 to 60 s (default 0). */
function pauseMs() {
  return z.number().int().min(0).max(60_000).default(0);
}

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * `emit { lines, intervalMs?, text?, fail? }`: writes `lines` lines, `intervalMs` apart,
 * each `"<n> <text>"`; counts them in `details.emitted`. With `fail` it throws after
 * the last line, so the error text is appended to the output.
 *
 * @example POST /v1/invocations { "tool": "emit", "args": { "lines": 20, "intervalMs": 250 } }
 */
const emitTool = defineTool({
  name: "emit",
  description:
    "Writes numbered lines over time (a stand-in for a long-running command). Not replay-safe: interrupted runs settle with their partial output and a notice.",
  params: z.strictObject({
    lines: z.number().int().min(1).max(1_000_000).describe("How many lines to write"),
    intervalMs: pauseMs().describe("Pause between lines, in milliseconds"),
    text: z.string().max(4096).default("line").describe("Text written after each line number"),
    fail: z.boolean().default(false).describe("Throw an error after the last line"),
  }),
  replaySafe: false,
  async execute({ params, out, signal }) {
    const details = out.details as JsonObject;
    details.emitted = 0;
    for (let n = 1; n <= params.lines; n++) {
      out.write(`${n} ${params.text}\n`);
      details.emitted = n;
      if (params.intervalMs > 0 && n < params.lines) await sleep(params.intervalMs, signal);
      else if (signal.aborted) throw signal.reason;
    }
    if (params.fail) throw new Error(`emit failed on purpose after ${params.lines} lines`);
  },
});

/**
 * `steps { steps, intervalMs?, text? }`: runs step 1..steps; each writes one line and
 * records `memo "step:<n>"`. After a crash the Durable Object replays it on the output
 * checkpointed with the last memo, and the done steps are skipped, so each step's line
 * appears exactly once.
 *
 * @example POST /v1/invocations { "tool": "steps", "args": { "steps": 5, "intervalMs": 1000 } }
 */
const stepsTool = defineTool({
  name: "steps",
  description:
    "Runs numbered steps, memoising each one. Replay-safe: after a crash it resumes after the last finished step without repeating its output.",
  params: z.strictObject({
    steps: z.number().int().min(1).max(10_000).describe("How many steps to run"),
    intervalMs: pauseMs().describe("Time each step takes, in milliseconds"),
    text: z.string().max(4096).default("done").describe("Text written after each step number"),
  }),
  replaySafe: true,
  async execute({ params, out, signal, context }) {
    const details = out.details as JsonObject;
    for (let n = 1; n <= params.steps; n++) {
      if (context.getMemo(`step:${n}`) !== undefined) continue;
      if (params.intervalMs > 0) await sleep(params.intervalMs, signal);
      else if (signal.aborted) throw signal.reason;
      out.write(`step ${n} ${params.text}\n`);
      details.completed = n;
      context.setMemo(`step:${n}`, true);
    }
  },
});

/**
 * `report { items, usage?, addTools?, terminate?, imageBase64? }`: the non-text parts
 * of a result. Puts `items` under `details.items` with a running `details.count`,
 * adds `usage` once per item, then sets the added tools, the terminate flag and
 * (optionally) a PNG image.
 *
 * @example POST /v1/invocations { "tool": "report", "args": { "items": ["a", "b"], "usage": { "input": 10 } } }
 */
const reportTool = defineTool({
  name: "report",
  description:
    "Writes a structured report: details (items and a count), usage accumulated per item, added tools, the terminate flag and an optional image.",
  params: z.strictObject({
    items: z.array(z.string().max(1024)).max(1000).describe("Items listed in details.items"),
    usage: z
      .record(z.string(), z.number().nonnegative())
      .optional()
      .describe("Usage added once per item (e.g. { input: 10, cost: 0.01 })"),
    addTools: z.array(z.string().max(64)).max(64).optional().describe("Tool names this call adds"),
    terminate: z.boolean().default(false).describe("Ask the agent loop to stop after this call"),
    imageBase64: z
      .string()
      .max(1024 * 1024)
      .optional()
      .describe("A PNG image, base64"),
  }),
  replaySafe: true,
  async execute({ params, out }) {
    const details = out.details as JsonObject;
    details.items = [];
    details.count = 0;
    for (const item of params.items) {
      (details.items as string[]).push(item);
      details.count = (details.count as number) + 1;
      out.write(`- ${item}\n`);
      if (params.usage) out.usage(params.usage);
    }
    if (params.addTools) out.addTools(params.addTools);
    out.terminate(params.terminate);
    if (params.imageBase64) out.image({ data: params.imageBase64, mimeType: "image/png" });
  },
});

/** Every example tool, for the registry. */
export const exampleTools = [emitTool, stepsTool, reportTool] as const;
