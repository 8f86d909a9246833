import { describe, expect, it } from "vitest";
import { mintRunToken } from "../../../src/worker/run-token.ts";
import { mintSubscribeToken } from "../../../src/worker/subscribe-token.ts";
import { call, create, expectError, freshId, SUBSCRIBE_SECRET } from "./helpers.ts";

/** What Chromium sends when a person opens a link. */
const BROWSER = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";

function asPerson(path: string): Promise<Response> {
  return call(path, { headers: { Accept: BROWSER } }, false);
}

/** The page's status, title (h1) and whole text, with a check that it is an HTML page. */
async function page(res: Response) {
  const html = await res.text();
  expect(res.headers.get("Content-Type")).toBe("text/html; charset=utf-8");
  expect(res.headers.get("Cache-Control")).toBe("no-store");
  expect(res.headers.get("Content-Security-Policy")).toContain("default-src 'none'");
  return { status: res.status, title: /<h1>(.*)<\/h1>/.exec(html)?.[1], html };
}

async function external(label: string) {
  return create({ tool: "external", toolCallId: freshId(label), args: { name: "x" } });
}

describe("pages for people", () => {
  it("an expired viewer link says so and names toolwire link <id>", async () => {
    const { id } = await external("expired");
    const token = await mintSubscribeToken(SUBSCRIBE_SECRET, id, Date.now() - 7200_000);
    const shown = await page(await asPerson(`/view/${id}?token=${token}`));
    expect(shown.status).toBe(401);
    expect(shown.title).toBe("This link has expired");
    expect(shown.html).toContain(
      `Ask for a new one with <code>toolwire link ${id}</code>, or from your agent.`,
    );
    // The API keeps its JSON for the same request without Accept: text/html.
    const message = await expectError(
      await call(`/view/${id}?token=${token}`, {}, false),
      401,
      "unauthorized",
    );
    expect(message).toContain("expired");
  });

  it("a link with no token, a cut token, a forged token, another call's token: each says what happened", async () => {
    const { id } = await external("bad");
    const other = await external("other");
    const good = await mintSubscribeToken(SUBSCRIBE_SECRET, id, Date.now());
    const forged = await mintSubscribeToken("another-secret", id, Date.now());
    const otherToken = await mintSubscribeToken(SUBSCRIBE_SECRET, other.id, Date.now());
    const cases: [string, number, string][] = [
      [`/view/${id}`, 401, "This link is incomplete"],
      [`/view/${id}?token=${good.slice(0, 20)}`, 401, "This link is damaged"],
      [`/view/${id}?token=${forged}`, 401, "This link is damaged"],
      [`/view/${id}?token=${otherToken}`, 403, "This link is for another call"],
    ];
    for (const [path, status, title] of cases) {
      const shown = await page(await asPerson(path));
      expect([path, shown.status, shown.title]).toEqual([path, status, title]);
      expect(shown.html).toContain(
        status === 403 ? "toolwire link &#60;id&#62;" : `toolwire link ${id}`,
      );
    }
  });

  it("a valid token for a call that does not exist (retired) is a 404 page, and 404 JSON for the API", async () => {
    const id = freshId("never");
    const token = await mintSubscribeToken(SUBSCRIBE_SECRET, id, Date.now());
    const shown = await page(await asPerson(`/view/${id}?token=${token}`));
    expect(shown.status).toBe(404);
    expect(shown.title).toBe("No call with this id");
    expect(shown.html).toContain(`There is no call <code>${id}</code> here`);
    await expectError(await call(`/view/${id}?token=${token}`, {}, false), 404, "not_found");
  });

  it("escapes whatever the address carries: a script in the id is text, not markup", async () => {
    const res = await asPerson(`/view/${encodeURIComponent("<script>alert(1)</script>")}?token=x`);
    const shown = await page(res);
    expect(shown.status).toBe(400);
    expect(shown.title).toBe("This is not a call id");
    expect(shown.html).not.toContain("<script>");
    expect(shown.html).toContain("&#60;script&#62;");
  });

  it("an address with no id or one too many parts is a page too", async () => {
    for (const path of ["/view/", "/view", "/view/a/b"]) {
      const shown = await page(await asPerson(path));
      expect([path, shown.status]).toEqual([path, 404]);
      expect(shown.title).toMatch(/^No call/);
    }
  });

  it("the run page: expired and missing tokens, and a token for another run", async () => {
    const runId = freshId("run");
    await create({ tool: "external", toolCallId: freshId("in-run"), runId, args: { name: "x" } });
    const expired = await mintRunToken(SUBSCRIBE_SECRET, runId, Date.now() - 7200_000);
    const other = await mintRunToken(SUBSCRIBE_SECRET, `${runId}-x`, Date.now());
    const cases: [string, number, string][] = [
      [`/run/${runId}?token=${expired}`, 401, "This link has expired"],
      [`/run/${runId}`, 401, "This link is incomplete"],
      [`/run/${runId}?token=${other}`, 403, "This link is for another run"],
    ];
    for (const [path, status, title] of cases) {
      const shown = await page(await asPerson(path));
      expect([path, shown.status, shown.title]).toEqual([path, status, title]);
      expect(shown.html).toContain(
        status === 403 ? "toolwire link --run &#60;runId&#62;" : `toolwire link --run ${runId}`,
      );
    }
    await expectError(await call(`/run/${runId}?token=${expired}`, {}, false), 401, "unauthorized");
  });

  it("API clients that ask for JSON first keep JSON, even on a page path", async () => {
    const res = await call(
      "/view/x?token=y",
      { headers: { Accept: "application/json, text/html" } },
      false,
    );
    expect(res.headers.get("Content-Type")).toContain("application/json");
  });
});

describe("GET /v1/invocations/:id/links and /v1/runs/:runId/links", () => {
  it("gives a fresh viewer link that opens the page, with the API token only", async () => {
    const { id, subscribeToken } = await external("links");
    const res = await call(`/v1/invocations/${id}/links`);
    expect(res.status).toBe(200);
    const links = (await res.json()) as { id: string; viewUrl: string };
    expect(links.id).toBe(id);
    const opened = await call(
      new URL(links.viewUrl).pathname + new URL(links.viewUrl).search,
      {},
      false,
    );
    expect(opened.status).toBe(200);
    // A subscribe token must not mint its successor: it would never expire.
    await expectError(
      await call(`/v1/invocations/${id}/links?token=${subscribeToken}`, {}, false),
      403,
      "forbidden",
    );
    await expectError(await call(`/v1/invocations/${freshId("nope")}/links`), 404, "not_found");
  });

  it("gives a fresh run page link for a run that has calls, and 404 for one without", async () => {
    const runId = freshId("run-links");
    await create({ tool: "external", toolCallId: freshId("in-run"), runId, args: { name: "x" } });
    const res = await call(`/v1/runs/${runId}/links`);
    expect(res.status).toBe(200);
    const { runViewUrl } = (await res.json()) as { runViewUrl: string };
    const url = new URL(runViewUrl);
    expect((await call(url.pathname + url.search, {}, false)).status).toBe(200);
    await expectError(await call(`/v1/runs/${runId}/links`, {}, false), 401, "unauthorized");
    await expectError(await call(`/v1/runs/${freshId("empty")}/links`), 404, "not_found");
  });
});
