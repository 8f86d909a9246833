// Issue 26, decision 191: a tty call's terminal in the browser and a person taking it
// over, against the real Worker (wrangler dev), its DOs, a real sandbox host and its
// jail, in Debian's Chromium. The viewer shows the rows the model reads for a `less`
// session, a late read-only page too; a person with the attach link types into it and
// everyone sees who; the model's next read says a person typed; read-only, forged and
// bearer tokens cannot type; every bound of the routes at, under and over.
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { buildViewer } from "../../scripts/build-client.ts";
import { launchChromium } from "../support/e2e/chromium.ts";

const api = inject("apiUrl");
const token = inject("apiToken");
const bearer = { authorization: `Bearer ${token}`, "content-type": "application/json" };

async function call(
  method: string,
  url: string,
  body?: unknown,
  headers: Record<string, string> = bearer,
) {
  const res = await fetch(`${api}${url}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** Starts a tty call; answers its id once its first moment is over. */
async function startTty(command: string, size = { cols: 80, rows: 24 }) {
  const created = await call("POST", "/v1/invocations", {
    tool: "bash",
    args: { command, tty: true, ...size, timeout: 300 },
  });
  expect(created.status).toBe(201);
  return created.body as { id: string; viewUrl: string; subscribeToken: string };
}

/** Runs a tool over HTTP and answers its settled result's text and details. */
async function runTool(tool: string, args: unknown) {
  const created = await call("POST", "/v1/invocations", { tool, args });
  expect(created.status).toBe(201);
  const settled = await call("GET", `/v1/invocations/${created.body.id}/result?wait=30`);
  expect(settled.status).toBe(200);
  const result = settled.body as { content: { text: string }[]; details: Record<string, unknown> };
  return { text: result.content[0]?.text ?? "", details: result.details };
}

/** The rows the page's terminal shows, trailing blanks cut. */
async function pageRows(page: Page): Promise<string[]> {
  return page.evaluate(() =>
    [...document.querySelectorAll(".xterm-rows > div")].map((row) =>
      (row.textContent ?? "").replaceAll("\u00a0", " ").trimEnd(),
    ),
  );
}

/** The screen the model reads now (job_output's `details.screen`), its rows as they are. */
async function modelRows(id: string): Promise<string[]> {
  const read = await runTool("job_output", { id });
  return (read.details.screen as { lines: string[] }).lines;
}

/** The text of the page's element, or "" while it has none. */
function textOf(page: Page, selector: string): Promise<string> {
  return page.evaluate((s) => document.querySelector(s)?.textContent ?? "", selector);
}

function typeAs(id: string, attachToken: string, data: string) {
  return call(
    "POST",
    `/v1/invocations/${id}/terminal/input`,
    { data },
    {
      authorization: `Bearer ${attachToken}`,
      "content-type": "application/json",
    },
  );
}

let browser: Browser;
beforeAll(async () => {
  await buildViewer();
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

async function open(url: string): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await page.goto(url);
  await page.locator(".xterm-rows").waitFor();
  return page;
}

describe("a less session in the viewer", () => {
  it("shows the model's rows, live and to a late page; a person with the attach link types j and q; the model is told", async () => {
    const less = await startTty("seq 1 500 | less");
    // A page that opens after less drew its screen (a late join) shows it at once.
    const watcher = await open(less.viewUrl);
    await expect
      .poll(() => pageRows(watcher), { timeout: 20_000 })
      .toEqual(await modelRows(less.id));
    expect((await pageRows(watcher))[0]).toBe("1");
    await expect
      .poll(() => textOf(watcher, ".terminal-typing"), { timeout: 20_000 })
      .toContain("read-only");

    const grant = await call("POST", `/v1/invocations/${less.id}/attach`, { name: "ada" });
    expect(grant.status).toBe(200);
    const attachUrl = grant.body.attachUrl as string;
    expect(attachUrl).toContain("#attach=");
    const typist = await open(attachUrl);
    await expect
      .poll(() => textOf(typist, ".terminal-typing"), { timeout: 20_000 })
      .toContain("You hold the keyboard");
    await expect
      .poll(() => pageRows(typist), { timeout: 20_000 })
      .toEqual(await modelRows(less.id));

    // A read-only page's keys go nowhere: less stays at line 1.
    await watcher.locator(".terminal-screen").click();
    await watcher.keyboard.press("j");
    // The person's j scrolls one line, on both pages and in the model's screen alike.
    await typist.locator(".terminal-screen").click();
    await typist.keyboard.press("j");
    await expect.poll(async () => (await pageRows(watcher))[0], { timeout: 20_000 }).toBe("2");
    await expect
      .poll(() => textOf(watcher, ".terminal-note"), { timeout: 20_000 })
      .toContain("Last input: ada");

    // The model's next read says who typed, once, and its screen is the pages' rows.
    const read = await runTool("job_output", { id: less.id });
    expect(read.text).toContain(
      "[a person typed into this terminal since your last read: ada (1 byte)",
    );
    expect(read.details.typedByPeople).toEqual([expect.objectContaining({ by: "ada", bytes: 1 })]);
    // Each page paints the scroll as its updates arrive: both come to the model's screen.
    const modelScreen = (read.details.screen as { lines: string[] }).lines;
    await expect.poll(() => pageRows(watcher), { timeout: 20_000 }).toEqual(modelScreen);
    await expect.poll(() => pageRows(typist), { timeout: 20_000 }).toEqual(modelScreen);
    // One line down, not two: the read-only page's j never reached less.
    expect((await pageRows(watcher))[0]).toBe("2");
    const again = await runTool("job_output", { id: less.id });
    expect(again.text).not.toContain("a person typed");

    // q ends less: the call settles, done, and the page says the command ended.
    await typist.keyboard.press("q");
    const settled = await call("GET", `/v1/invocations/${less.id}/result?wait=20`);
    expect(settled.status).toBe(200);
    expect((settled.body.details as { exitCode: number }).exitCode).toBe(0);
    await expect
      .poll(() => textOf(typist, ".terminal-typing"), { timeout: 20_000 })
      .toContain("has ended");
    await typist.context().close();
    await watcher.context().close();
  });

  it("write_stdin's input is named the model's on every page", async () => {
    const repl = await startTty("python3 -q");
    const page = await open(repl.viewUrl);
    await runTool("write_stdin", { id: repl.id, text: "6*7\n" });
    await expect
      .poll(() => textOf(page, ".terminal-note"), { timeout: 20_000 })
      .toContain("Last input: the model (write_stdin)");
    await expect
      .poll(async () => (await pageRows(page)).join("\n"), { timeout: 20_000 })
      .toContain("42");
    await runTool("write_stdin", { id: repl.id, keys: ["C-d"] });
    await page.context().close();
  });
});

describe("a less session on the run page", () => {
  it("a call's entry draws its terminal: the rows the model reads", async () => {
    const runId = `tty-run-${Date.now()}`;
    const created = await call("POST", "/v1/invocations", {
      tool: "bash",
      args: { command: "seq 101 400 | less", tty: true, cols: 60, rows: 12, timeout: 300 },
      runId,
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await page.goto(created.body.runViewUrl as string);
    await page.locator(".call-row").first().click();
    await page.locator(".xterm-rows").waitFor();
    const model = await modelRows(id);
    expect(model[0]).toBe("101");
    await expect.poll(() => pageRows(page), { timeout: 20_000 }).toEqual(model);
    // The run's link alone is read-only: its q never reaches less.
    expect(await textOf(page, ".terminal-typing")).toContain("read-only");
    await page.locator(".terminal-screen").click();
    await page.keyboard.press("q");

    // The take-over link opens the run page on that call, with the keyboard.
    const grant = await call("POST", `/v1/invocations/${id}/attach`, { name: "grace" });
    const runAttachUrl = grant.body.runAttachUrl as string;
    expect(runAttachUrl).toContain(`/run/${runId}?token=`);
    expect(new URLSearchParams(new URL(runAttachUrl).hash.slice(1)).get("call")).toBe(id);
    const typist = await open(runAttachUrl);
    await expect
      .poll(() => textOf(typist, ".terminal-typing"), { timeout: 20_000 })
      .toContain("You hold the keyboard");
    expect((await modelRows(id))[0]).toBe("101");
    await expect.poll(async () => (await pageRows(typist))[0], { timeout: 20_000 }).toBe("101");
    expect(await pageRows(typist)).toEqual(await modelRows(id));
    // The person types q in the page and less ends: the call settles with exit 0.
    await typist.locator(".terminal-screen").click();
    await typist.keyboard.press("q");
    const settled = await call("GET", `/v1/invocations/${id}/result?wait=20`);
    expect(settled.status).toBe(200);
    expect((settled.body.details as { exitCode: number }).exitCode).toBe(0);
    expect((settled.body.details as { lastInput: { by: string } }).lastInput.by).toBe("grace");
    await typist.context().close();
    await context.close();
  });
});

describe("the size of a terminal a page holds", () => {
  /** The call's terminal size on its host (what the program sees), and in its details. */
  async function sizes(id: string) {
    const paint = await call("GET", `/v1/invocations/${id}/terminal`);
    const view = await call("GET", `/v1/invocations/${id}`);
    const details = (view.body.state as { details: Record<string, unknown> }).details;
    return {
      host: { cols: paint.body.cols as number, rows: paint.body.rows as number },
      held: details.terminalSize ?? null,
    };
  }

  it("follows the holder's window, shows everyone that size, tells the model, and comes back when they let go", async () => {
    const own = { cols: 80, rows: 24 };
    const tty = await startTty("stty -echo -icanon; cat > /dev/null", own);
    const watcher = await open(tty.viewUrl);
    const grant = await call("POST", `/v1/invocations/${tty.id}/attach`, { name: "ada" });
    const typist = await open(grant.body.attachUrl as string);
    // 1280×900: the window holds more than 80×24. The call's view is its published state,
    // which takes the held size at the next publication: wait for both.
    let wide = await sizes(tty.id);
    await expect
      .poll(
        async () => {
          wide = await sizes(tty.id);
          return wide.host.cols > own.cols && wide.held !== null;
        },
        { timeout: 20_000 },
      )
      .toBe(true);
    expect(wide.held).toEqual({ ...wide.host, by: "ada" });
    expect(wide.host.rows).toBeGreaterThan(own.rows);
    // Both pages draw at the held size; the model reads that a person resized it.
    await expect.poll(async () => (await pageRows(typist)).length).toBe(wide.host.rows);
    await expect.poll(async () => (await pageRows(watcher)).length).toBe(wide.host.rows);
    const read = await runTool("job_output", { id: tty.id });
    expect(read.text).toContain(
      `[the terminal is ${wide.host.cols}×${wide.host.rows}, not your 80×24: ada, who holds the keyboard, resized it`,
    );

    // A smaller window: the terminal follows it.
    await typist.setViewportSize({ width: 700, height: 500 });
    await expect
      .poll(async () => (await sizes(tty.id)).host.cols, { timeout: 20_000 })
      .toBeLessThan(wide.host.cols);
    const narrow = await sizes(tty.id);
    expect(narrow.host.rows).toBeLessThan(wide.host.rows);
    await expect.poll(async () => (await pageRows(watcher)).length).toBe(narrow.host.rows);

    // Let go: the call's own size, for the program, the details, every page and the model.
    await typist.getByRole("button", { name: "Let go" }).click();
    await expect
      .poll(async () => sizes(tty.id), { timeout: 20_000 })
      .toEqual({ host: own, held: null });
    await expect.poll(async () => (await pageRows(watcher)).length).toBe(own.rows);
    await expect.poll(async () => (await pageRows(typist)).length).toBe(own.rows);
    expect(await textOf(typist, ".terminal-typing")).toContain("You let go");
    expect((await runTool("job_output", { id: tty.id })).text).not.toContain("the terminal is");
    // A page that let go types nothing more.
    await typist.locator(".terminal-screen").click();
    await typist.keyboard.type("zz");
    const view = await call("GET", `/v1/invocations/${tty.id}`);
    const details = (view.body.state as { details: Record<string, unknown> }).details;
    expect(details.lastInput).toBeUndefined();

    // A holder that closes its page lets go too.
    const again = await open(grant.body.attachUrl as string);
    await expect
      .poll(async () => (await sizes(tty.id)).host.cols, { timeout: 20_000 })
      .toBeGreaterThan(own.cols);
    await again.close();
    await expect.poll(async () => (await sizes(tty.id)).host, { timeout: 20_000 }).toEqual(own);
    await again.context().close();
    await typist.context().close();
    await watcher.context().close();
    await call("POST", `/v1/invocations/${tty.id}/cancel`, {});
  });
});

describe("who may type, and the bounds", () => {
  let id: string;
  let attachToken: string;
  beforeAll(async () => {
    // Raw, silent input: whatever is typed is read and dropped.
    ({ id } = await startTty("stty -echo -icanon; cat > /dev/null", { cols: 100, rows: 30 }));
    const grant = await call("POST", `/v1/invocations/${id}/attach`, {});
    expect(grant.status).toBe(200);
    expect(grant.body.name).toBe("a person");
    attachToken = grant.body.attachToken as string;
  });
  afterAll(async () => {
    await call("POST", `/v1/invocations/${id}/cancel`, {});
  });

  it("refuses a read-only, forged, bearer, missing or another call's token, and changes nothing", async () => {
    const created = await call("GET", `/v1/invocations/${id}/links`);
    const subscribeToken = created.body.subscribeToken as string;
    const refused = async (auth: string | null) => {
      const headers: Record<string, string> = { "content-type": "application/json" };
      if (auth !== null) headers.authorization = auth;
      return (await call("POST", `/v1/invocations/${id}/terminal/input`, { data: "x" }, headers))
        .status;
    };
    expect(await refused(`Bearer ${subscribeToken}`)).toBe(403);
    expect(await refused(`Bearer ${attachToken.slice(0, -2)}xx`)).toBe(401);
    expect(await refused(`Bearer ${token}`)).toBe(403);
    expect(await refused(null)).toBe(401);
    expect(await refused("Bearer not-a-token")).toBe(401);
    expect(await refused(`Bearer ${token}x`)).toBe(401);
    const other = await startTty("sleep 60");
    const otherGrant = await call("POST", `/v1/invocations/${other.id}/attach`, {});
    expect(await refused(`Bearer ${otherGrant.body.attachToken}`)).toBe(403);
    await call("POST", `/v1/invocations/${other.id}/cancel`, {});
    // A subscribe token mints nothing, and the screen is a read route.
    const mint = await fetch(`${api}/v1/invocations/${id}/attach?token=${subscribeToken}`, {
      method: "POST",
      body: "{}",
    });
    expect(mint.status).toBe(403);
    const paint = await fetch(`${api}/v1/invocations/${id}/terminal?token=${subscribeToken}`);
    expect(paint.status).toBe(200);
    const view = await call("GET", `/v1/invocations/${id}`);
    const state = view.body.state as { details: Record<string, unknown> };
    expect(state.details.lastInput).toBeUndefined();
  });

  it("takes 64 KiB of keys and refuses a byte more, and an empty input", async () => {
    const at = await typeAs(id, attachToken, "a".repeat(64 * 1024));
    expect(at.status).toBe(200);
    expect(at.body.bytes).toBe(65_536);
    const over = await typeAs(id, attachToken, "a".repeat(64 * 1024 + 1));
    expect(over.status).toBe(400);
    expect(JSON.stringify(over.body)).toContain("at most 65,536 bytes");
    expect((await typeAs(id, attachToken, "")).status).toBe(400);
  });

  it("a sandbox token mints attach tokens for its own sandbox's calls only", async () => {
    const made = await call("POST", "/v1/sandboxes", { name: "takeover" });
    expect(made.status).toBe(201);
    const sandboxAuth = {
      authorization: `Bearer ${made.body.token}`,
      "content-type": "application/json",
    };
    // The default workspace's call is, for this token, a call that does not exist.
    const elsewhere = await call("POST", `/v1/invocations/${id}/attach`, {}, sandboxAuth);
    expect(elsewhere.status).toBe(404);
    const own = await call(
      "POST",
      "/v1/invocations",
      { tool: "bash", args: { command: "sleep 60", tty: true } },
      sandboxAuth,
    );
    expect(own.status).toBe(201);
    const grant = await call("POST", `/v1/invocations/${own.body.id}/attach`, {}, sandboxAuth);
    expect(grant.status).toBe(200);
    await call("DELETE", `/v1/sandboxes/${made.body.id}`);
  });

  it("names: 64 characters are a name, 65 are not, nor 'model'", async () => {
    const attachWith = (name: string) => call("POST", `/v1/invocations/${id}/attach`, { name });
    expect((await attachWith("a".repeat(64))).status).toBe(200);
    expect((await attachWith("a".repeat(65))).status).toBe(400);
    expect((await attachWith("model")).status).toBe(400);
    expect(
      (await call("POST", `/v1/invocations/${id}/attach`, { name: "x", extra: 1 })).status,
    ).toBe(400);
  });

  it("resizes within 20×5 to 400×200, refuses one cell past, and gives the call its own size back", async () => {
    const resize = (body: unknown) =>
      call("POST", `/v1/invocations/${id}/terminal/resize`, body, {
        authorization: `Bearer ${attachToken}`,
        "content-type": "application/json",
      });
    const screenSize = async () => {
      const paint = await call("GET", `/v1/invocations/${id}/terminal`);
      return { cols: paint.body.cols, rows: paint.body.rows };
    };
    expect((await resize({ cols: 20, rows: 5 })).status).toBe(200);
    expect(await screenSize()).toEqual({ cols: 20, rows: 5 });
    expect((await resize({ cols: 400, rows: 200 })).status).toBe(200);
    expect(await screenSize()).toEqual({ cols: 400, rows: 200 });
    for (const bad of [
      { cols: 19, rows: 5 },
      { cols: 401, rows: 5 },
      { cols: 80, rows: 4 },
      { cols: 80, rows: 201 },
      { restore: false },
    ]) {
      expect((await resize(bad)).status).toBe(400);
    }
    expect(await screenSize()).toEqual({ cols: 400, rows: 200 });
    const back = await resize({ restore: true });
    expect(back.body).toMatchObject({ cols: 100, rows: 30 });
    expect(await screenSize()).toEqual({ cols: 100, rows: 30 });
  });

  it("a call that is not a terminal cannot be attached to: 409", async () => {
    const plain = await call("POST", "/v1/invocations", {
      tool: "bash",
      args: { command: "sleep 30", background: true },
    });
    const refused = await call("POST", `/v1/invocations/${plain.body.id}/attach`, {});
    expect(refused.status).toBe(409);
    expect(JSON.stringify(refused.body)).toContain("is not a terminal");
    await call("POST", `/v1/invocations/${plain.body.id}/cancel`, {});
  });
});
