/**
 * The live viewer page (`GET /view/:id?token=…`): follows one invocation over its
 * WebSocket with the client library and shows its output, status, elapsed time,
 * truncation, details and usage. Bundled with the library into public/viewer.html by
 * scripts/build-client.ts.
 */
import type { JsonValue } from "../../core/chord/types.ts";
import { formatCount } from "../../core/output/footer.ts";
import type { ToolOutputState, Usage } from "../../core/output/types.ts";
import { attachOfFragment, lastInputOf, queuedAheadOf, queuedWords } from "../../protocol/index.ts";
import { callEnding, limitSeconds, stoppedByOf, withoutModelFooter } from "../call-story.ts";
import { formatElapsed } from "../elapsed.ts";
import { ToolwireClient } from "../http-client.ts";
import { type Subscription, subscribe } from "../subscription.ts";
import { TerminalClient } from "../terminal-client.ts";
import { describeTruncation, formatBytes } from "../truncation-notice.ts";
import { DetailsTree } from "./details-tree.ts";
import { byId, el } from "./dom.ts";
import { describeFailure } from "./failure-message.ts";
import { FullOutputPane } from "./full-output-pane.ts";
import { OutputPane } from "./output-pane.ts";
import { RateChart } from "./rate-chart.ts";
import { ServerClock } from "./server-clock.ts";
import { callSize, TerminalPane } from "./terminal-pane.ts";

const IMAGE_TYPES = /^image\/(png|jpeg|gif|webp)$/;
/** A badge's words where they differ from the status it styles. */
const BADGE: Record<string, string> = { error: "failed", timedout: "timed out" };

const page = {
  tool: byId("tool"),
  args: byId("args"),
  status: byId("status"),
  elapsed: byId("elapsed"),
  ending: byId("ending"),
  limit: byId("limit"),
  counts: byId("counts"),
  rate: byId("rate"),
  side: byId("side"),
  detailsSection: byId("details-section"),
  usageSection: byId("usage-section"),
  connection: byId("connection"),
  problem: byId("problem"),
  banner: byId("banner"),
  bannerRow: byId("banner-row"),
  fullOpen: byId<HTMLButtonElement>("full-open"),
  usage: byId("usage"),
  effects: byId("effects"),
  effectsList: byId("effects-list"),
  images: byId("images"),
};
const output = new OutputPane(byId("output"), byId<HTMLButtonElement>("follow"));
const details = new DetailsTree(byId("details"));
const chart = new RateChart(byId("chart"));

const id = decodeURIComponent(/\/view\/([^/]+)/.exec(location.pathname)?.[1] ?? "");
const token = new URLSearchParams(location.search).get("token") ?? "";
/** The write capability of a take-over link, in its fragment (never sent to a server). */
const attachToken = attachOfFragment(location.hash)?.attachToken;
const clock = new ServerClock();
/** A tty call's terminal, made once its tool_start says it is one. */
let terminal: TerminalPane | null = null;
const spillUrl = `/v1/invocations/${encodeURIComponent(id)}/spill?token=${encodeURIComponent(token)}`;
const fullOutput = new FullOutputPane(spillUrl);
page.fullOpen.addEventListener("click", () => void fullOutput.open());
const api = new ToolwireClient({
  baseUrl: location.origin,
  subscribeToken: token,
  // Every answer's Date header tells how far this browser's clock is from the server's.
  fetch: async (input, init) => {
    const sentAt = Date.now();
    const res = await fetch(input, init);
    clock.observe(res.headers.get("date"), sentAt, Date.now());
    return res;
  },
});

// Times on the server's clock (createdAt and settledAt come from it); see ServerClock.
const openedAt = Date.now();
let startedAt: number | null = null;
let endedAt: number | null = null;
let cancelled = false;
/** When the page stopped following a call it never saw settle (expired, unknown, given up). */
let stoppedAt: number | null = null;
/** The API answered 404 for this id. */
let unknownCall = false;
let renderQueued = false;

// Without the fragment: it holds the attach token, and a WebSocket URL may not have one.
const sub = subscribe(`${location.origin}${location.pathname}${location.search}`);
sub.onChange(() => {
  if (sub.status === "settled" && endedAt === null) onSettled();
  queueRender();
});
// Creation time (so the clock is right when the page opens late) and the args.
api.get(id).then(
  (info) => {
    if (info.createdAt) startedAt = info.createdAt;
    if (info.settledAt) endedAt = info.settledAt;
    cancelled = info.cancelled === true;
    queueRender();
  },
  (error: unknown) => {
    if ((error as { code?: string }).code === "not_found") {
      unknownCall = true;
      sub.close();
    }
    queueRender();
  },
);
setInterval(renderClock, 100);
setInterval(renderRate, 1000);
render();

function onSettled(): void {
  endedAt = clock.now(Date.now());
  api.get(id).then(
    (info) => {
      cancelled = info.cancelled === true;
      if (info.settledAt) endedAt = info.settledAt;
      queueRender();
    },
    () => {},
  );
}

function queueRender(): void {
  if (renderQueued) return;
  renderQueued = true;
  requestAnimationFrame(() => {
    renderQueued = false;
    render();
  });
}

function render(): void {
  renderHeader(sub);
  renderConnection(sub);
  const state = sub.state;
  if (state) renderState(state);
  renderClock();
}

function renderHeader(s: Subscription): void {
  if (s.start) {
    page.tool.textContent = s.start.sandbox
      ? `${s.start.toolName} in ${s.start.sandbox}`
      : s.start.toolName;
    page.args.textContent = describeArgs(s.start.args);
  }
  const status = shownStatus(s);
  // The clock stops with the call, or where the page lost it (expired, unknown, cut off).
  if (status === "expired" || status === "unknown" || status === "disconnected")
    stoppedAt ??= clock.now(Date.now());
  page.status.textContent = BADGE[status] ?? status;
  page.status.className = `status ${status}`;
  document.body.dataset.status = status;
  const ending = s.end
    ? callEnding({
        isError: s.end.isError,
        cancelled,
        details: s.state?.details,
        args: s.start?.args,
      })
    : null;
  // The words every face uses for how it ended ("timed out after 1 s (timeout)"), or
  // for where it waits ("queued (2 commands ahead)").
  const ahead = status === "queued" ? queuedAheadOf(s.state?.details) : null;
  page.ending.textContent =
    ahead !== null ? queuedWords(ahead) : ending && ending.kind !== "done" ? ending.words : "";
  page.ending.hidden = page.ending.textContent === "";
  document.title = `${s.start?.toolName ?? "invocation"} · ${ending?.words ?? status} — Toolwire`;
}

/** While a call with a time limit runs: the limit, and for the wall clock the time left. */
function renderLimit(now: number): void {
  const args = sub.start?.args;
  const running = sub.start !== null && !sub.end && endedAt === null;
  const hard = limitSeconds(args, "timeout");
  const idle = limitSeconds(args, "idleTimeout");
  const parts: string[] = [];
  if (running && hard !== null) {
    const left = hard * 1000 - (now - (startedAt ?? clock.now(openedAt)));
    parts.push(`limit ${hard} s · ${formatElapsed(Math.max(0, left))} left`);
  }
  if (running && idle !== null) parts.push(`stops after ${idle} s without output`);
  page.limit.textContent = parts.join(" · ");
  page.limit.hidden = parts.length === 0;
}

/**
 * The badge, from the invocation's own state: settled (done, error, cancelled), running
 * once its tool_start arrived, and otherwise what the page knows: still connecting, the
 * link expired, no such call, or the connection given up.
 */
function shownStatus(s: Subscription): string {
  if (s.end) {
    if (cancelled) return "cancelled";
    if (stoppedByOf(s.state?.details)) return "timedout";
    return s.end.isError ? "error" : "done";
  }
  if (unknownCall || (s.status === "failed" && s.error?.code === "not_found")) return "unknown";
  if (s.status === "failed" && s.error?.code === "unauthorized") return "expired";
  if (s.status === "failed") return "disconnected";
  if (!s.start) return "connecting";
  // A command that waits its turn in its sandbox (decision 248).
  return queuedAheadOf(s.state?.details) === null ? "running" : "queued";
}

function renderConnection(s: Subscription): void {
  document.body.dataset.connection = s.status;
  const words: Record<Subscription["status"], string> = {
    connecting: "connecting…",
    live: "live",
    reconnecting: `reconnecting…${s.attempt > 1 ? ` (attempt ${s.attempt})` : ""}`,
    settled: "",
    closed: "closed",
    failed: "disconnected",
  };
  page.connection.textContent = words[s.status];
  page.connection.className = `connection ${s.status}`;
  page.problem.hidden = s.status !== "failed";
  if (s.status === "failed" && s.error) {
    // The id is the page's own address: known even when the call's start never arrived.
    page.problem.textContent = describeFailure(s.error, s.start?.toolCallId ?? (id || null));
  }
}

/** A bash call with `tty: true` is shown as its terminal (decision 191). */
function terminalFor(s: Subscription): TerminalPane | null {
  if (terminal || !s.start) return terminal;
  const args = s.start.args as Record<string, unknown> | null;
  if (s.start.toolName !== "bash" || args?.tty !== true) return null;
  const client = new TerminalClient({
    baseUrl: location.origin,
    id,
    subscribeToken: token,
    ...(attachToken ? { attachToken } : {}),
  });
  terminal = new TerminalPane(client, callSize(args));
  const section = byId("output").parentElement as HTMLElement;
  section.classList.add("is-terminal");
  section.replaceChildren(terminal.node);
  return terminal;
}

function renderState(state: ToolOutputState): void {
  const first = state.content[0];
  const text = first?.type === "text" ? first.text : "";
  const term = terminalFor(sub);
  const running = !sub.end && sub.status !== "settled";
  // People get the banner below and the full-output pane, not the model's footer.
  if (term) {
    term.render(state, running, withoutModelFooter(text));
    term.showLastInput(lastInputOf(state.details), clock.now(Date.now()));
  } else output.render(withoutModelFooter(text));
  const t = state.truncation;
  const banner = describeTruncation(t, t.spillPath ? "tail" : undefined);
  page.bannerRow.hidden = banner === null;
  page.fullOpen.hidden = t.spillPath === undefined;
  renderBanner(banner, t.spillPath);
  const hasDetails = !isEmpty(state.details);
  if (hasDetails) details.render(state.details as JsonValue);
  page.detailsSection.hidden = !hasDetails;
  renderUsage(state.usage);
  renderEffects(state);
  renderImages(state);
  // The side pane takes a third of the width only when it has something to show.
  page.side.hidden =
    page.detailsSection.hidden &&
    page.usageSection.hidden &&
    page.effects.hidden &&
    shownImages.length === 0;
  renderCounts(state);
}

function isEmpty(value: unknown): boolean {
  if (value === null || value === undefined) return true;
  if (typeof value !== "object") return false;
  return Array.isArray(value) ? value.length === 0 : Object.keys(value).length === 0;
}

/** Lines and bytes so far, in the header. */
function renderCounts(state: ToolOutputState): void {
  const t = state.truncation;
  page.counts.textContent = `${formatCount(t.totalLines)} ${t.totalLines === 1 ? "line" : "lines"} · ${formatBytes(t.totalBytes)}`;
}

/** Once a second: the chart gets the byte total, the header the rate (an average once it ended). */
function renderRate(): void {
  const bytes = sub.state?.truncation.totalBytes ?? 0;
  const now = clock.now(Date.now());
  if (endedAt === null && stoppedAt === null && sub.start) {
    chart.observe(bytes, now);
    chart.draw();
    page.rate.textContent = chart.describeRate();
    return;
  }
  const took = (endedAt ?? stoppedAt ?? now) - (startedAt ?? now);
  page.rate.textContent =
    endedAt !== null && took > 0
      ? `${formatBytes(Math.round(bytes / (took / 1000)))}/s on average`
      : "";
}

/** The banner's words, with the spill path as a link to the complete output. */
let shownBanner: string | null = null;
function renderBanner(text: string | null, spillPath: string | undefined): void {
  if (text === shownBanner) return;
  shownBanner = text;
  const at = spillPath ? (text?.lastIndexOf(spillPath) ?? -1) : -1;
  if (text === null || spillPath === undefined || at < 0) {
    page.banner.textContent = text ?? "";
    return;
  }
  const link = el("a", undefined, spillPath);
  link.href = spillUrl;
  link.target = "_blank";
  link.rel = "noopener noreferrer";
  page.banner.replaceChildren(text.slice(0, at), link, text.slice(at + spillPath.length));
}

function renderUsage(usage: Usage | undefined): void {
  const entries = Object.entries(usage ?? {}).filter(
    (e): e is [string, number] => typeof e[1] === "number",
  );
  page.usageSection.hidden = entries.length === 0;
  if (entries.length === 0) return;
  const list = el("dl");
  for (const [k, v] of entries) {
    const row = el("div", "usage-row");
    row.append(
      el("dt", undefined, k),
      el("dd", undefined, k === "cost" ? `$${v.toFixed(4)}` : formatCount(v)),
    );
    list.append(row);
  }
  page.usage.replaceChildren(list);
}

/** What the call asks of the agent loop: tools it adds, and whether to stop. */
function renderEffects(state: ToolOutputState): void {
  const items: string[] = [];
  if (state.addedTools && state.addedTools.length > 0) {
    items.push(`Adds tools: ${state.addedTools.join(", ")}`);
  }
  if (state.terminate) items.push("Asks the agent to stop after this call");
  page.effects.hidden = items.length === 0;
  page.effectsList.replaceChildren(...items.map((text) => el("li", undefined, text)));
}

let shownImages: { data: string; mimeType: string }[] = [];
function renderImages(state: ToolOutputState): void {
  const images = state.content.filter((c) => c.type === "image");
  // Whole-string comparison: a new base may carry a different image of the same size.
  const same =
    images.length === shownImages.length &&
    images.every(
      (i, k) => i.mimeType === shownImages[k]?.mimeType && i.data === shownImages[k]?.data,
    );
  if (same) return;
  shownImages = images;
  page.images.replaceChildren(
    ...images.map((image) => {
      if (!IMAGE_TYPES.test(image.mimeType)) {
        return el("p", "muted", `An image of type ${image.mimeType} (not shown).`);
      }
      const img = el("img");
      img.alt = "tool output image";
      img.src = `data:${image.mimeType};base64,${image.data}`;
      return img;
    }),
  );
}

function renderClock(): void {
  // Nothing to time before the call is known to exist, nor for one that does not.
  if (unknownCall || (startedAt === null && sub.start === null)) {
    page.elapsed.textContent = "—";
    return;
  }
  // Until the invocation's createdAt is known, count from when the page opened.
  const now = clock.now(Date.now());
  const ms = (endedAt ?? stoppedAt ?? now) - (startedAt ?? clock.now(openedAt));
  page.elapsed.textContent = formatElapsed(Math.max(0, ms));
  renderLimit(now);
}

/** `bash { command }` shows its command; other tools a one-line JSON of their args. */
function describeArgs(args: JsonValue): string {
  if (
    args &&
    typeof args === "object" &&
    !Array.isArray(args) &&
    typeof args.command === "string"
  ) {
    return args.command;
  }
  const json = JSON.stringify(args) ?? "";
  return json.length > 300 ? `${json.slice(0, 300)}…` : json;
}
