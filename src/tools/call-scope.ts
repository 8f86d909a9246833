/**
 * The one way to reach another call's Durable Object by its id (decision 251): `jobs`,
 * `job_output`, `kill` and `write_stdin` from a call, the Worker's invocation routes and
 * `/mcp` for a sandbox token's holder. A caller is confined to one sandbox; a call of
 * another sandbox answers `not_found`, word for word as a call that never existed, so
 * ids handed out in one sandbox open nothing in another.
 */
import {
  type InvocationApi,
  type InvocationView,
  NO_INVOCATION,
  type Outcome,
} from "../protocol/index.ts";

/** An invocation's DO as a confined caller reaches it: everything but `start`. */
export type ScopedCall = Omit<InvocationApi, "start">;

/**
 * Whether a caller confined to `sandbox` (null: the operator, unconfined) may reach a
 * call that runs in `view.sandbox`.
 * @example inScope({ sandbox: "sbx_default_…" }, "default") // false
 */
function inScope(view: Pick<InvocationView, "sandbox">, sandbox: string | null): boolean {
  return sandbox === null || view.sandbox === sandbox;
}

/** The answer for a call out of scope: the DO's own for an id it does not hold. */
function notFound<T>(): Outcome<T> {
  return { ok: false, error: NO_INVOCATION };
}

/**
 * Invocation `id` as a caller confined to `sandbox` (null: unconfined) reaches it. The
 * first method called reads the call's sandbox once; out of scope, every method answers
 * `not_found` and the DO is asked nothing else.
 * @example const job = scopedCall(env, params.id, context.sandbox); await job.cancel()
 */
export function scopedCall(env: Env, id: string, sandbox: string | null): ScopedCall {
  const stub = env.INVOCATIONS.getByName(id) as unknown as InvocationApi;
  if (sandbox === null) return stub;
  let allowed: Promise<boolean> | undefined;
  const check = () => {
    allowed ??= stub.view().then((view) => !view.ok || inScope(view.value, sandbox));
    return allowed;
  };
  const guard =
    <A extends unknown[], T>(call: (...args: A) => Promise<Outcome<T>>) =>
    async (...args: A): Promise<Outcome<T>> =>
      (await check()) ? call(...args) : notFound();
  return {
    view: guard(() => stub.view()),
    progress: guard((waitMs) => stub.progress(waitMs)),
    result: guard((waitMs) => stub.result(waitMs)),
    cancel: guard(() => stub.cancel()),
    produce: guard((calls, end, seq) => stub.produce(calls, end, seq)),
    readCursor: guard((reader) => stub.readCursor(reader)),
    commitRead: guard((reader, range) => stub.commitRead(reader, range)),
    noteInput: guard((input) => stub.noteInput(input)),
    noteSize: guard((size) => stub.noteSize(size)),
    typedSince: guard((reader) => stub.typedSince(reader)),
  };
}
