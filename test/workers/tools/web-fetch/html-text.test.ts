import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeEntities, HtmlTextExtractor } from "../../../../src/tools/web-fetch/html-text.ts";

const BASE = new URL("https://docs.example/guide/intro.html");

/** Runs `chunks` of HTML through the extractor as one streamed response. */
async function toText(chunks: string[]): Promise<string> {
  let text = "";
  const extractor = new HtmlTextExtractor(BASE, (piece) => {
    text += piece;
  });
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
  const page = extractor
    .attach(new HTMLRewriter())
    .transform(new Response(body, { headers: { "Content-Type": "text/html; charset=utf-8" } }));
  await page.arrayBuffer();
  extractor.finish();
  return text;
}

const PAGE = `<!doctype html><html><head><title>Tide &amp; Time</title>
<style>body { color: red }</style><script>var hidden = "<p>not text</p>";</script></head>
<body><nav><a href="#main">skip</a> <a href="javascript:void(0)">js</a></nav>
<h1>Harbour   notes</h1>
<p>High water at <b>06:12</b>&nbsp;today &mdash; &#x263A; &#9731; &unknown; 1 &lt; 2.</p>
<ul><li>First <a href="../ref/tides.html?a=1&amp;b=2">tide tables</a></li><li>Second</li></ul>
<pre>  keep
    this</pre><noscript>enable js</noscript><table><tr><th>a</th><td>b</td></tr></table>
<p>Line<br>break <img src="x.png" alt="a chart"> <img src="y.png"></p><hr><p>End.</p></body></html>`;

const EXPECTED = [
  "Tide & Time",
  "",
  "skip js",
  "",
  "# Harbour notes",
  "",
  "High water at 06:12\u00a0today — ☺ ☃ &unknown; 1 < 2.",
  "",
  "- First [tide tables](https://docs.example/ref/tides.html?a=1&b=2)",
  "- Second",
  "",
  "  keep",
  "    this",
  "",
  " | a | b",
  "",
  "Line",
  "break [image: a chart]",
  "",
  "---",
  "",
  "End.",
].join("\n");

describe("HTML to text", () => {
  it("drops scripts and styles, breaks blocks into lines, keeps links and decodes entities", async () => {
    expect(await toText([PAGE])).toBe(EXPECTED);
  });

  it("gives the same text however the page is split into chunks", async () => {
    const bytes = PAGE.length;
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.integer({ min: 1, max: bytes - 1 }), { maxLength: 40 }),
        async (cuts) => {
          const sorted = [0, ...cuts.sort((a, b) => a - b), bytes];
          const chunks = sorted.slice(1).map((end, i) => PAGE.slice(sorted[i], end));
          expect(await toText(chunks)).toBe(EXPECTED);
        },
      ),
      { seed: 20261129, numRuns: 200 },
    );
  });

  it("decodes numeric and named references and leaves unknown ones alone", () => {
    expect(decodeEntities("&amp;&lt;&gt;&quot;&#39;&#x41;&#66;&copy;&bogus;&#0;&#xD800;")).toBe(
      "&<>\"'AB©&bogus;\ufffd\ufffd",
    );
  });
});
