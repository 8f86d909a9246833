// One story on every face (decision 260): one call per fact (a cancel, a timeout, an
// idle timeout, a cut output that exits 254), each read through HTTP, MCP, the CLI, the
// viewer and the run page, against the real Worker, DOs, sandbox host and Chromium.
// Where two faces tell a fact differently, the test fails and names the faces.
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { buildViewer } from "../../scripts/build-client.ts";
import { callEnding } from "../../src/client/call-story.ts";
import { type CreatedInvocation, ToolwireClient } from "../../src/client/index.ts";
import { launchChromium, SIZES } from "../support/e2e/chromium.ts";
import { connectV2, type McpTestClient, type ToolResult } from "../support/e2e/mcp/clients.ts";
import { toolwire } from "../support/e2e/toolwire-cli.ts";

const api = new ToolwireClient({ baseUrl: inject("apiUrl"), token: inject("apiToken") });
const runId = `faces-${Date.now().toString(36)}`;
let browser: Browser;
let mcp: McpTestClient;

beforeAll(async () => {
  await buildViewer();
  [browser, mcp] = await Promise.all([
    launchChromium(),
    connectV2(`${inject("apiUrl")}/mcp`, inject("apiToken")),
  ]);
});

afterAll(async () => {
  await Promise.all([browser?.close(), mcp?.close()]);
});

interface Fact {
  name: string;
  args: { [name: string]: string | number };
  /** What every face says of it. */
  words: string;
  /** The CLI's exit status for it. */
  exit: number;
  /** MCP's `structuredContent.exit`. */
  mcpExit: Record<string, unknown>;
  cancel?: boolean;
}

const FACTS: Fact[] = [
  {
    name: "cancel",
    args: { command: "echo started; sleep 30" },
    words: "cancelled",
    exit: 130,
    mcpExit: { status: "cancelled" },
    cancel: true,
  },
  {
    name: "timeout",
    args: { command: "echo started; sleep 30", timeout: 1 },
    words: "timed out after 1 s (timeout)",
    exit: 124,
    mcpExit: { status: "timeout", limit: "timeout" },
  },
  {
    name: "idle",
    args: { command: "echo started; sleep 30", idleTimeout: 1 },
    words: "timed out after 1 s (idle)",
    exit: 124,
    mcpExit: { status: "timeout", limit: "idleTimeout" },
  },
  {
    name: "cut",
    args: { command: "seq 1 3000; exit 254" },
    words: "failed (exit 254)",
    exit: 254,
    mcpExit: { status: "failed", exitCode: 254 },
  },
];

async function settle(fact: Fact): Promise<CreatedInvocation> {
  const created = await api.createInvocation({ tool: "bash", args: fact.args, runId });
  if (fact.cancel) {
    await expect
      .poll(async () => (await api.get(created.id)).state.truncation.totalLines, {
        timeout: 15_000,
      })
      .toBeGreaterThan(0);
    await api.cancel(created.id);
  }
  await expect
    .poll(async () => (await api.result(created.id, { wait: 20 })).status)
    .toBe("settled");
  return created;
}

function mcpText(result: ToolResult): string {
  const first = result.content[0];
  return first?.type === "text" ? (first.text ?? "") : "";
}

/** The viewer's badge and words for a settled call, and the output people see. */
async function viewerSays(page: Page, url: string) {
  await page.goto(url);
  await page.waitForFunction(
    () => !["connecting", "running"].includes(document.body.dataset.status ?? ""),
    undefined,
    {
      timeout: 30_000,
    },
  );
  const ending = await page.locator("#ending").textContent();
  return {
    words: ending === "" ? await page.locator("#status").textContent() : ending,
    badge: await page.locator("#status").textContent(),
    output: (await page.locator("#output").textContent()) ?? "",
  };
}

describe("one story on every face", () => {
  it("a cancel, a timeout, an idle timeout and a cut output read the same through HTTP, MCP, the CLI, the viewer and the run page", async () => {
    const calls = await Promise.all(FACTS.map(settle));
    const told: Record<string, Record<string, unknown>> = {};
    const expected: Record<string, Record<string, unknown>> = {};
    const page = await browser.newPage({ viewport: SIZES[0].viewport });
    const runUrl = calls[0]?.runViewUrl ?? "";
    for (const [k, fact] of FACTS.entries()) {
      const id = calls[k]!.id;
      // HTTP: the record and the result; a timeout's text carries the words.
      const view = await api.get(id);
      const poll = await api.result(id);
      if (poll.status !== "settled") throw new Error(`${id} did not settle`);
      const text = poll.result.content[0]?.type === "text" ? poll.result.content[0].text : "";
      const http = callEnding({
        isError: poll.result.isError,
        cancelled: view.cancelled,
        details: poll.result.details,
        args: view.args,
      }).words;
      // MCP: the same call joined by its id.
      const mcpResult = await mcp.call("bash", fact.args, { meta: { "io.toolwire/callId": id } });
      const exit = (mcpResult.structuredContent as { exit: Record<string, unknown> }).exit;
      // The CLI, as a person at a terminal runs it.
      const cli = await toolwire(["result", id]);
      const cliWords = /\[toolwire\] (.+)\n$/.exec(cli.stderr)?.[1];
      const viewer = await viewerSays(page, (await api.links(id)).viewUrl);
      const timedOut = fact.exit === 124;
      told[fact.name] = {
        http,
        httpText: timedOut ? text.includes(fact.words) : true,
        mcp: exit,
        mcpText: timedOut ? mcpText(mcpResult).includes(fact.words) : true,
        cli: cliWords,
        cliExit: cli.code,
        viewer: viewer.words,
        viewerShowsModelFooter: viewer.output.includes("[To see"),
      };
      expected[fact.name] = {
        http: fact.words,
        httpText: true,
        mcp: expect.objectContaining(fact.mcpExit),
        mcpText: true,
        cli: fact.words,
        cliExit: fact.exit,
        viewer: fact.words,
        viewerShowsModelFooter: false,
      };
    }
    // The run page, once for all four.
    await page.goto(runUrl);
    await page.waitForFunction(
      (n) => Number(document.body.dataset.calls) >= n && document.body.dataset.running === "0",
      FACTS.length,
      {
        timeout: 30_000,
      },
    );
    for (const [k, fact] of FACTS.entries()) {
      const row = page.locator(`.call[data-id="${calls[k]!.id}"] .status`);
      told[fact.name]!.run = await row.getAttribute("title");
      expected[fact.name]!.run = fact.words;
    }
    expect(told).toEqual(expected);
    await page.close();
  });

  it("a cut output gives people one notice and the whole output; the model keeps its footer, which names grep", async () => {
    const cut = FACTS[3]!;
    const created = await settle(cut);
    const run = await toolwire(["result", created.id]);
    expect(run.stdout).not.toContain("[To see");
    expect(run.stdout).not.toContain("/toolwire/spill");
    expect(run.stderr.match(/The whole output: /g)).toHaveLength(1);
    expect(run.stderr).toContain(
      `The whole output: toolwire output ${created.id} > ${created.id}.log`,
    );
    const whole = await toolwire(["output", created.id]);
    expect(whole.code).toBe(0);
    expect(whole.stdout).toBe(Array.from({ length: 3000 }, (_, i) => `${i + 1}\n`).join(""));
    const poll = await api.result(created.id);
    const text =
      poll.status === "settled" && poll.result.content[0]?.type === "text"
        ? poll.result.content[0].text
        : "";
    expect(text).toMatch(
      /\[To see lines 1–1,000: read \{[^\n]*\}; to search it, grep \{"path":"\/toolwire\/spill\/[^"]+\.log"\}\]/,
    );
  });

  it("while a call with a limit runs, the viewer's header shows the limit, the time left, lines, bytes, rate and a chart; the side pane shows only with something in it", async () => {
    const created = await api.createInvocation({
      tool: "bash",
      args: {
        command: "for i in $(seq 1 150); do seq 1 100; sleep 0.1; done",
        timeout: 600,
      },
    });
    for (const size of SIZES) {
      const page = await browser.newPage({ viewport: size.viewport });
      await page.goto(created.viewUrl);
      await page.waitForFunction(() => document.body.dataset.status === "running", undefined, {
        timeout: 15_000,
      });
      await page.waitForFunction(
        () => Number(document.querySelector("#chart svg")?.getAttribute("data-seconds")) >= 2,
        undefined,
        {
          timeout: 15_000,
        },
      );
      // The time left is the limit less the time the page shows as elapsed (the same
      // clock), whatever the machine's load made that.
      const [limit, elapsed] = await page.evaluate(() => [
        document.querySelector("#limit")?.textContent ?? "",
        document.querySelector("#elapsed")?.textContent ?? "",
      ]);
      const left = /^limit 600 s · (\d+):(\d\d) left$/.exec(limit);
      expect(left, `${size.name}: ${limit}`).not.toBeNull();
      const seconds = (clock: string) =>
        clock.split(":").reduce((total, part) => total * 60 + Number.parseFloat(part), 0);
      const leftSeconds = Number(left![1]) * 60 + Number(left![2]);
      expect(
        Math.abs(600 - seconds(elapsed) - leftSeconds),
        `${size.name}: ${limit}, ${elapsed}`,
      ).toBeLessThanOrEqual(2);
      expect(await page.locator("#counts").textContent(), size.name).toMatch(
        /^[\d,]+ lines · [\d.,]+ (KB|bytes)$/,
      );
      expect(await page.locator("#rate").textContent(), size.name).toMatch(/\/s$/);
      expect(await page.locator("#chart rect").count(), size.name).toBeGreaterThan(0);
      expect(await page.locator("#side").isHidden(), size.name).toBe(true);
      expect(await page.locator("text=No details.").count()).toBe(0);
      await page.close();
    }
  });

  it("the run page's counts do not wrap, it totals the run, and its timeline has a bar per call by how it ended, at both sizes", async () => {
    const calls = await Promise.all(FACTS.map(settle));
    const url = calls[0]?.runViewUrl ?? "";
    for (const size of SIZES) {
      const page = await browser.newPage({ viewport: size.viewport });
      await page.goto(url);
      await page.waitForFunction(
        (n) => Number(document.body.dataset.calls) >= n && document.body.dataset.running === "0",
        8,
        {
          timeout: 30_000,
        },
      );
      const bars = await page
        .locator("#timeline .bar")
        .evaluateAll((nodes) => nodes.map((n) => (n as HTMLElement).dataset.status));
      expect(bars.filter((s) => s === "cancelled").length, size.name).toBeGreaterThanOrEqual(2);
      expect(bars.filter((s) => s === "timedout").length, size.name).toBeGreaterThanOrEqual(4);
      expect(bars.filter((s) => s === "error").length, size.name).toBeGreaterThanOrEqual(2);
      expect(await page.locator("#totals").textContent(), size.name).toMatch(
        /^[\d,]+ lines · [\d.,]+ (KB|bytes) · \d/,
      );
      // One line each: a count never breaks between its number and its unit.
      const heights = await page.locator(".call .lines").evaluateAll((nodes) =>
        nodes.map((n) => {
          const node = n as HTMLElement;
          return (
            node.getBoundingClientRect().height /
            Number.parseFloat(getComputedStyle(node).lineHeight)
          );
        }),
      );
      for (const lines of heights) expect(lines, size.name).toBeLessThan(1.5);
      await page.close();
    }
  });
});
