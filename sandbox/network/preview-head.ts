/**
 * The request head an app in a sandbox sees through a preview URL (decision 182): the
 * visitor's headers, minus what belongs to the hop (the sandbox host's bearer token, the
 * connection's own headers), with the visitor's own `Authorization` put back and `Host`
 * naming the app's port on the sandbox's loopback, as if it were opened there directly.
 * Neither the preview token nor the host's token ever reaches the app.
 */
import {
  PREVIEW_AUTHORIZATION_HEADER,
  PREVIEW_REFUSAL_HEADER,
} from "../../src/protocol/preview.ts";

/** Headers that describe one connection, not the request (RFC 9110 §7.6.1), and ours. */
const HOP_HEADERS = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authorization",
  "te",
  "trailer",
  "transfer-encoding",
  "host",
  "authorization",
  PREVIEW_AUTHORIZATION_HEADER,
]);

/**
 * The headers to send the app on `port`, as name/value pairs (repeats kept), from the
 * request's raw pairs. `upgrade` keeps `Connection: Upgrade` and `Upgrade` for a WebSocket.
 * @example appHeaders(req.rawHeaders, 8000, false)
 */
export function appHeaders(raw: string[], port: number, upgrade: boolean): [string, string][] {
  const out: [string, string][] = [["Host", `localhost:${port}`]];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!;
    const value = raw[i + 1]!;
    const lower = name.toLowerCase();
    if (lower === PREVIEW_AUTHORIZATION_HEADER) out.push(["Authorization", value]);
    else if (!HOP_HEADERS.has(lower) && !(lower === "upgrade" && !upgrade)) out.push([name, value]);
  }
  out.push(["Connection", upgrade ? "Upgrade" : "close"]);
  return out;
}

/**
 * Whether an app's response header stops at the sandbox host: the hop's own, and the
 * refusal mark, which only the host may set (an app cannot pass its answer off as one).
 */
export function isHopHeader(name: string): boolean {
  const lower = name.toLowerCase();
  return (
    lower === "connection" ||
    lower === "keep-alive" ||
    lower === "transfer-encoding" ||
    lower === PREVIEW_REFUSAL_HEADER
  );
}

/**
 * An HTTP/1.1 request head, ready for the wire.
 * @example requestHead("GET", "/", [["Host", "localhost:8000"]])
 */
export function requestHead(method: string, target: string, headers: [string, string][]): string {
  const lines = headers.map(([name, value]) => `${name}: ${value.replace(/[\r\n]/g, "")}`);
  return `${method} ${target} HTTP/1.1\r\n${lines.join("\r\n")}\r\n\r\n`;
}
