/**
 * `toolwire watch --run <runId>`: follows a whole run in the terminal. Prints one line
 * per call as it starts and one as it settles (status, lines, bytes, elapsed), the
 * calls already in the run first, and keeps following until Ctrl-C.
 */

import { formatCount } from "../../core/output/footer.ts";
import { ToolwireError } from "../errors.ts";
import { followRun, type RunCall } from "../run-view/run-follower.ts";
import { formatBytes } from "../truncation-notice.ts";
import type { Terminal } from "./live-printer.ts";

interface WatchRunProcess extends Terminal {
  onInterrupt(handler: () => void): () => void;
}

/** What the command ended with: Ctrl-C, or a socket that could not be kept. */
type WatchRunEnd = { kind: "interrupted" } | { kind: "failed"; error: ToolwireError };

/**
 * Follows run `runId` on the Worker at `baseUrl` with the API token.
 * @example await watchRun("http://127.0.0.1:8787", token, "run-7", process)
 */
export async function watchRun(
  baseUrl: string,
  token: string,
  runId: string,
  proc: WatchRunProcess,
): Promise<WatchRunEnd> {
  if (typeof (globalThis as { WebSocket?: unknown }).WebSocket !== "function") {
    // A run is followed only over its socket (it has no SSE stream): say so at once.
    throw new ToolwireError(
      "unsupported",
      `watch --run needs a WebSocket, which Node 22 or later has; this is Node ${process.versions.node}. A single call (toolwire watch <id>) follows over SSE on this Node`,
      0,
    );
  }
  const path = `/v1/runs/${encodeURIComponent(runId)}`;
  const headers = { Authorization: `Bearer ${token}` };
  // A plain read first, so a wrong token or URL is a clear error, not a silent socket.
  let res: Response;
  try {
    res = await fetch(`${baseUrl}${path}`, { headers });
  } catch (error) {
    throw new ToolwireError(
      "unreachable",
      `Could not reach ${baseUrl} (${(error as Error).message})`,
      0,
    );
  }
  if (!res.ok) {
    const body = (await res.json().catch(() => null)) as {
      error?: { code?: string; message?: string };
    } | null;
    throw new ToolwireError(
      body?.error?.code ?? "bad_response",
      `Following run ${runId}: ${body?.error?.message ?? `the server answered ${res.status}`}`,
      res.status,
    );
  }
  await res.body?.cancel();

  const run = followRun(`${baseUrl.replace(/^http/, "ws")}${path}/socket`, { headers });
  const printed = new Map<string, RunCall["status"]>();
  let announced = false;
  const print = () => {
    if (!run.synced) return;
    if (!announced) {
      announced = true;
      const n = run.calls.size;
      proc.stderr.write(
        `[toolwire] following run ${runId}: ${n} ${n === 1 ? "call" : "calls"} so far; Ctrl-C to stop\n`,
      );
    }
    for (const call of run.calls.values()) {
      const before = printed.get(call.toolCallId);
      if (before === call.status) continue;
      // A call first seen settled gets one line, not a "started" line too.
      printed.set(call.toolCallId, call.status);
      proc.stdout.write(`${describeCall(call)}\n`);
    }
  };

  return new Promise<WatchRunEnd>((resolve) => {
    const stop = (end: WatchRunEnd) => {
      stopListening();
      unsubscribe();
      run.close();
      const calls = [...run.calls.values()];
      const count = (s: RunCall["status"]) => calls.filter((c) => c.status === s).length;
      proc.stderr.write(
        `[toolwire] run ${runId}: ${calls.length} calls, ${count("running")} running, ${count("done")} done, ${count("error")} error, ${count("cancelled")} cancelled\n`,
      );
      resolve(end);
    };
    const unsubscribe = run.onChange(() => {
      print();
      if (run.status === "failed") {
        stop({
          kind: "failed",
          error: new ToolwireError("gave_up", run.error ?? `lost run ${runId}`, 0),
        });
      }
    });
    const stopListening = proc.onInterrupt(() => stop({ kind: "interrupted" }));
  });
}

/**
 * One line for a call: status, tool, id, then the args summary (running) or its totals.
 * @example describeCall(call) // "done       bash      call_1  12 lines, 96 bytes, 1.2 s  npm test"
 */
export function describeCall(call: RunCall): string {
  const head = `${call.status.padEnd(10)} ${call.tool.padEnd(9)} ${call.toolCallId}`;
  if (call.status === "running") return `${head}  ${call.summary}`;
  const lines = `${formatCount(call.totalLines)} ${call.totalLines === 1 ? "line" : "lines"}`;
  const seconds = ((call.settledAt ?? call.createdAt) - call.createdAt) / 1000;
  return `${head}  ${lines}, ${formatBytes(call.totalBytes)}, ${seconds.toFixed(1)} s  ${call.summary}`;
}
