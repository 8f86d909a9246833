/**
 * A bash call's complete output as a Durable Stream's source (decision 200): the spill
 * file's bytes on its sandbox host, read by `Range` as they grow; once the call settled
 * and the host removed the file (the output fit its window as UTF-8), the same bytes are
 * the start of the settled text, `totalBytes` long. Offsets are byte positions.
 */
import { execIdFor, fetchIdempotent, resolveSandbox } from "../execenv/index.ts";
import type { StreamSlice, StreamSource } from "../protocol/durable-streams/index.ts";
import type { InvocationView } from "../protocol/index.ts";
import { raise } from "./errors.ts";
import { invocationStub, unwrap } from "./invocation-stub.ts";

/** How often a reader waiting on a running command looks at the file again. */
const GROWTH_POLL_MS = 200;

/** The type the output is served as. */
const OUTPUT_TYPE = "text/plain; charset=utf-8";

/**
 * The command's bytes kept in a settled view whose spill was removed: its text up to
 * `totalBytes` (what follows is the footer).
 * @example keptBytes(view) // Uint8Array of the command's output
 */
export function keptBytes(view: InvocationView): Uint8Array<ArrayBuffer> {
  const first = view.state.content[0];
  const text = first?.type === "text" ? first.text : "";
  return new TextEncoder().encode(text).slice(0, view.state.truncation.totalBytes);
}

/** `bytes a-b/size` or `bytes *\/size` → size. */
function sizeOf(contentRange: string | null): number | null {
  const match = /\/(\d+)$/.exec(contentRange ?? "");
  return match ? Number(match[1]) : null;
}

/**
 * The source of bash call `id`, whose view is `first`.
 * @example return answerRead(request, await spillSource(env, id, view, signal))
 */
export async function spillSource(
  env: Env,
  id: string,
  first: InvocationView,
  signal: AbortSignal,
): Promise<StreamSource> {
  const target = unwrap(resolveSandbox(env, first.sandbox));
  const execId = await execIdFor(id);
  const url = `${target.url}/v1/exec/${encodeURIComponent(execId)}/spill`;
  const stub = invocationStub(env, id);
  const view = async () => unwrap(await stub.view());

  const fromText = (v: InvocationView, from: number, maxBytes: number): StreamSlice => {
    const bytes = keptBytes(v);
    const end = Math.min(bytes.byteLength, from + maxBytes);
    return {
      parts: end > from ? [bytes.subarray(from, end)] : [],
      next: Math.max(from, end),
      tail: bytes.byteLength,
      closed: true,
    };
  };

  const read = async (from: number, maxBytes: number, whole = false): Promise<StreamSlice> => {
    // Read the status first: a settled call's file is final when it is read after.
    const current = await view();
    const settled = current.status === "settled";
    if (settled && current.state.truncation.spillPath === undefined) {
      return fromText(current, from, maxBytes);
    }
    const last = whole ? "" : String(from + Math.max(maxBytes, 1) - 1);
    const headers = new Headers({ Range: `bytes=${from}-${last}` });
    if (target.token !== "") headers.set("Authorization", `Bearer ${target.token}`);
    const host = await fetchIdempotent(target.fetch, url, { headers, signal });
    if (host.status === 404) {
      await host.body?.cancel();
      // Removed at the exit because it fit: the settled text holds the same bytes.
      const again = await view();
      if (again.status === "settled") return fromText(again, from, maxBytes);
      return { parts: [], next: from, tail: from, closed: false };
    }
    if (host.status === 416) {
      await host.body?.cancel();
      const size = sizeOf(host.headers.get("content-range")) ?? from;
      return { parts: [], next: from, tail: size, closed: settled };
    }
    if (host.status !== 206 && host.status !== 200) {
      await host.body?.cancel();
      raise(
        "sandbox_unreachable",
        `sandbox "${current.sandbox}" refused the output of ${id} (${host.status})`,
      );
    }
    const size =
      sizeOf(host.headers.get("content-range")) ??
      Number(host.headers.get("content-length") ?? from);
    if (maxBytes === 0) {
      await host.body?.cancel();
      return { parts: [], next: from, tail: size, closed: settled };
    }
    const length = Number(host.headers.get("content-length") ?? "0");
    const next = from + length;
    if (whole && host.body) return { parts: host.body, next, tail: size, closed: settled };
    const bytes = new Uint8Array(await host.arrayBuffer());
    return { parts: [bytes], next: from + bytes.byteLength, tail: size, closed: settled };
  };

  return {
    contentType: OUTPUT_TYPE,
    identity: `c${first.createdAt.toString(36)}`,
    read,
    async wait(_from, until, waitSignal) {
      const ms = Math.max(0, Math.min(GROWTH_POLL_MS, until - Date.now()));
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms);
        waitSignal.addEventListener("abort", () => {
          clearTimeout(timer);
          resolve();
        });
      });
    },
  };
}
