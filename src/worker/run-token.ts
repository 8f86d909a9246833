/**
 * Run tokens: what a browser presents in `?token=` to follow one run (its run page and
 * run routes). Same format, HMAC, lifetime and rules as subscribe tokens
 * (subscribe-token.ts), minted for the subject `run/<runId>`: invocation ids cannot
 * contain `/`, so a run token never opens an invocation and a subscribe token never
 * opens a run (docs/decisions/122).
 */
import { mintSubscribeToken, verifySubscribeToken } from "./subscribe-token.ts";

const RUN_SUBJECT = "run/";

/**
 * Mints a read-only token for run `runId`.
 * @example await mintRunToken(env.SUBSCRIBE_SECRET, "run-7", Date.now()) // "v1.1764..."
 */
export function mintRunToken(secret: string, runId: string, nowMs: number): Promise<string> {
  return mintSubscribeToken(secret, `${RUN_SUBJECT}${runId}`, nowMs);
}

/** Checks a token for run `runId`; a token for anything else is `other_invocation`. */
export function verifyRunToken(secret: string, token: string, runId: string, nowMs: number) {
  return verifySubscribeToken(secret, token, `${RUN_SUBJECT}${runId}`, nowMs);
}
