/**
 * The settled invocation as an MCP `CallToolResult`: the bounded fold the HTTP API
 * returns, in the protocol's shape. One text block (the kept output and its footer),
 * the images, `isError`, `structuredContent` with the truncation totals and how the call
 * ended, and a `resource_link` plus `_meta` that lead a person to the live viewer.
 * The complete output stays a file in the sandbox (the footer names it); it is not
 * offered a second time as an MCP resource.
 */
import type { CallToolResult } from "@modelcontextprotocol/server";
import type { JsonValue } from "../core/chord/types.ts";
import type { SettledResult } from "../core/output/types.ts";
import type { InvocationLinks } from "./port.ts";

/** Key of Toolwire's entry in a result's (and a request's) `_meta`. */
export const META_KEY = "io.toolwire/invocation";

/** How the call ended, as `structuredContent.exit` states it. */
interface CallExit {
  /**
   * `completed`: ran to its end with success; `failed`: the tool reported an error;
   * `cancelled`: stopped on request; `timeout`: stopped by one of its time limits (`limit`).
   */
  status: "completed" | "failed" | "cancelled" | "timeout";
  /** With `timeout`: which limit, the wall-clock `timeout` or `idleTimeout` (no output for that long). */
  limit?: "timeout" | "idleTimeout";
  /** The process's exit code, for tools that run one (bash); `null` when killed by a signal. */
  exitCode?: number | null;
  signal?: string;
}

/** `structuredContent` of every Toolwire tool result. */
interface StructuredFold {
  invocationId: string;
  truncation: SettledResult["truncation"];
  exit: CallExit;
  [key: string]: unknown;
}

function detailField(details: JsonValue, name: string): JsonValue | undefined {
  if (typeof details !== "object" || details === null || Array.isArray(details)) return undefined;
  return details[name];
}

/**
 * How the call ended: a cancel, a failure, or success, with the exit code and signal the
 * tool recorded in its details.
 * @example exitOf(result, false) // { status: "failed", exitCode: 3 }
 */
export function exitOf(result: SettledResult, cancelled: boolean): CallExit {
  const exitCode = detailField(result.details, "exitCode");
  const signal = detailField(result.details, "signal");
  const stoppedBy = detailField(result.details, "stoppedBy");
  const limit = stoppedBy === "timeout" || stoppedBy === "idleTimeout" ? stoppedBy : undefined;
  const status = cancelled
    ? "cancelled"
    : limit
      ? "timeout"
      : result.isError
        ? "failed"
        : "completed";
  return {
    status,
    ...(limit && !cancelled ? { limit } : {}),
    ...(typeof exitCode === "number" || exitCode === null ? { exitCode } : {}),
    ...(typeof signal === "string" ? { signal } : {}),
  };
}

/**
 * The `CallToolResult` of a settled invocation.
 * @example foldResult("call_1", result, false, links).structuredContent.truncation.totalLines
 */
export function foldResult(
  invocationId: string,
  result: SettledResult,
  cancelled: boolean,
  links: InvocationLinks,
): CallToolResult & { structuredContent: StructuredFold } {
  const structured: StructuredFold = {
    invocationId,
    truncation: result.truncation,
    exit: exitOf(result, cancelled),
  };
  return {
    content: [
      ...result.content,
      {
        type: "resource_link",
        uri: links.viewUrl,
        name: `toolwire-${invocationId}`,
        title: "Live view of this call",
        description: "Toolwire's live viewer for this invocation (the link is valid for 1 hour).",
        mimeType: "text/html",
      },
    ],
    isError: result.isError,
    structuredContent: structured,
    _meta: { [META_KEY]: { id: invocationId, viewUrl: links.viewUrl } },
  };
}
