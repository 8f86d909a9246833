/// <reference types="node" />
// A real HTTP server on 127.0.0.1 that web_fetch tests fetch from (runs in Node, in
// vitest's globalSetup; its origin reaches the tests as the `webOrigin` inject key).
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { TestProject } from "vitest/node";

const PAGE = `<!doctype html><html><head><title>Tide &amp; Time</title>
<style>body { color: red }</style><script>var hidden = "do not show";</script></head>
<body><h1>Harbour  notes</h1><p>High water at <b>06:12</b>&nbsp;today &mdash; &#x263A;.</p>
<ul><li>First <a href="/plain.txt">the plain file</a></li><li>Second</li></ul>
<pre>  keep
    this</pre><noscript>enable js</noscript><p>End.</p></body></html>`;

/** Bytes written by the `/endless` responses, so a test can see the download stop. */
let endlessBytesSent = 0;
let endlessClosed = 0;

function endless(res: ServerResponse): void {
  res.writeHead(200, { "Content-Type": "text/plain; charset=utf-8" });
  const line = `${"x".repeat(1023)}\n`;
  const pump = () => {
    while (!res.destroyed) {
      endlessBytesSent += line.length;
      if (!res.write(line)) return void res.once("drain", pump);
      // Stop on our own after 64 MiB so a broken abort cannot hang the test run.
      if (endlessBytesSent >= 64 * 1024 * 1024) return void res.end();
    }
  };
  res.on("close", () => endlessClosed++);
  pump();
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const redirect = /^\/redirect\/(\d+)$/.exec(url.pathname);
    if (redirect) {
      const left = Number(redirect[1]);
      res.writeHead(302, { Location: left > 1 ? `/redirect/${left - 1}` : "/plain.txt" });
      return void res.end();
    }
    switch (url.pathname) {
      case "/page.html":
        res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" });
        return void res.end(PAGE);
      case "/plain.txt":
        res.writeHead(200, { "Content-Type": "text/plain; charset=utf-8" });
        return void res.end("plain text, héllo\n");
      case "/sized": {
        const bytes = Number(url.searchParams.get("bytes"));
        res.writeHead(200, { "Content-Type": "text/plain" });
        return void res.end("a".repeat(bytes));
      }
      case "/markup": {
        // HTML of exactly `bytes` bytes: almost all script, with text at both ends.
        const bytes = Number(url.searchParams.get("bytes"));
        const open = "<p>start</p><script>";
        const close = "</script>end";
        res.writeHead(200, { "Content-Type": "text/html" });
        return void res.end(open + "x".repeat(bytes - open.length - close.length) + close);
      }
      case "/endless":
        return endless(res);
      case "/endless-stats":
        res.writeHead(200, { "Content-Type": "application/json" });
        return void res.end(JSON.stringify({ sent: endlessBytesSent, closed: endlessClosed }));
      case "/image.png":
        res.writeHead(200, { "Content-Type": "image/png", "Content-Length": "8" });
        return void res.end(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
      case "/untyped-binary":
        res.writeHead(200, {});
        return void res.end(Buffer.from([0, 1, 2, 3, 0, 255]));
      case "/missing":
        res.writeHead(404, { "Content-Type": "text/plain" });
        return void res.end("no such page");
      case "/to-file":
        res.writeHead(301, { Location: "file:///etc/passwd" });
        return void res.end();
      default:
        res.writeHead(404);
        return void res.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  project.provide("webOrigin", `http://127.0.0.1:${port}`);
  return () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
}
