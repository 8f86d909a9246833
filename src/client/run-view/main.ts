/**
 * The run page (`GET /run/:runId?token=…`): every call of a run, live, from the Run
 * DO's socket (`followRun`); each entry expands to that call's own live output. Bundled
 * into public/run.html by scripts/build-client.ts.
 */
import { formatCount } from "../truncation-notice.ts";
import { byId } from "../viewer/dom.ts";
import { ServerClock } from "../viewer/server-clock.ts";
import { CallEntry } from "./call-entry.ts";
import { followRun } from "./run-follower.ts";

const runId = decodeURIComponent(/\/run\/([^/]+)/.exec(location.pathname)?.[1] ?? "");
const token = new URLSearchParams(location.search).get("token") ?? "";
const api = `/v1/runs/${encodeURIComponent(runId)}`;
const query = `?token=${encodeURIComponent(token)}`;
const page = {
  title: byId("run-id"),
  counts: byId("counts"),
  connection: byId("connection"),
  problem: byId("problem"),
  list: byId("calls"),
  empty: byId("empty"),
};
page.title.textContent = runId;
document.title = `${runId} — Toolwire run`;

const clock = new ServerClock();
const entries = new Map<string, CallEntry>();

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
      const created = new CallEntry(call, linksFor);
      entries.set(call.toolCallId, created);
      page.list.append(created.node);
    }
  }
  const calls = [...run.calls.values()];
  const count = (status: string) => calls.filter((c) => c.status === status).length;
  const parts = [`${formatCount(calls.length)} ${calls.length === 1 ? "call" : "calls"}`];
  for (const status of ["running", "done", "error", "cancelled"]) {
    const n = count(status);
    if (n > 0) parts.push(`${formatCount(n)} ${status}`);
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
}
