/**
 * Opening one subscription: which kind (`/socket` or `/events`), where it starts (a
 * base, or the batches after a resume id) and when its subscribe token expires. The
 * audience it joins, and every send after the greeting, is Subscribers' job.
 */

import type { ToolStartEvent } from "../../../src/core/events/index.ts";
import type { ToolOutputState } from "../../../src/core/output/types.ts";
import {
  apiError,
  errorResponse,
  sandboxCredentialOf,
  tokenExpiryOf,
} from "../../../src/protocol/index.ts";
import type { BatchLog } from "../output/batch-log.ts";
import { resumeAfterOf, resumeBatches } from "./resume.ts";
import type { Subscribers } from "./subscribers.ts";

/**
 * A subscription (the Worker checked the subscribe token): `/socket` upgrades to a
 * hibernatable WebSocket, `/events` opens an SSE stream. Either starts with
 * `tool_start` and a base `tool_update`, or, for a subscriber resuming after an id
 * (`?after=` or `Last-Event-ID`), the batches of `log` after it (resume.ts); a settled
 * invocation (`ended`) adds `tool_end`. A subscribe token's expiry, forwarded by the
 * Worker, ends the subscription at the first event after it (docs/decisions/112).
 *
 * @example
 * return openSubscription(subscribers, request, start, state, log, null); // 101 or SSE
 */
export function openSubscription(
  subscribers: Subscribers,
  request: Request,
  start: ToolStartEvent,
  state: ToolOutputState,
  log: BatchLog,
  ended: { isError: boolean } | null,
): Response {
  const path = new URL(request.url).pathname;
  const seq = log.lastSeq;
  const expiresAt = tokenExpiryOf(request);
  const credential = sandboxCredentialOf(request);
  const after = resumeAfterOf(request);
  // A settled log is cleared: a resuming subscriber then gets the result's base.
  const resumed =
    after === null || ended ? null : resumeBatches(log, after, JSON.stringify(state).length);
  if (path === "/events") {
    const resume = after !== null && resumed ? { after, batches: resumed } : null;
    return subscribers.openEventStream(start, state, seq, ended, resume, expiresAt, credential);
  }
  if (path !== "/socket") {
    return errorResponse(
      apiError("not_found", `no subscription at ${path}; use /socket or /events`),
    );
  }
  if (request.headers.get("Upgrade")?.toLowerCase() !== "websocket") {
    return errorResponse(apiError("upgrade_required", "Expected Upgrade: websocket"), {
      Upgrade: "websocket",
    });
  }
  return subscribers.acceptSocket(start, state, ended, { seq, resumed, expiresAt, credential });
}
