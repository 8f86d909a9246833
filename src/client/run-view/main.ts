/**
 * The run page (`GET /run/:runId?token=…`): every call of a run, live, from the Run
 * DO's socket (`followRun`); each entry expands to that call's own live output. Bundled
 * into public/run.html by scripts/build-client.ts.
 */

import { formatCount } from "../../core/output/footer.ts";
import { attachOfFragment } from "../../protocol/index.ts";
import { formatElapsed } from "../elapsed.ts";
import { formatBytes } from "../truncation-notice.ts";
import { byId } from "../viewer/dom.ts";
import { ServerClock } from "../viewer/server-clock.ts";
import { CallEntry } from "./call-entry.ts";
import { runCallStatus } from "./call-status.ts";
import { followRun } from "./run-follower.ts";
import { RunTimeline } from "./timeline.ts";

const runId = decodeURIComponent(/\/run\/([^/]+)/.exec(location.pathname)?.[1] ?? "");
const token = new URLSearchParams(location.search).get("token") ?? "";
const api = `/v1/runs/${encodeURIComponent(runId)}`;
const query = `?token=${encodeURIComponent(token)}`;
/** A take-over link's call and attach token, in its fragment (never sent to a server). */
const takeOver = attachOfFragment(location.hash);
const page = {
  title: byId("run-id"),
  counts: byId("counts"),
  totals: byId("totals"),
  connection: byId("connection"),
  problem: byId("problem"),
  list: byId("calls"),
  empty: byId("empty"),
};
page.title.textContent = runId;
document.title = `${runId} — Toolwire run`;

const clock = new ServerClock();
const entries = new Map<string, CallEntry>();
const timeline = new RunTimeline(byId("timeline"));

async function linksFor(id: string): Promise<{ socketUrl: string; viewUrl: string }> {
  const res = await fetch(`${api}/calls/${encodeURIComponent(id)}/links${query}`);
  const body = (await res.json()) as {
    socketUrl?: string;
    viewUrl?: string;
    error?: { message: string };
  };
  if (!res.ok || !body.socketUrl || !body.viewUrl)
    throw new Error(body.error?.message ?? `answered ${res.status}`);
  return { socketUrl: body.socketUrl, viewUrl: body.viewUrl };
}

// One plain read first: its Date header puts elapsed times on the server's clock, and
// a refused token is told in words (a socket that fails says nothing of why).
const sentAt = Date.now();
fetch(`${api}${query}`).then(
  async (res) => {
    clock.observe(res.headers.get("date"), sentAt, Date.now());
    if (!res.ok) {
      const body = (await res.json().catch(() => null)) as { error?: { message?: string } } | null;
      page.problem.hidden = false;
      page.problem.textContent = `This run cannot be shown: ${body?.error?.message ?? `the server answered ${res.status}`}`;
    }
  },
  () => {},
);

const socketUrl = `${location.origin.replace(/^http/, "ws")}${api}/socket${query}`;
const run = followRun(socketUrl);
run.onChange(render);
setInterval(tick, 100);
render();

function render(): void {
  for (const call of run.calls.values()) {
    const entry = entries.get(call.toolCallId);
    if (entry) entry.update(call);
    else {
      const attach = takeOver?.callId === call.toolCallId ? takeOver.attachToken : undefined;
      const created = new CallEntry(call, linksFor, attach);
      entries.set(call.toolCallId, created);
      page.list.append(created.node);
      // The call a take-over link names opens with its terminal, ready for keys.
      if (attach) created.toggle();
    }
  }
  const calls = [...run.calls.values()];
  const count = (status: string) => calls.filter((c) => c.status === status).length;
  const kinds = calls.map((c) => runCallStatus(c).kind);
  const parts = [`${formatCount(calls.length)} ${calls.length === 1 ? "call" : "calls"}`];
  const named = {
    running: "running",
    done: "done",
    error: "failed",
    timedout: "timed out",
    cancelled: "cancelled",
  };
  for (const [kind, words] of Object.entries(named)) {
    const n = kinds.filter((k) => k === kind).length;
    if (n > 0) parts.push(`${formatCount(n)} ${words}`);
  }
  page.counts.textContent = parts.join(" · ");
  page.empty.hidden = calls.length > 0 || !run.synced;
  document.body.dataset.calls = String(calls.length);
  document.body.dataset.running = String(count("running"));
  document.body.dataset.connection = run.status;
  const words = {
    connecting: "connecting…",
    live: "live",
    reconnecting: "reconnecting…",
    failed: "disconnected",
    closed: "closed",
  };
  page.connection.textContent = words[run.status];
  page.connection.className = `connection ${run.status}`;
  if (run.status === "failed" && run.error && page.problem.hidden) {
    page.problem.hidden = false;
    page.problem.textContent = run.error;
  }
  tick();
}

function tick(): void {
  const now = clock.now(Date.now());
  for (const entry of entries.values()) entry.tick(now);
  const calls = [...entries.values()].map((e) => e.call);
  timeline.draw(calls, now);
  renderTotals(calls, now);
}

/** The run's totals: lines and bytes of every call (live ones as their rows know), and its span. */
function renderTotals(
  calls: readonly {
    totalLines: number;
    totalBytes: number;
    createdAt: number;
    settledAt: number | null;
  }[],
  now: number,
): void {
  if (calls.length === 0) {
    page.totals.textContent = "";
    return;
  }
  const lines = calls.reduce((n, c) => n + c.totalLines, 0);
  const bytes = calls.reduce((n, c) => n + c.totalBytes, 0);
  const start = Math.min(...calls.map((c) => c.createdAt));
  const end = Math.max(...calls.map((c) => c.settledAt ?? now));
  page.totals.textContent = `${formatCount(lines)} ${lines === 1 ? "line" : "lines"} · ${formatBytes(bytes)} · ${formatElapsed(Math.max(0, end - start))}`;
}
