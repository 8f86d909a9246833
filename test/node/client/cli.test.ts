import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliProcess, EXIT, runCli } from "../../../src/client/cli/commands.ts";
import { LivePrinter } from "../../../src/client/cli/live-printer.ts";
import { parseArgs, UsageError } from "../../../src/client/cli/parse-args.ts";
import { toolArgs } from "../../../src/client/cli/tool-args.ts";
import { type Subscription, ToolwireError } from "../../../src/client/index.ts";
import { emptyState } from "./fake-producer.ts";

const DONE = { kind: "done", words: "done" } as const;

function fakeProcess(env: Record<string, string> = {}, tty = false) {
  const out: string[] = [];
  const err: string[] = [];
  const proc: CliProcess = {
    stdout: { write: (t: string) => out.push(t), isTTY: tty },
    stderr: { write: (t: string) => err.push(t), isTTY: tty, columns: 80 },
    env,
    version: "9.9.9",
    onInterrupt: () => () => {},
  };
  return { proc, out: () => out.join(""), err: () => err.join("") };
}

describe("parseArgs", () => {
  it("reads run options before the tool and tool arguments after it", () => {
    const { command, connection } = parseArgs([
      "--url",
      "http://x",
      "run",
      "--id",
      "call_1",
      "--detach",
      "web_fetch",
      "--url",
      "https://example.com",
      "--ignore-case",
      "--limit=5",
      "--args",
      '{"a":1}',
    ]);
    expect(connection).toEqual({ url: "http://x" });
    expect(command).toEqual({
      kind: "run",
      tool: "web_fetch",
      toolCallId: "call_1",
      detach: true,
      transport: "socket",
      args: { url: "https://example.com", ignoreCase: true, limit: "5" },
      argsJson: '{"a":1}',
    });
  });

  it("reads run --run-id, and link <id> or link --run <runId>", () => {
    expect(parseArgs(["run", "--run-id", "r7", "bash", "--command", "ls"]).command).toMatchObject({
      kind: "run",
      runId: "r7",
      args: { command: "ls" },
    });
    expect(parseArgs(["link", "call_1"]).command).toEqual({ kind: "link", id: "call_1" });
    expect(parseArgs(["link", "--run", "r7"]).command).toEqual({ kind: "linkRun", runId: "r7" });
    expect(() => parseArgs(["link"])).toThrow(UsageError);
    expect(() => parseArgs(["link", "--run", "r7", "call_1"])).toThrow(/not both/);
    expect(() => parseArgs(["run", "--run-id"])).toThrow(/--run-id needs a value/);
  });

  it("has --help for every command, before or after it", () => {
    for (const name of ["run", "watch", "link", "result", "tools"] as const) {
      expect(parseArgs([name, "--help"]).command).toEqual({ kind: "help", topic: name });
      expect(parseArgs(["--help", name]).command).toEqual({ kind: "help", topic: name });
    }
    expect(parseArgs([]).command).toEqual({ kind: "help" });
    expect(parseArgs(["run", "bash", "--help"]).command).toEqual({ kind: "help", topic: "run" });
  });

  it("reads watch, result and tools", () => {
    expect(parseArgs(["watch", "c1", "--sse"]).command).toEqual({
      kind: "watch",
      id: "c1",
      transport: "sse",
    });
    expect(parseArgs(["result", "c1", "--wait", "2.5", "--json"]).command).toEqual({
      kind: "result",
      id: "c1",
      waitSeconds: 2.5,
      json: true,
    });
    expect(parseArgs(["tools", "--token", "t"])).toEqual({
      connection: { token: "t" },
      command: { kind: "tools", json: false },
    });
  });

  it("pairs each tool argument with the next word unless that is another --option", () => {
    const run = (...toolArgv: string[]) => {
      const { command } = parseArgs(["run", "bash", ...toolArgv]);
      return command.kind === "run" ? command.args : command;
    };
    expect(run("--offset", "-5", "--a", "--b", "--c=--d", "--e", "-xyz")).toEqual({
      offset: "-5",
      a: true,
      b: true,
      c: "--d",
      e: "-xyz",
    });
    expect(run("--url", "https://x", "--sse", "--id", "tool-arg")).toEqual({
      url: "https://x",
      sse: true,
      id: "tool-arg",
    });
    expect(run("--empty=")).toEqual({ empty: "" });
  });

  it("takes -h for --help, and -- to end a command's options", () => {
    expect(parseArgs(["watch", "-h"]).command).toEqual({ kind: "help", topic: "watch" });
    expect(parseArgs(["-h"]).command).toEqual({ kind: "help" });
    expect(parseArgs(["watch", "--sse", "--", "--odd-id"]).command).toEqual({
      kind: "watch",
      id: "--odd-id",
      transport: "sse",
    });
    expect(parseArgs(["--token=t", "--", "run", "--", "bash"])).toEqual({
      connection: { token: "t" },
      command: { kind: "run", tool: "bash", args: {}, detach: false, transport: "socket" },
    });
  });

  it("refuses mistakes with a message naming the problem", () => {
    const cases: [string[], RegExp][] = [
      [["frobnicate"], /Unknown command "frobnicate"/],
      [["run"], /needs a tool name/],
      [["run", "bash", "stray"], /Unexpected "stray"/],
      [["watch"], /watch needs an invocation id/],
      [["watch", "a", "b"], /takes one argument/],
      [["result", "a", "--wait", "-1"], /--wait must be a number of seconds/],
      [["tools", "--bogus", "1"], /Unknown option --bogus/],
      [["run", "--id", "bash"], /needs a tool name/],
      [["--token"], /--token needs a value/],
      [["--token", "--url", "http://x", "tools"], /--token needs a value/],
      [["--token=", "tools"], /--token needs a value/],
      [["run", "--detach=yes", "bash"], /--detach is a flag and takes no value \(got "yes"\)/],
      [["-x", "tools"], /Unknown option -x/],
      [["run", "bash", "-x"], /Unexpected "-x"/],
      [["run", "bash", "--command", "ls", "--", "x"], /Unexpected "--"/],
      [["run", "bash", "--args"], /--args needs a value/],
      [["watch", "--json", "c1"], /Unknown option --json/],
      [["tools", "extra"], /tools takes no arguments/],
    ];
    for (const [argv, message] of cases) {
      expect(() => parseArgs(argv), argv.join(" ")).toThrow(UsageError);
      expect(() => parseArgs(argv), argv.join(" ")).toThrow(message);
    }
  });
});

describe("toolArgs", () => {
  const schema = {
    type: "object",
    properties: {
      command: { type: "string" },
      timeout: { type: "integer" },
      literal: { type: "boolean" },
      items: { type: "array" },
    },
  };

  it("gives each value its parameter's type and lets pairs override --args", () => {
    expect(
      toolArgs(
        { command: "42", timeout: "30", literal: "true", items: '["a"]' },
        '{"command":"x","cwd":"sub"}',
        schema,
      ),
    ).toEqual({ command: "42", timeout: 30, literal: true, items: ["a"], cwd: "sub" });
  });

  it("guesses numbers and booleans only without a schema", () => {
    expect(
      toolArgs({ lines: "5", fail: "true", text: "hi", flag: true }, undefined, undefined),
    ).toEqual({
      lines: 5,
      fail: true,
      text: "hi",
      flag: true,
    });
  });

  it("refuses values that do not fit, and --args that is not a JSON object", () => {
    expect(() => toolArgs({ timeout: "soon" }, undefined, schema)).toThrow(
      /--timeout must be a number, got "soon"/,
    );
    expect(() => toolArgs({ literal: "yes" }, undefined, schema)).toThrow(
      /--literal must be true or false/,
    );
    expect(() => toolArgs({ command: true }, undefined, schema)).toThrow(/--command needs a value/);
    expect(() => toolArgs({}, "[1]", schema)).toThrow(/--args must be a JSON object/);
    expect(() => toolArgs({}, "{", schema)).toThrow(/--args is not valid JSON/);
  });
});

describe("LivePrinter", () => {
  function sub(
    text: string,
    totalBytes: number,
    status: Subscription["status"] = "live",
  ): Subscription {
    const state = emptyState();
    state.content[0] = { type: "text", text };
    state.truncation.totalBytes = totalBytes;
    state.truncation.totalLines = text.split("\n").length - 1;
    return { state, status } as Subscription;
  }

  it("prints each piece of a sliding window once, with no progress line when stderr is not a terminal", () => {
    const { proc, out, err } = fakeProcess();
    const printer = new LivePrinter(proc, Date.now());
    printer.update(sub("a\nb\n", 4));
    printer.update(sub("b\nc\n", 6));
    printer.update(sub("c\nd\n", 8, "reconnecting"));
    printer.update(sub("d\ne\n", 10));
    printer.finish(
      { status: "settled", state: sub("d\ne\n", 10).state, end: null, error: null },
      "call_1",
      DONE,
    );
    expect(out()).toBe("a\nb\nc\nd\ne\n");
    expect(err()).toBe("[toolwire] connection lost; reconnecting…\n[toolwire] reconnected\n");
  });

  it("says why after every third failed reconnect in a row, on a terminal and off one", () => {
    for (const tty of [false, true]) {
      const { proc, err } = fakeProcess({}, tty);
      const printer = new LivePrinter(proc, Date.now());
      const why = new ToolwireError("unreachable", "Could not reach ws://h/x: ECONNREFUSED.", 0);
      for (let attempt = 1; attempt <= 7; attempt++) {
        const failing = { ...sub("", 0, "reconnecting"), attempt, error: why } as Subscription;
        printer.update(failing);
        printer.update(failing);
      }
      const said = err().match(/still reconnecting after \d+ failed attempts: [^\n]*/g);
      expect(said).toEqual([
        "still reconnecting after 3 failed attempts: Could not reach ws://h/x: ECONNREFUSED.",
        "still reconnecting after 6 failed attempts: Could not reach ws://h/x: ECONNREFUSED.",
      ]);
    }
  });

  it('ends its output with a newline on a pipe too, as after "(no output)"', () => {
    const { proc, out } = fakeProcess();
    const printer = new LivePrinter(proc, Date.now());
    printer.update(sub("(no output)", 0));
    printer.finish(
      {
        status: "settled",
        state: sub("(no output)", 0).state,
        end: null,
        error: null,
      },
      "call_1",
      DONE,
    );
    expect(out()).toBe("(no output)\n");
  });

  it("keeps colours but shows a command's other control sequences as text on a terminal, not on a pipe", () => {
    const text = "\u001b[32mok\u001b[0m \u001b]52;c;aGk=\u0007\u001b[6n\n";
    const tty = fakeProcess({}, true);
    const printer = new LivePrinter(tty.proc, Date.now());
    printer.update(sub(text, text.length));
    printer.finish(
      {
        status: "settled",
        state: sub(text, text.length).state,
        end: null,
        error: null,
      },
      "call_1",
      DONE,
    );
    expect(tty.out()).toBe("\u001b[32mok\u001b[0m ␛]52;c;aGk=␇␛[6n\n");
    const pipe = fakeProcess();
    const piped = new LivePrinter(pipe.proc, Date.now());
    piped.update(sub(text, text.length));
    expect(pipe.out()).toBe(text);
  });

  it("times the summary from the call's own createdAt to its settledAt, not from when it was watched", () => {
    const { proc, err } = fakeProcess({}, true);
    const createdAt = Date.now() - 60_000;
    const printer = new LivePrinter(proc, createdAt);
    printer.update(sub("x\n", 2));
    printer.finish(
      { status: "settled", state: sub("x\n", 2).state, end: null, error: null },
      "call_1",
      DONE,
      createdAt + 6100,
    );
    expect(err()).toMatch(/✔ done in 6\.1 s\n$/);
  });

  it("says once, where the gap is, how much output it did not show", () => {
    const { proc, out, err } = fakeProcess();
    const printer = new LivePrinter(proc, Date.now(), "head");
    printer.update(sub("head\n", 5));
    // The head is full: later bytes are counted but never shown.
    printer.update(sub("head\n", 9));
    printer.update(sub("head\n", 15));
    expect(err()).toBe("");
    printer.finish(
      { status: "settled", state: sub("head\n", 15).state, end: null, error: null },
      "call_1",
      DONE,
    );
    expect(out()).toBe("head\n");
    expect(err()).toBe("[toolwire] 10 bytes of output not shown here (outside the window)\n");
  });

  it("keeps a progress line on a terminal stderr and clears it before output", () => {
    const { proc, out, err } = fakeProcess({}, true);
    const printer = new LivePrinter(proc, Date.now());
    printer.update(sub("hello\n", 6));
    printer.finish(
      { status: "settled", state: sub("hello\n", 6).state, end: null, error: null },
      "call_1",
      DONE,
    );
    expect(out()).toBe("hello\n");
    expect(err()).toMatch(/6 bytes · 1 line · \d+\.\d s/);
    expect(err()).toMatch(/✔ done in \d+\.\d s\n$/);
  });
});

describe("runCli without a Worker", () => {
  let server: Server;
  let url: string;
  beforeAll(async () => {
    // Some other web server: answers everything with an HTML 404.
    server = createServer((_, res) => {
      res.writeHead(404, { "content-type": "text/html" });
      res.end("<h1>Not Found</h1>");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("prints help and the version with exit 0", async () => {
    const { proc, out } = fakeProcess();
    expect(await runCli(["run", "--help"], proc)).toBe(EXIT.ok);
    expect(out()).toContain("Usage: toolwire run");
    const v = fakeProcess();
    expect(await runCli(["--version"], v.proc)).toBe(EXIT.ok);
    expect(v.out()).toBe("toolwire 9.9.9\n");
  });

  it("exits 2 on a usage error and points to help", async () => {
    const { proc, err } = fakeProcess();
    expect(await runCli(["watch"], proc)).toBe(EXIT.usage);
    expect(err()).toBe(
      'toolwire: watch needs an invocation id.\nRun "toolwire watch --help" for usage.\n',
    );
  });

  it("exits 3 without a token, naming TOOLWIRE_TOKEN", async () => {
    const { proc, err } = fakeProcess({ TOOLWIRE_URL: url });
    expect(await runCli(["tools"], proc)).toBe(EXIT.connection);
    expect(err()).toContain("set TOOLWIRE_TOKEN");
  });

  it("exits 3 when the URL is another server, saying so", async () => {
    const { proc, err } = fakeProcess({ TOOLWIRE_URL: url, TOOLWIRE_TOKEN: "t" });
    expect(await runCli(["tools"], proc)).toBe(EXIT.connection);
    expect(err()).toContain("answered HTTP 404 without a Toolwire error body");
    expect(err()).toContain("Check TOOLWIRE_URL");
  });

  it("exits 3 when nothing listens at the URL", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const { proc, err } = fakeProcess({ TOOLWIRE_TOKEN: "t" });
    expect(await runCli(["--url", `http://127.0.0.1:${port}`, "result", "c1"], proc)).toBe(
      EXIT.connection,
    );
    expect(err()).toContain(`Could not reach Toolwire at http://127.0.0.1:${port}`);
  });

  it("exits 2 on a URL that is not http(s)", async () => {
    const { proc, err } = fakeProcess({ TOOLWIRE_URL: "localhost:8787", TOOLWIRE_TOKEN: "t" });
    expect(await runCli(["tools"], proc)).toBe(EXIT.usage);
    expect(err()).toContain('"localhost:8787" is not an http(s) URL');
  });
});

describe("runCli against a Toolwire whose subscribe tokens expire", () => {
  const ids = { runId: "r", turnId: "t", toolCallId: "c1" };
  let server: Server;
  let url: string;
  let streams: { authorized: boolean; token: string | null }[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      const u = new URL(req.url ?? "/", "http://x");
      const json = (status: number, body: unknown) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(body));
      };
      const authorized = req.headers.authorization === "Bearer api";
      if (u.pathname === "/v1/tools") {
        return json(200, {
          tools: [
            {
              name: "bash",
              description: "",
              parameters: { type: "object", properties: { command: { type: "string" } } },
              output: { retain: "tail", maxBytes: 51200, maxLines: 2000 },
            },
          ],
        });
      }
      if (u.pathname === "/v1/invocations" && req.method === "POST") {
        const base = `${url}/v1/invocations/c1`;
        return json(201, {
          id: "c1",
          toolCallId: "c1",
          status: "running",
          subscribeToken: "short",
          socketUrl: `${base.replace("http", "ws")}/socket?token=short`,
          eventsUrl: `${base}/events?token=short`,
          viewUrl: `${url}/view/c1?token=short`,
        });
      }
      if (u.pathname === "/v1/invocations/c1/events") {
        const token = u.searchParams.get("token");
        streams.push({ authorized, token });
        // The first stream is served; by the second, an hour has passed and the subscribe token expired.
        if (!authorized && (token !== "short" || streams.length > 1)) {
          return json(401, {
            error: { code: "unauthorized", message: "The subscribe token has expired." },
          });
        }
        const state = emptyState();
        const text = streams.length === 1 ? "first\n" : "first\nsecond\n";
        state.content[0] = { type: "text", text };
        state.truncation.totalBytes = text.length;
        res.writeHead(200, { "content-type": "text/event-stream" });
        const send = (event: unknown) => res.write(`data: ${JSON.stringify(event)}\n\n`);
        send({ type: "tool_start", ...ids, toolName: "bash", args: {} });
        send({ type: "tool_update", ...ids, ops: [["r", state]] });
        if (streams.length > 1) send({ type: "tool_end", ...ids, isError: false });
        res.end();
        return;
      }
      json(404, { error: { code: "not_found", message: "no such route" } });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("run keeps following with the API token after a reconnect", async () => {
    streams = [];
    const { proc, out, err } = fakeProcess({ TOOLWIRE_URL: url, TOOLWIRE_TOKEN: "api" });
    expect(await runCli(["run", "--sse", "bash", "--command", "x"], proc)).toBe(EXIT.ok);
    expect(out()).toBe("first\nsecond\n");
    expect(err()).toBe("[toolwire] connection lost; reconnecting…\n[toolwire] reconnected\n");
    expect(streams).toEqual([
      { authorized: true, token: null },
      { authorized: true, token: null },
    ]);
  });
});
