import { env } from "cloudflare:workers";
import { describe, expect, inject, it } from "vitest";
import type { ToolOutput } from "../../../src/core/output/index.ts";
import {
  WEB_FETCH_MAX_DOWNLOAD_BYTES,
  WEB_FETCH_MAX_REDIRECTS,
  WEB_FETCH_MAX_TEXT_BYTES,
  webFetchTool,
} from "../../../src/tools/web-fetch.ts";
import { call, create, freshId } from "../worker/helpers.ts";

const origin = inject("webOrigin");

interface Settled {
  content: { type: string; text: string }[];
  isError: boolean;
}

/** Runs web_fetch through the API and returns the settled result. */
async function fetchThroughApi(url: string): Promise<Settled & { text: string }> {
  const { id } = await create({ tool: "web_fetch", args: { url }, toolCallId: freshId("wf") });
  const res = await call(`/v1/invocations/${id}/result?wait=30`);
  expect(res.status).toBe(200);
  const settled = (await res.json()) as Settled;
  return { ...settled, text: settled.content[0]?.text ?? "" };
}

describe("web_fetch against a real local server", () => {
  it("turns an HTML page into text with a footer saying it is complete", async () => {
    const { text, isError } = await fetchThroughApi(`${origin}/page.html`);
    expect(isError).toBe(false);
    expect(text).toContain("Tide & Time\n\n# Harbour notes\n\nHigh water at 06:12\u00a0today — ☺.");
    expect(text).toContain(`- First [the plain file](${origin}/plain.txt)`);
    expect(text).toContain("  keep\n    this");
    expect(text).not.toContain("do not show");
    expect(text).not.toContain("enable js");
    expect(text).toMatch(
      /\[web_fetch http:\/\/127\.0\.0\.1:\d+\/page\.html \(text\/html, HTTP 200 OK\): \d+ bytes of text, complete\.\]\n$/,
    );
  });

  it("returns plain text as is", async () => {
    const { text } = await fetchThroughApi(`${origin}/plain.txt`);
    expect(text.startsWith("plain text, héllo\n\n[web_fetch")).toBe(true);
    expect(text).toContain("19 bytes of text, complete.");
  });

  it("keeps exactly 50 KiB: one byte less and exactly fit, one byte more is cut with a footer", async () => {
    for (const size of [WEB_FETCH_MAX_TEXT_BYTES - 1, WEB_FETCH_MAX_TEXT_BYTES]) {
      const { text, isError } = await fetchThroughApi(`${origin}/sized?bytes=${size}`);
      expect(isError).toBe(false);
      expect(text.startsWith(`${"a".repeat(size)}\n\n[web_fetch`)).toBe(true);
      expect(text).toContain(`${size} bytes of text, complete.`);
    }
    const { text } = await fetchThroughApi(`${origin}/sized?bytes=${WEB_FETCH_MAX_TEXT_BYTES + 1}`);
    expect(text.startsWith(`${"a".repeat(WEB_FETCH_MAX_TEXT_BYTES)}\n\n[web_fetch`)).toBe(true);
    expect(text).toContain(
      `content was truncated at 50 KB: kept the first ${WEB_FETCH_MAX_TEXT_BYTES} bytes of text and stopped downloading`,
    );
  });

  it("stops downloading an endless body once the text budget is proven exceeded", async () => {
    const { text, isError } = await fetchThroughApi(`${origin}/endless`);
    expect(isError).toBe(false);
    expect(text).toContain("content was truncated at 50 KB");
    const stats = async () =>
      (await (await fetch(`${origin}/endless-stats`)).json()) as { sent: number; closed: number };
    // The server hears the abort a moment after the answer, later on a loaded machine.
    await expect.poll(async () => (await stats()).closed).toBe(1);
    // Far below the 10 MiB download limit and the server's own 64 MiB stop: the probe aborted it.
    expect((await stats()).sent).toBeLessThan(8 * 1024 * 1024);
  });

  it("reads at most 10 MiB of markup: one byte less and exactly are complete, one more is cut", async () => {
    expect(WEB_FETCH_MAX_DOWNLOAD_BYTES).toBe(10 * 1024 * 1024);
    for (const size of [WEB_FETCH_MAX_DOWNLOAD_BYTES - 1, WEB_FETCH_MAX_DOWNLOAD_BYTES]) {
      const { text, isError } = await fetchThroughApi(`${origin}/markup?bytes=${size}`);
      expect(isError).toBe(false);
      expect(text).toMatch(/^start\n\nend\n\n\[web_fetch .*: 10 bytes of text, complete\.\]\n$/);
    }
    const { text, isError } = await fetchThroughApi(
      `${origin}/markup?bytes=${WEB_FETCH_MAX_DOWNLOAD_BYTES + 1}`,
    );
    expect(isError).toBe(false);
    expect(text.startsWith("start\n\nen\n\n[web_fetch")).toBe(true);
    expect(text).toContain(
      "stopped downloading after 10 MB of markup, so the end of the page is missing",
    );
  }, 60_000);

  it(`follows ${WEB_FETCH_MAX_REDIRECTS} redirects and refuses the sixth`, async () => {
    const ok = await fetchThroughApi(`${origin}/redirect/${WEB_FETCH_MAX_REDIRECTS}`);
    expect(ok.isError).toBe(false);
    expect(ok.text).toContain(`plain text, héllo\n\n[web_fetch ${origin}/plain.txt`);

    const tooMany = await fetchThroughApi(`${origin}/redirect/${WEB_FETCH_MAX_REDIRECTS + 1}`);
    expect(tooMany.isError).toBe(true);
    expect(tooMany.text).toContain("too many redirects: more than 5");
  });

  it("refuses redirects to other schemes", async () => {
    const { text, isError } = await fetchThroughApi(`${origin}/to-file`);
    expect(isError).toBe(true);
    expect(text).toContain("redirect target file:///etc/passwd is not http or https");
  });

  it("refuses non-text bodies with a clear error", async () => {
    const image = await fetchThroughApi(`${origin}/image.png`);
    expect(image.isError).toBe(true);
    expect(image.text).toContain("is image/png (8 bytes), not text");

    const untyped = await fetchThroughApi(`${origin}/untyped-binary`);
    expect(untyped.isError).toBe(true);
    expect(untyped.text).toContain("no Content-Type and looks binary");
  });

  it("keeps an error page's text and fails with its status", async () => {
    const { text, isError } = await fetchThroughApi(`${origin}/missing`);
    expect(isError).toBe(true);
    expect(text).toContain("no such page");
    expect(text).toContain("answered HTTP 404 Not Found");
  });
});

describe("web_fetch without WEB_FETCH_ALLOW_PRIVATE", () => {
  const writes: string[] = [];
  const out = {
    write: (t: string) => writes.push(t),
  } as unknown as ToolOutput;
  const context = {
    toolCallId: "wf",
    runId: "wf",
    turnId: "wf",
    sandbox: "default",
    setMemo() {},
    getMemo: () => undefined,
    env: { ...env, WEB_FETCH_ALLOW_PRIVATE: undefined } as Env,
  };

  for (const url of [
    `${origin}/plain.txt`,
    "http://localhost:9/",
    "http://[::1]/",
    "http://169.254.169.254/",
  ]) {
    it(`refuses ${url} before connecting`, async () => {
      const run = webFetchTool.execute!({
        params: webFetchTool.parse({ url }),
        out,
        signal: new AbortController().signal,
        context,
      });
      await expect(run).rejects.toThrow(
        /address; web_fetch refuses non-public addresses \(an operator can set WEB_FETCH_ALLOW_PRIVATE=1\)/,
      );
      expect(writes).toEqual([]);
    });
  }

  it('treats WEB_FETCH_ALLOW_PRIVATE="0" as not set', async () => {
    const zero = {
      ...context,
      env: { ...context.env, WEB_FETCH_ALLOW_PRIVATE: "0" } as Env,
    };
    const run = webFetchTool.execute!({
      params: webFetchTool.parse({ url: "http://127.0.0.1:9/" }),
      out,
      signal: new AbortController().signal,
      context: zero,
    });
    await expect(run).rejects.toThrow("URL http://127.0.0.1:9/ is a loopback address");
  });
});
