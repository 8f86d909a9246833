/**
 * The run page's timeline: every call of the run as a bar from its start to its end (or
 * to now, while it runs), one row per call in start order, coloured by how it ended. A
 * person sees at a glance what ran in parallel, what still runs, what failed and what
 * timed out. Bars are plain elements placed in percent of the run's span, redrawn on
 * each tick.
 */
import type { RunCall } from "../../core/events/run-call.ts";
import { formatElapsed } from "../elapsed.ts";
import { el } from "../viewer/dom.ts";
import { runCallStatus } from "./call-status.ts";

/** Tallest a row gets; with many calls rows shrink to keep the chart this high at most. */
const ROW_PX = 14;
const MAX_HEIGHT_PX = 180;

export class RunTimeline {
  readonly #root: HTMLElement;
  readonly #bars = new Map<string, HTMLElement>();
  readonly #scale: HTMLElement;

  constructor(root: HTMLElement) {
    this.#root = root;
    this.#scale = el("span", "timeline-scale");
    root.append(this.#scale);
  }

  /** Places every call's bar on the run's span, from its first start to `now` (server clock). */
  draw(calls: readonly RunCall[], now: number): void {
    this.#root.hidden = calls.length === 0;
    if (calls.length === 0) return;
    const start = Math.min(...calls.map((c) => c.createdAt));
    const end = Math.max(...calls.map((c) => c.settledAt ?? now));
    const span = Math.max(1000, end - start);
    const row = Math.max(3, Math.min(ROW_PX, Math.floor(MAX_HEIGHT_PX / calls.length)));
    this.#root.style.setProperty("--rows", String(calls.length));
    this.#root.style.height = `${calls.length * row + 18}px`;
    calls.forEach((call, i) => {
      let bar = this.#bars.get(call.toolCallId);
      if (!bar) {
        bar = el("span", "bar");
        bar.dataset.id = call.toolCallId;
        this.#bars.set(call.toolCallId, bar);
        this.#root.append(bar);
      }
      const status = runCallStatus(call);
      const from = call.createdAt - start;
      const to = (call.settledAt ?? now) - start;
      bar.className = `bar ${status.kind}`;
      bar.dataset.status = status.kind;
      bar.style.left = `${(from / span) * 100}%`;
      bar.style.width = `max(2px, ${((to - from) / span) * 100}%)`;
      bar.style.top = `${i * row}px`;
      bar.style.height = `${Math.max(2, row - 2)}px`;
      bar.title = `${call.tool} ${call.summary} · ${status.words} · ${formatElapsed(Math.max(0, to - from))}`;
    });
    this.#scale.textContent = formatElapsed(span);
  }
}
