/**
 * Preview tokens (decision 182): the capability in a preview URL, for one port of one
 * sandbox, until a time. A token must be one DNS label (the host form
 * `<token>.localhost:8787`; browsers lower-case host names), so it is 58 characters of
 * lower-case base32 over 36 bytes:
 *
 *   sandbox hex (10) | placement tag (4) | port (2) | expiry, unix s (4) | nonce (4) | MAC (12)
 *
 * The placement (a `SANDBOXES` name, up to 32 characters, or `container`) does not fit, so
 * the token carries the first 4 bytes of its SHA-256 and the Worker finds the name among
 * its own. The MAC (HMAC-SHA256 with `SUBSCRIBE_SECRET`, domain-separated, cut to 96 bits)
 * covers the whole sandbox id, port, expiry and nonce. The nonce is the grant's in the
 * Sandbox DO: a revoked or replaced URL no longer matches it.
 */
import { bytesEqual } from "./bearer.ts";
import { hmacSha256 } from "./signing.ts";

const PAYLOAD_BYTES = 24;
const MAC_BYTES = 12;
const ALPHABET = "abcdefghijklmnopqrstuvwxyz234567";
/** A token as it appears in a URL: also a valid DNS label. */
export const PREVIEW_TOKEN = /^[a-z2-7]{58}$/;

/** What a token grants. */
export interface PreviewClaim {
  sandboxId: string;
  port: number;
  /** Unix seconds. */
  expiresAt: number;
  nonce: number;
}

type PreviewCheck =
  | { ok: true; claim: PreviewClaim }
  | { ok: false; reason: "malformed" | "bad_signature" | "expired" };

/**
 * The token for `claim`.
 * @example await mintPreviewToken(secret, { sandboxId, port: 8000, expiresAt, nonce }) // "k3…" (58 chars)
 */
export async function mintPreviewToken(secret: string, claim: PreviewClaim): Promise<string> {
  const match = /^sbx_(.+)_([0-9a-f]{20})$/.exec(claim.sandboxId);
  if (!match) throw new Error(`not a sandbox id: ${claim.sandboxId}`);
  const bytes = new Uint8Array(PAYLOAD_BYTES + MAC_BYTES);
  const view = new DataView(bytes.buffer);
  bytes.set(hexBytes(match[2]!), 0);
  bytes.set(await placementTag(match[1]!), 10);
  view.setUint16(14, claim.port);
  view.setUint32(16, claim.expiresAt);
  view.setUint32(20, claim.nonce);
  bytes.set(await mac(secret, claim), PAYLOAD_BYTES);
  return base32(bytes);
}

/**
 * Checks a token: well-formed, its placement one of `placements`, signed with `secret`,
 * not expired at `nowMs`, in that order.
 * @example await verifyPreviewToken(secret, token, ["default", "container"], Date.now())
 */
export async function verifyPreviewToken(
  secret: string,
  token: string,
  placements: string[],
  nowMs: number,
): Promise<PreviewCheck> {
  const bytes = PREVIEW_TOKEN.test(token) ? unbase32(token) : null;
  if (!bytes || bytes.length !== PAYLOAD_BYTES + MAC_BYTES)
    return { ok: false, reason: "malformed" };
  const view = new DataView(bytes.buffer);
  const tag = bytes.subarray(10, 14);
  let placement: string | null = null;
  for (const name of placements) {
    if (bytesEqual(await placementTag(name), tag)) placement = name;
  }
  // An unknown placement is a token this Worker did not make, as a bad MAC is.
  if (placement === null) return { ok: false, reason: "bad_signature" };
  const hex = [...bytes.subarray(0, 10)].map((b) => b.toString(16).padStart(2, "0")).join("");
  const claim: PreviewClaim = {
    sandboxId: `sbx_${placement}_${hex}`,
    port: view.getUint16(14),
    expiresAt: view.getUint32(16),
    nonce: view.getUint32(20),
  };
  if (!bytesEqual(await mac(secret, claim), bytes.subarray(PAYLOAD_BYTES))) {
    return { ok: false, reason: "bad_signature" };
  }
  if (claim.expiresAt * 1000 <= nowMs) return { ok: false, reason: "expired" };
  return { ok: true, claim };
}

async function mac(secret: string, c: PreviewClaim): Promise<Uint8Array> {
  const full = await hmacSha256(
    secret,
    `toolwire-preview:v1:${c.sandboxId}:${c.port}:${c.expiresAt}:${c.nonce}`,
  );
  return full.subarray(0, MAC_BYTES);
}

async function placementTag(placement: string): Promise<Uint8Array> {
  const digest = await crypto.subtle.digest(
    "SHA-256",
    new TextEncoder().encode(`toolwire-placement:${placement}`),
  );
  return new Uint8Array(digest, 0, 4);
}

function hexBytes(hex: string): Uint8Array {
  return Uint8Array.from({ length: hex.length / 2 }, (_, i) =>
    Number.parseInt(hex.slice(2 * i, 2 * i + 2), 16),
  );
}

function base32(bytes: Uint8Array): string {
  let out = "";
  let bits = 0;
  let value = 0;
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += ALPHABET[(value << (5 - bits)) & 31];
  return out;
}

function unbase32(text: string): Uint8Array | null {
  const out: number[] = [];
  let bits = 0;
  let value = 0;
  for (const ch of text) {
    value = ((value << 5) | ALPHABET.indexOf(ch)) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  // The last character's spare bits must be zero, or two spellings would name one token.
  if ((value & ((1 << bits) - 1)) !== 0) return null;
  return Uint8Array.from(out);
}
