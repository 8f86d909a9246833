/**
 * Sandbox tokens (decision 250): the credential `POST /v1/sandboxes` answers with, good
 * for that one sandbox and nothing else. The Worker mints and checks them; the pi
 * extension and the CLI read which sandbox a token names, so that a token alone is enough.
 *
 * Format: `sbt1.<sandbox id>.<nonce>.<base64url(HMAC-SHA256)>`, the MAC taken with
 * `SUBSCRIBE_SECRET` over `toolwire-sandbox-token:v1:<sandbox id>:<nonce>`. The nonce is
 * 16 random bytes kept in the sandbox's record: a new one (`POST /v1/sandboxes/:id/token`)
 * kills every token signed over the old, and the record ending kills them all. WebCrypto
 * only, so it runs in the Workers runtime and in Node.
 */
import { bytesEqual } from "./bearer.ts";
import { CREATED_SANDBOX_ID } from "./sandbox.ts";
import { hmacSha256, toBase64Url } from "./signing.ts";

const PREFIX = "sbt1";
const NONCE = /^[A-Za-z0-9_-]{22}$/;
const MAC = /^[A-Za-z0-9_-]{43}$/;

/** A sandbox token's parts, as read from its text (not yet checked). */
interface SandboxTokenParts {
  sandbox: string;
  nonce: string;
  mac: string;
}

/**
 * A new random nonce for a sandbox's record (16 bytes, base64url).
 * @example newTokenNonce() // "q1f0…" (22 characters)
 */
export function newTokenNonce(): string {
  return toBase64Url(crypto.getRandomValues(new Uint8Array(16)));
}

function sign(secret: string, sandbox: string, nonce: string): Promise<Uint8Array> {
  return hmacSha256(secret, `toolwire-sandbox-token:v1:${sandbox}:${nonce}`);
}

/**
 * The token of `sandbox` signed over `nonce`.
 * @example await mintSandboxToken(env.SUBSCRIBE_SECRET, "sbx_default_…", nonce) // "sbt1.sbx_default_….…"
 */
export async function mintSandboxToken(
  secret: string,
  sandbox: string,
  nonce: string,
): Promise<string> {
  return `${PREFIX}.${sandbox}.${nonce}.${toBase64Url(await sign(secret, sandbox, nonce))}`;
}

/**
 * The parts of a text shaped like a sandbox token, or null for anything else (the
 * operator's `API_TOKEN` among them). Says nothing about whether it is valid.
 * @example parseSandboxToken("sbt1.sbx_default_0123456789abcdef0123.<nonce>.<mac>")?.sandbox // "sbx_default_0123456789abcdef0123"
 */
export function parseSandboxToken(token: string): SandboxTokenParts | null {
  const parts = token.split(".");
  if (parts.length !== 4 || parts[0] !== PREFIX) return null;
  const [, sandbox = "", nonce = "", mac = ""] = parts;
  if (!CREATED_SANDBOX_ID.test(sandbox) || !NONCE.test(nonce) || !MAC.test(mac)) return null;
  return { sandbox, nonce, mac };
}

/**
 * The sandbox a token names, or null when it is not a sandbox token (the CLI and the pi
 * extension run their calls there when no sandbox is named).
 * @example sandboxOfToken(process.env.TOOLWIRE_TOKEN ?? "") // "sbx_default_…" or null
 */
export function sandboxOfToken(token: string): string | null {
  return parseSandboxToken(token)?.sandbox ?? null;
}

/**
 * Whether the token's MAC is the one `secret` gives its sandbox and nonce. Whether the
 * nonce is still the sandbox's current one is its record's to say.
 * @example await signatureHolds(secret, parseSandboxToken(token)!) // true
 */
export async function signatureHolds(secret: string, parts: SandboxTokenParts): Promise<boolean> {
  const expected = toBase64Url(await sign(secret, parts.sandbox, parts.nonce));
  const utf8 = new TextEncoder();
  return bytesEqual(utf8.encode(expected), utf8.encode(parts.mac));
}
