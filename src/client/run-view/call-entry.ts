/**
 * One call on the run page: a summary row (tool, args, status, elapsed, lines, error
 * state) that expands to the call's own live output, followed with the client library
 * over the call's WebSocket (a subscribe token from `/v1/runs/:runId/calls/:id/links`).
 */
import type { RunCall } from "../../core/events/run-call.ts";
import { formatCount } from "../../core/output/footer.ts";
import { withoutModelFooter } from "../call-story.ts";
import { formatElapsed } from "../elapsed.ts";
import { type Subscription, subscribe } from "../subscription.ts";
import { TerminalClient } from "../terminal-client.ts";
import { formatBytes } from "../truncation-notice.ts";
import { el } from "../viewer/dom.ts";
import { OutputPane } from "../viewer/output-pane.ts";
import { callSize, TerminalPane } from "../viewer/terminal-pane.ts";
import { runCallStatus } from "./call-status.ts";

/** How the page gets a call's links; a failure's message is shown in the entry. */
type LinksFor = (toolCallId: string) => Promise<{ socketUrl: string; viewUrl: string }>;

/** A badge's short word; its title has the whole story ("failed (exit 3)"). */
const BADGE = {
  running: "running",
  done: "done",
  error: "failed",
  timedout: "timed out",
  cancelled: "cancelled",
} as const;

export class CallEntry {
  readonly node: HTMLElement;
  readonly #summary: HTMLButtonElement;
  readonly #status: HTMLElement;
  readonly #elapsed: HTMLElement;
  readonly #lines: HTMLElement;
  readonly #body: HTMLElement;
  readonly #linksFor: LinksFor;
  #call: RunCall;
  #sub: Subscription | null = null;
  #pane: OutputPane | null = null;
  /** A tty call's terminal (decision 191), in place of the output pane. */
  #terminal: TerminalPane | null = null;
  /** Whether #follow has started (it awaits the links before #sub is set). */
  #following = false;
  /** The write capability of a take-over link for this call (the page's fragment). */
  readonly #attachToken: string | undefined;

  constructor(call: RunCall, linksFor: LinksFor, attachToken?: string) {
    this.#call = call;
    this.#linksFor = linksFor;
    this.#attachToken = attachToken;
    this.node = el("li", "call");
    this.node.dataset.id = call.toolCallId;
    this.#summary = el("button", "call-row");
    this.#summary.type = "button";
    this.#summary.setAttribute("aria-expanded", "false");
    this.#status = el("span", "status");
    this.#elapsed = el("span", "elapsed");
    this.#lines = el("span", "lines");
    this.#summary.append(
      el("span", "tool", call.tool),
      el("span", "summary", call.summary),
      this.#status,
      this.#elapsed,
      this.#lines,
    );
    this.#body = el("div", "call-body");
    this.#body.hidden = true;
    this.node.append(this.#summary, this.#body);
    this.#summary.addEventListener("click", () => this.toggle());
    this.update(call);
  }

  get call(): RunCall {
    return this.#call;
  }

  update(call: RunCall): void {
    this.#call = call;
    const status = runCallStatus(call);
    this.node.dataset.status = call.status;
    this.#status.textContent = BADGE[status.kind];
    this.#status.title = status.words;
    this.#status.className = `status ${status.kind}`;
    this.#showTotals();
    // A running call's counts follow its own stream: the run only hears them now and then.
    if (call.status === "running" && this.#sub === null && !this.#following) void this.#follow();
  }

  /** Lines and bytes: the call's own live totals while it runs, the run's row otherwise. */
  #showTotals(): void {
    const live = this.#sub?.state?.truncation;
    const lines = Math.max(this.#call.totalLines, live?.totalLines ?? 0);
    const total = Math.max(this.#call.totalBytes, live?.totalBytes ?? 0);
    const bytes = total > 0 ? ` · ${formatBytes(total)}` : "";
    this.#lines.textContent = `${formatCount(lines)} ${lines === 1 ? "line" : "lines"}${bytes}`;
  }

  /** Elapsed time on the server's clock (`now` is the server's time). */
  tick(now: number): void {
    const end = this.#call.settledAt ?? now;
    this.#elapsed.textContent = formatElapsed(Math.max(0, end - this.#call.createdAt));
  }

  toggle(): void {
    const open = this.#body.hidden;
    this.#body.hidden = !open;
    this.#summary.setAttribute("aria-expanded", String(open));
    this.node.classList.toggle("open", open);
    if (open && this.#sub === null && !this.#following) void this.#follow();
  }

  /** Opens the call's own stream (once): its output for the body, its totals for the row. */
  async #follow(): Promise<void> {
    this.#following = true;
    const output = el("div", "output");
    output.setAttribute("role", "log");
    const follow = el("button", "follow", "Follow output ↓");
    follow.type = "button";
    follow.hidden = true;
    const note = el("p", "muted", "Connecting…");
    this.#body.replaceChildren(note, output, follow);
    let links: Awaited<ReturnType<LinksFor>>;
    try {
      links = await this.#linksFor(this.#call.toolCallId);
    } catch (error) {
      note.textContent = `The output cannot be opened: ${error instanceof Error ? error.message : String(error)}`;
      return;
    }
    const open = el("a", undefined, "open in the viewer (the whole output is there)");
    open.href = links.viewUrl;
    open.target = "_blank";
    open.rel = "noopener noreferrer";
    note.replaceChildren(open);
    this.#pane = new OutputPane(output, follow);
    const sub = subscribe(links.socketUrl);
    this.#sub = sub;
    sub.onChange(() => {
      const first = sub.state?.content[0];
      const text = first?.type === "text" ? first.text : "";
      const terminal = this.#terminalFor(sub, links.socketUrl, output, follow);
      const running = !sub.end && sub.status !== "settled";
      if (terminal && sub.state) {
        terminal.render(sub.state, running, withoutModelFooter(text));
      }
      // People get the viewer link above, not the model's footer and its read call.
      else this.#pane?.render(withoutModelFooter(text));
      this.node.dataset.output = sub.status;
      this.#showTotals();
    });
  }

  /**
   * Once the call's start says it is a tty call: its terminal in place of the output,
   * read-only unless the page's take-over link gave this call an attach token.
   */
  #terminalFor(
    sub: Subscription,
    socketUrl: string,
    output: HTMLElement,
    follow: HTMLElement,
  ): TerminalPane | null {
    if (this.#terminal || !sub.start) return this.#terminal;
    const args = sub.start.args as Record<string, unknown> | null;
    if (sub.start.toolName !== "bash" || args?.tty !== true) return null;
    const url = new URL(socketUrl);
    const token = url.searchParams.get("token");
    const client = new TerminalClient({
      baseUrl: `${url.protocol === "wss:" ? "https:" : "http:"}//${url.host}`,
      id: this.#call.toolCallId,
      ...(token ? { subscribeToken: token } : {}),
      ...(this.#attachToken ? { attachToken: this.#attachToken } : {}),
    });
    this.#terminal = new TerminalPane(client, callSize(args));
    follow.remove();
    output.replaceWith(this.#terminal.node);
    return this.#terminal;
  }
}
