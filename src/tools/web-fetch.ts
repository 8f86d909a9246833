/**
 * `web_fetch { url }`: fetches a page from the Durable Object and returns it as text.
 * Only http/https; loopback and private addresses are refused unless
 * `WEB_FETCH_ALLOW_PRIVATE` is set; redirects are followed by hand (at most 5, each
 * target checked like the first). The body streams through a head `TextRetainer`
 * (HTML converted to text on the way) and the download is aborted as soon as the
 * retainer proves the text will not fit. See docs/decisions/053-web-fetch.md.
 */
import { z } from "zod";
import { formatSize } from "../core/output/index.ts";
import { TextRetainer, type TextRetention } from "../core/retention/index.ts";
import { hostAddressClass } from "../protocol/address-class.ts";
import { OUTPUT_BYTES, workerConfig } from "../protocol/index.ts";
import { defineTool } from "./registry.ts";
import { HtmlTextExtractor } from "./web-fetch/html-text.ts";

/** Text kept from one page: one call's default output budget. */
export const WEB_FETCH_MAX_TEXT_BYTES = OUTPUT_BYTES;
/** Redirects followed before giving up. */
export const WEB_FETCH_MAX_REDIRECTS = 5;
/** Raw bytes read at most, for pages whose markup dwarfs their text: 10 MiB. */
export const WEB_FETCH_MAX_DOWNLOAD_BYTES = 10 * 1024 * 1024;
/** Room after the kept text for the footer and an error line (URLs in them are shortened). */
const FOOTER_ROOM = 2048;

const HTML_TYPES = /^(text\/html|application\/xhtml\+xml)$/;
const TEXT_TYPES =
  /^(text\/.+|application\/(json|xml|javascript|ecmascript|x-ndjson|ndjson|yaml|x-yaml|toml|x-sh|sql|graphql|x-www-form-urlencoded|[a-z0-9.+-]+\+(json|xml)))$/;

/** A URL for a message: at most 300 characters. */
function shown(url: URL | string): string {
  const href = typeof url === "string" ? url : url.href;
  return href.length > 300 ? `${href.slice(0, 299)}…` : href;
}

/** Throws unless `url` is http(s) and (unless allowed) public. */
function checkTarget(url: URL, env: Env, what: string): void {
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new Error(`${what} ${shown(url)} is not http or https; web_fetch only fetches web pages`);
  }
  const reason = hostAddressClass(url);
  if (reason !== null && !workerConfig(env).webFetchAllowPrivate) {
    throw new Error(
      `${what} ${shown(url)} is a ${reason} address; web_fetch refuses non-public addresses (an operator can set WEB_FETCH_ALLOW_PRIVATE=1)`,
    );
  }
}

/** Fetches `start`, following redirects by hand; returns the final response and URL. */
async function fetchFollowing(
  start: URL,
  env: Env,
  signal: AbortSignal,
): Promise<{ response: Response; url: URL }> {
  let url = start;
  const chain = [shown(url)];
  for (let hops = 0; ; hops++) {
    checkTarget(url, env, hops === 0 ? "URL" : "redirect target");
    const response = await fetch(url, {
      redirect: "manual",
      signal,
      headers: {
        Accept: "text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.8,*/*;q=0.1",
        "User-Agent": "Toolwire-web_fetch/1.0",
      },
    });
    const location = response.headers.get("Location");
    if (response.status < 300 || response.status >= 400 || location === null) {
      return { response, url };
    }
    await response.body?.cancel();
    if (hops === WEB_FETCH_MAX_REDIRECTS) {
      throw new Error(
        `too many redirects: more than ${WEB_FETCH_MAX_REDIRECTS} (${chain.join(" -> ")} -> ${shown(location)}); fetch the final URL directly`,
      );
    }
    url = new URL(location, url);
    chain.push(shown(url));
  }
}

function mediaType(response: Response): { type: string; charset: string } {
  const header = response.headers.get("Content-Type") ?? "";
  const [type = "", ...params] = header.split(";").map((p) => p.trim());
  const charset =
    params
      .find((p) => /^charset=/i.test(p))
      ?.slice(8)
      .replace(/"/g, "") ?? "utf-8";
  return { type: type.toLowerCase(), charset };
}

/** Decodes the body as `charset`; with `sniff`, refuses a body that looks binary. */
function textDecoder(charset: string, sniff: boolean): TransformStream<Uint8Array, string> {
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(charset);
  } catch {
    decoder = new TextDecoder("utf-8");
  }
  let first = sniff;
  return new TransformStream<Uint8Array, string>({
    transform(chunk, controller) {
      if (first && chunk.subarray(0, 512).includes(0)) {
        throw new Error(
          "the response has no Content-Type and looks binary; web_fetch reads HTML and text only",
        );
      }
      first = false;
      controller.enqueue(decoder.decode(chunk, { stream: true }));
    },
    flush(controller) {
      controller.enqueue(decoder.decode());
    },
  });
}

interface PageText {
  kept: TextRetention;
  /** Raw body bytes read. */
  rawBytes: number;
  /** The body was longer than `WEB_FETCH_MAX_DOWNLOAD_BYTES` and was cut there. */
  downloadCapped: boolean;
}

/**
 * Streams the body into a head retainer (through the HTML extractor for HTML) and stops
 * reading, aborting the download, once the retainer asks to stop.
 */
async function readText(
  response: Response,
  url: URL,
  type: string,
  charset: string,
  abortDownload: () => void,
): Promise<PageText> {
  const retainer = new TextRetainer({
    kind: "head",
    maxBytes: WEB_FETCH_MAX_TEXT_BYTES,
    stop: "stopWhenFull",
  });
  let stopped = false;
  const feed = (text: string) => {
    if (!stopped && retainer.push(text).shouldStop) stopped = true;
  };

  let rawBytes = 0;
  let downloadCapped = false;
  const body = (response.body ?? new ReadableStream<Uint8Array>()).pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        const room = WEB_FETCH_MAX_DOWNLOAD_BYTES - rawBytes;
        if (chunk.byteLength <= room) {
          rawBytes += chunk.byteLength;
          controller.enqueue(chunk);
          return;
        }
        if (room > 0) controller.enqueue(chunk.subarray(0, room));
        rawBytes += room;
        downloadCapped = true;
        controller.terminate();
      },
    }),
  );

  const isHtml = HTML_TYPES.test(type);
  const extractor = isHtml ? new HtmlTextExtractor(url, feed) : undefined;
  const reader: ReadableStreamDefaultReader<unknown> = extractor
    ? (
        extractor
          .attach(new HTMLRewriter())
          .transform(new Response(body, { headers: response.headers })).body ?? new ReadableStream()
      ).getReader()
    : body.pipeThrough(textDecoder(charset, type === "")).getReader();

  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (!isHtml) feed(value as string);
    if (stopped) break;
  }
  if (stopped) {
    await reader.cancel();
    abortDownload();
  } else {
    extractor?.finish();
  }
  return { kept: retainer.finish(), rawBytes, downloadCapped };
}

function formatBytes(n: number): string {
  if (n >= 1024 * 1024) return `${+(n / (1024 * 1024)).toFixed(1)} MB`;
  return n >= 1024 ? `${+(n / 1024).toFixed(1)} KB` : `${n} bytes`;
}

/** The last lines of the output: what was fetched, how much was kept, how to get more. */
function footer(url: URL, type: string, status: string, page: PageText): string {
  const { text, truncated } = page.kept;
  const keptBytes = new TextEncoder().encode(text).byteLength;
  const lead = text === "" || text.endsWith("\n") ? "\n" : "\n\n";
  const head = `${lead}[web_fetch ${shown(url)} (${type || "no content type"}, HTTP ${status}): `;
  if (truncated) {
    return `${head}content was truncated at ${formatBytes(WEB_FETCH_MAX_TEXT_BYTES)}: kept the first ${keptBytes} bytes of text and stopped downloading. To read more, fetch a more specific URL, or download the page in the sandbox (bash: curl -sL URL -o page) and use read/grep on it.]\n`;
  }
  if (page.downloadCapped) {
    return `${head}${keptBytes} bytes of text; stopped downloading after ${formatBytes(page.rawBytes)} of markup, so the end of the page is missing. Download it in the sandbox (bash: curl -sL URL -o page) to read all of it.]\n`;
  }
  return `${head}${keptBytes} bytes of text, complete.]\n`;
}

export const webFetchTool = defineTool({
  name: "web_fetch",
  description: `Fetches an http(s) URL and returns its text (HTML converted to readable text, links kept as [text](url)). Keeps the first ${formatSize(WEB_FETCH_MAX_TEXT_BYTES)} of text; the footer says when the page was cut.`,
  params: z.strictObject({
    url: z
      .url({ protocol: /^https?$/, error: "must be an absolute http:// or https:// URL" })
      .max(8192)
      .describe("The page to fetch (http or https)"),
  }),
  output: {
    retain: "head",
    maxBytes: WEB_FETCH_MAX_TEXT_BYTES + FOOTER_ROOM,
    // Every line has at least one byte, so a line cap equal to the byte cap never binds first.
    maxLines: WEB_FETCH_MAX_TEXT_BYTES + FOOTER_ROOM,
  },
  replaySafe: true,
  async execute({ params, out, signal, context }) {
    const download = new AbortController();
    const onAbort = () => download.abort(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    try {
      const start = new URL(params.url);
      const { response, url } = await fetchFollowing(start, context.env, download.signal);
      const { type, charset } = mediaType(response);
      if (type !== "" && !HTML_TYPES.test(type) && !TEXT_TYPES.test(type)) {
        await response.body?.cancel();
        const size = response.headers.get("Content-Length");
        throw new Error(
          `${shown(url)} is ${type}${size ? ` (${size} bytes)` : ""}, not text; web_fetch reads HTML and text only (download binary files with bash in the sandbox)`,
        );
      }
      const page = await readText(response, url, type, charset, () =>
        download.abort(new Error("web_fetch kept all the text it can return")),
      );
      const status = `${response.status} ${response.statusText}`.trim();
      out.write(page.kept.text);
      out.write(footer(url, type, status, page));
      if (!response.ok) throw new Error(`${shown(url)} answered HTTP ${status}`);
    } finally {
      signal.removeEventListener("abort", onAbort);
    }
  },
});
