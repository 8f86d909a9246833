/**
 * A running exec's input: `POST /:execId/input` (bytes for its terminal or stdin pipe,
 * answered when the output settles), `GET /:execId/terminal` (its screen and whether it
 * waits for input), `GET /:execId/paint` (the bytes that draw its screen again),
 * `POST /:execId/resize` (its terminal's size). Mounted at `/v1/exec`.
 */
import { Hono } from "hono";
import type { InputState } from "../../src/protocol/index.ts";
import { MAX_STDIN_BYTES } from "../../src/protocol/index.ts";
import { SandboxError } from "../errors.ts";
import { inputRequestSchema, parseBody, terminalSizeSchema } from "../requests.ts";
import { type ExecRegistry, findRun } from "./exec-registry.ts";
import type { ExecRun } from "./exec-run.ts";

/** Output quiet this long after an input, with nobody reading, is settled: the answer comes. */
const SETTLE_QUIET_MS = 500;
/** Output quiet this long is enough when the command is seen waiting for input. */
const PROMPT_QUIET_MS = 50;
const SAMPLE_MS = 25;

/**
 * Waits until the command waits for input (after a short quiet), is quiet for
 * `SETTLE_QUIET_MS`, exits, or `waitMs` passes; then answers where its input stands.
 * With `typedAt` (the bytes printed before keys were typed into a terminal), a wait for
 * input counts only once something more was printed: the terminal hands typed keys to
 * the command later, from a kernel worker, and until then the command still shows as
 * reading (on a loaded host, past the short quiet). Keys typed at a prompt that does not
 * echo them are answered after `SETTLE_QUIET_MS`.
 */
async function settledState(
  run: ExecRun,
  waitMs: number,
  typedAt: number | null,
): Promise<InputState> {
  const deadline = Date.now() + waitMs;
  let bytes = run.bytesPrinted;
  let quietSince = Date.now();
  while (Date.now() < deadline && !run.exit) {
    await new Promise((resolve) => setTimeout(resolve, SAMPLE_MS));
    const now = Date.now();
    if (run.bytesPrinted !== bytes) {
      bytes = run.bytesPrinted;
      quietSince = now;
      continue;
    }
    if (now - quietSince >= SETTLE_QUIET_MS) break;
    if (now - quietSince >= PROMPT_QUIET_MS && (typedAt === null || bytes !== typedAt)) {
      const state = await run.inputState();
      if (state.awaitingInput || state.exited) return state;
    }
  }
  return run.inputState();
}

/** @example app.route("/v1/exec", inputRoutes(registry)); */
export function inputRoutes(registry: ExecRegistry): Hono {
  const routes = new Hono();

  routes.post("/:execId/input", async (c) => {
    const run = findRun(registry, c.req.param("execId"));
    const req = await parseBody(c, inputRequestSchema);
    const data = req.data ?? "";
    const bytes = Buffer.byteLength(data);
    if (bytes > MAX_STDIN_BYTES) {
      throw new SandboxError(
        "bad_request",
        `input is ${bytes.toLocaleString("en-US")} bytes; one write may have at most ${MAX_STDIN_BYTES.toLocaleString("en-US")} bytes`,
      );
    }
    if (!run.inputOpen) {
      const why = run.exit ? "it has ended" : "its input was closed (eof), or it has no stdin";
      throw new SandboxError("conflict", `exec '${run.execId}' takes no input: ${why}`);
    }
    const typedAt = data !== "" && run.onTerminal ? run.bytesPrinted : null;
    run.input(data, req.eof === true);
    return c.json(await settledState(run, req.waitMs ?? 0, typedAt));
  });

  routes.get("/:execId/terminal", async (c) =>
    c.json(await findRun(registry, c.req.param("execId")).inputState()),
  );

  routes.get("/:execId/paint", async (c) => {
    const run = findRun(registry, c.req.param("execId"));
    const paint = await run.paint();
    if (!paint) {
      const why = run.exit ? "it has ended" : "it runs without a terminal";
      throw new SandboxError("conflict", `exec '${run.execId}' has no screen to paint: ${why}`);
    }
    return c.json(paint);
  });

  routes.post("/:execId/resize", async (c) => {
    const run = findRun(registry, c.req.param("execId"));
    const size = await parseBody(c, terminalSizeSchema);
    run.resize(size);
    return c.json(await run.inputState());
  });

  return routes;
}
