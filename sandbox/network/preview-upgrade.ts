/**
 * The way in for WebSockets (decision 182): an `Upgrade` request to
 * `/sandboxes/:id/v1/preview/:port/<path>` is checked (the host's bearer token, the
 * sandbox, the port), its head rewritten as `preview-head.ts` says, and then the two
 * connections are joined byte for byte: the app answers the handshake itself and every
 * frame passes untouched, both ways. When the sandbox goes, its bridge goes and so does
 * the connection; the Worker tells the visitor why.
 */
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { bearerToken, secretMatches } from "../../src/protocol/index.ts";
import { PREVIEW_REFUSAL_HEADER, portProblem } from "../../src/protocol/preview.ts";
import { errorBody, SandboxError } from "../errors.ts";
import type { SandboxSet } from "../sandboxes/sandbox-set.ts";
import { appHeaders, requestHead } from "./preview-head.ts";
import { connectApp } from "./preview-target.ts";

const PREVIEW_PATH = /^\/sandboxes\/([^/]+)\/v1\/preview\/(\d{1,5})(\/[^?]*)?(\?.*)?$/;

/**
 * The node server's `upgrade` listener. Upgrades anywhere else are refused with a 404.
 * @example server.on("upgrade", previewUpgrade(sandboxes, config.token));
 */
export function previewUpgrade(
  set: SandboxSet,
  token: string,
): (req: IncomingMessage, visitor: Duplex, head: Buffer) => void {
  return (req, visitor, head) => {
    visitor.on("error", () => visitor.destroy());
    join(set, token, req, visitor, head).catch((err: unknown) => {
      const known =
        err instanceof SandboxError ? err : new SandboxError("internal", (err as Error).message);
      const body = JSON.stringify(errorBody(known));
      visitor.end(
        `HTTP/1.1 ${known.status} ${known.code}\r\ncontent-type: application/json\r\n${PREVIEW_REFUSAL_HEADER}: ${known.code}\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
      );
    });
  };
}

async function join(
  set: SandboxSet,
  token: string,
  req: IncomingMessage,
  visitor: Duplex,
  head: Buffer,
): Promise<void> {
  const match = PREVIEW_PATH.exec(req.url ?? "");
  if (!match) throw new SandboxError("not_found", `no upgrade route ${req.url}`);
  const presented = bearerToken(req.headers.authorization ?? "");
  if (presented === null || !(await secretMatches(presented, token))) {
    throw new SandboxError("unauthorized", "bearer token missing or not this host's token");
  }
  const [, id = "", portText = "", rest = "/", search = ""] = match;
  const port = Number(portText);
  const problem = portProblem(port);
  if (problem) throw new SandboxError("bad_request", problem);
  const app = await connectApp(set, id, port);
  // Ends pass on as ends, so nothing buffered is cut; an error tears both down.
  app.on("error", () => visitor.destroy());
  visitor.on("error", () => app.destroy());
  app.write(
    requestHead(req.method ?? "GET", `${rest}${search}`, appHeaders(req.rawHeaders, port, true)),
  );
  if (head.length > 0) app.write(head);
  app.pipe(visitor);
  visitor.pipe(app);
}
