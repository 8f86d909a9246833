/**
 * What each hibernatable socket remembers across wake-ups (`serializeAttachment`), read
 * through a cache: a publication reads every socket's attachment, and deserializing it
 * each time cost as much as the send. The cache is filled on first read and replaced on
 * every write, so it never disagrees with the attachment; it lives in memory only, so
 * after a wake-up from hibernation it starts empty and refills from the attachments.
 */

import type { SandboxCredential } from "../../../src/protocol/index.ts";

/** One socket's attachment. */
interface SocketAttachment {
  subscriberId: string;
  /** When its subscribe token expires (epoch ms); null for the bearer token. */
  expiresAt?: number | null;
  /** The sandbox token it was opened with, checked at each heartbeat (decision 253). */
  credential?: SandboxCredential | null;
}

/**
 * @example
 * const attachments = new SocketAttachments();
 * attachments.write(ws, { subscriberId, expiresAt }); // serializes it and caches it
 * attachments.read(ws)?.subscriberId; // from the cache, no deserialization
 */
export class SocketAttachments {
  readonly #cache = new WeakMap<WebSocket, SocketAttachment | null>();

  /** The socket's attachment, deserialized at most once per instance. */
  read(ws: WebSocket): SocketAttachment | null {
    if (this.#cache.has(ws)) return this.#cache.get(ws) ?? null;
    const attachment = (ws.deserializeAttachment() as SocketAttachment | null) ?? null;
    this.#cache.set(ws, attachment);
    return attachment;
  }

  /** Writes the socket's attachment and caches it. */
  write(ws: WebSocket, attachment: SocketAttachment): void {
    ws.serializeAttachment(attachment);
    this.#cache.set(ws, attachment);
  }
}
