/**
 * A tty call's terminal for people (decision 191), under `/v1/invocations/:id`
 * (invocation-routes.ts mounts them behind its id and scope checks):
 *
 * - `POST /attach` (a bearer token: the operator's, or the call's own sandbox's) mints
 *   an attach token, the write capability, and the viewer link that carries it;
 * - `GET /terminal` (any reader) answers the bytes that draw the screen now and the
 *   output byte they show, so a late viewer shows the model's screen at once;
 * - `POST /terminal/input` and `POST /terminal/resize` (the attach token alone) type
 *   into the same terminal `write_stdin` does, and resize it or give it back its size.
 */
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { z } from "zod";
import { SandboxHttpError } from "../execenv/index.ts";
import {
  attachFragment,
  bearerToken,
  DEFAULT_TYPIST,
  type InvocationView,
  MAX_STDIN_BYTES,
  MODEL_TYPIST,
  TTY_DEFAULT_SIZE,
  TTY_MAX_SIZE,
  TTY_MIN_SIZE,
  TYPIST_NAME_PATTERN,
} from "../protocol/index.ts";
import {
  ownTerminalSize,
  paintOf,
  resizeTerminal,
  terminalRefusal,
  typeInto,
} from "../tools/index.ts";
import { mintAttachToken, verifyAttachToken } from "./attach-token.ts";
import { authorizeAgent, subscribeSecret } from "./auth.ts";
import { readJsonBody } from "./body.ts";
import { raise } from "./errors.ts";
import type { Routes } from "./invocation-context.ts";
import { invocationLinks } from "./invocation-links.ts";
import { invocationStub, unwrap } from "./invocation-stub.ts";
import { runLinks } from "./run-routes.ts";
import { parseWith } from "./schemas.ts";

const utf8 = new TextEncoder();

const attachBody = z.strictObject({
  name: z
    .string()
    .regex(
      TYPIST_NAME_PATTERN,
      "must be 1-64 characters of letters, digits, space and . _ @ -, starting with a letter or digit",
    )
    .refine((name) => name !== MODEL_TYPIST, `"${MODEL_TYPIST}" names the model's own input`)
    .optional(),
});

const inputBody = z.strictObject({
  data: z
    .string()
    .min(1, "give the keys to type")
    .refine((data) => utf8.encode(data).length <= MAX_STDIN_BYTES, {
      message: `may have at most ${MAX_STDIN_BYTES.toLocaleString("en-US")} bytes (UTF-8); send more in several inputs`,
    }),
});

const size = (min: number, max: number) => z.number().int().min(min).max(max);
const resizeBody = z.union([
  z.strictObject({
    cols: size(TTY_MIN_SIZE.cols, TTY_MAX_SIZE.cols),
    rows: size(TTY_MIN_SIZE.rows, TTY_MAX_SIZE.rows),
  }),
  z.strictObject({ restore: z.literal(true) }),
]);

/** The call, refused with 409 unless it is a running tty call. */
async function runningTerminal(c: Context<Routes>): Promise<InvocationView> {
  const id = c.get("id");
  const view = { ...unwrap(await invocationStub(c.env, id).view()), id };
  const refusal = terminalRefusal(view);
  if (refusal !== null) raise("conflict", refusal);
  return view;
}

/** A host's refusal as the API says it: a terminal that ended is a 409, the rest a 502. */
async function onHost<T>(view: InvocationView, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof SandboxHttpError && (err.status === 404 || err.status === 409)) {
      raise("conflict", `${view.id} has ended; its output is all there is`);
    }
    if (err instanceof SandboxHttpError && err.status === 400) raise("bad_request", err.reason);
    raise(
      "sandbox_unreachable",
      `the sandbox host did not answer for ${view.id}'s terminal; try again`,
    );
  }
}

/**
 * The attach token of this call, and nothing else, in `Authorization: Bearer`: no
 * credential or one that does not verify is 401; any other good credential (the API
 * token, a sandbox token, a read-only subscribe token) is 403, pointing at `/attach`.
 */
export const typist = createMiddleware<Routes>(async (c, next) => {
  const header = c.req.header("Authorization");
  const token = header === undefined ? null : bearerToken(header);
  const howTo = `POST /v1/invocations/${c.get("id")}/attach mints one (toolwire attach does)`;
  if (token === null) {
    raise(
      "unauthorized",
      `typing needs the call's attach token in Authorization: Bearer; ${howTo}`,
    );
  }
  const check = await verifyAttachToken(subscribeSecret(c.env), token, c.get("id"), Date.now());
  if (check.ok) {
    c.set("typist", check.name);
    c.set("typistUntil", check.expiresAt * 1000);
    return next();
  }
  if (check.reason === "other_subject") {
    raise(
      "forbidden",
      `this token cannot type into ${c.get("id")}: it is read-only, or another call's; ${howTo}`,
    );
  }
  if (check.reason === "malformed" && !token.startsWith("v1.")) {
    // The API token or a sandbox token is a good credential, only not this one: 403.
    // Anything else is no credential: authorizeAgent answers its 401.
    await authorizeAgent(c.req.raw, c.env);
    raise(
      "forbidden",
      `typing into a terminal takes its attach token, not a bearer token; ${howTo}`,
    );
  }
  raise(
    "unauthorized",
    `the attach token is ${check.reason === "expired" ? "expired" : "not valid"}; ${howTo}`,
  );
});

/** `POST /:id/attach` (after a bearer check and the scope check): a fresh attach token and link. */
export async function attachRoute(c: Context<Routes>) {
  const body = parseWith(attachBody, await readJsonBody(c.req.raw), "body");
  const view = await runningTerminal(c);
  const name = body.name ?? DEFAULT_TYPIST;
  const attachToken = await mintAttachToken(subscribeSecret(c.env), view.id, name, Date.now());
  const links = await invocationLinks(c.req.raw, c.env, view.id);
  // A call of a run is taken over from its run page too, the fragment naming the call.
  const run =
    view.runId === view.id ? null : (await runLinks(c.req.raw, c.env, view.runId)).runViewUrl;
  return c.json({
    id: view.id,
    name,
    attachToken,
    // In the fragment: never sent to a server, never in a Referer.
    attachUrl: `${links.viewUrl}#${attachFragment(attachToken)}`,
    ...(run ? { runAttachUrl: `${run}#${attachFragment(attachToken, view.id)}` } : {}),
    ...links,
  });
}

/** `GET /:id/terminal` (after a reader's check): the bytes that draw the screen now. */
export async function paintRoute(c: Context<Routes>) {
  const view = await runningTerminal(c);
  return c.json(await onHost(view, () => paintOf(c.env, view)));
}

/** `POST /:id/terminal/input` (after `typist`): a person's keys into the terminal. */
export async function inputRoute(c: Context<Routes>) {
  const { data } = parseWith(inputBody, await readJsonBody(c.req.raw), "body");
  const view = await runningTerminal(c);
  const input = { by: c.get("typist"), at: Date.now(), bytes: utf8.encode(data).length };
  // The keys go to the host; who typed them is noted beside, at the same time.
  await Promise.all([
    onHost(view, () => typeInto(c.env, view, data)),
    invocationStub(c.env, view.id).noteInput(input),
  ]);
  return c.json({ id: view.id, by: input.by, bytes: input.bytes });
}

/**
 * `POST /:id/terminal/resize` (after `typist`): a person's size, or back to the call's own
 * (decision 193). The held size is named in the call's details before the terminal
 * changes, so every page takes the size before the program redraws at it. The answer
 * says until when the token may resize (`expiresAt`, epoch ms): a page gives the size
 * back before then.
 */
export async function resizeRoute(c: Context<Routes>) {
  const body = parseWith(resizeBody, await readJsonBody(c.req.raw), "body");
  const view = await runningTerminal(c);
  const restore = "restore" in body;
  const wanted = restore ? ownTerminalSize(view, TTY_DEFAULT_SIZE) : body;
  const held = restore ? null : { ...wanted, by: c.get("typist") };
  unwrap(await invocationStub(c.env, view.id).noteSize(held));
  await onHost(view, () => resizeTerminal(c.env, view, wanted));
  return c.json({ id: view.id, ...wanted, expiresAt: c.get("typistUntil") });
}
