/**
 * Attach tokens: the write capability a person presents to type into one tty call's
 * terminal and resize it (decision 191), apart from the read-only subscribe token of
 * its viewer link. Same format, HMAC and checks as subscribe tokens
 * (subscribe-token.ts), minted for the subject `attach/<id>/<name>`: invocation ids
 * cannot contain `/`, so an attach token never opens a read route and a subscribe token
 * never types. The name is signed in it: whoever holds the token types as that name.
 */
import { ATTACH_TOKEN_TTL_SECONDS } from "../protocol/index.ts";
import { mintSubscribeToken, type SignedCheck, verifySignedToken } from "./subscribe-token.ts";

const ATTACH_SUBJECT = "attach/";

/**
 * Mints a token that types into invocation `id` as `name`, for an hour.
 * @example await mintAttachToken(env.SUBSCRIBE_SECRET, "call_1", "ada", Date.now()) // "v1.1764..."
 */
export function mintAttachToken(
  secret: string,
  id: string,
  name: string,
  nowMs: number,
): Promise<string> {
  return mintSubscribeToken(
    secret,
    `${ATTACH_SUBJECT}${id}/${name}`,
    nowMs,
    ATTACH_TOKEN_TTL_SECONDS,
  );
}

/** An attach token's check: its typist's name, or why it is refused (`other_subject`: a good token for anything else). */
export type AttachCheck =
  | { ok: true; name: string; expiresAt: number }
  | { ok: false; reason: Extract<SignedCheck, { ok: false }>["reason"] | "other_subject" };

/**
 * Checks an attach token for invocation `id`.
 * @example await verifyAttachToken(secret, token, "call_1", Date.now()) // { ok: true, name: "ada", ... }
 */
export async function verifyAttachToken(
  secret: string,
  token: string,
  id: string,
  nowMs: number,
): Promise<AttachCheck> {
  const check = await verifySignedToken(secret, token, nowMs);
  if (!check.ok) return check;
  const prefix = `${ATTACH_SUBJECT}${id}/`;
  if (!check.subject.startsWith(prefix)) return { ok: false, reason: "other_subject" };
  return { ok: true, name: check.subject.slice(prefix.length), expiresAt: check.expiresAt };
}
