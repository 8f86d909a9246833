/**
 * A stream's forks and its source (decision 205): a fork tells its source when it is made
 * and when it goes; a source with live forks is soft-deleted by `DELETE` (its name kept,
 * `410`, its bytes dropped: every fork has its own copy) and released when its last fork
 * goes, which tells its own source in turn (the cascade).
 */
import { SECURITY_HEADERS, streamError } from "../../../src/protocol/durable-streams/index.ts";
import type { ForkAnswer, ForkRequest } from "./stream-fork.ts";
import type { StreamForks } from "./stream-forks.ts";
import { expired, type ForkOrigin, type StreamLog, type StreamMeta } from "./stream-log.ts";

/** What one stream's object asks of another's (the Invocation Durable Object's RPC). */
export interface StreamPeers {
  /** The prefix a fork of `fork.source` inherits. */
  forkSource(fork: ForkRequest): Promise<ForkAnswer>;
  /** Tells `origin`'s stream that this one, made as `generation`, is a fork of it. */
  forkMade(origin: ForkOrigin, generation: string): Promise<void>;
  /** Tells `origin`'s stream that this one's making `generation` is gone. */
  forkGone(origin: ForkOrigin, generation: string): Promise<void>;
  /** Whether the stream `name` is still the making `generation` (not deleted, not expired). */
  forkAlive(name: string, generation: string): Promise<boolean>;
}

/** Forks a held stream asks after per request: a bound on the RPCs one request makes. */
const FORKS_ASKED = 16;

/** This object's stream with its forks and a way to reach other streams. */
export interface StreamLineage {
  log: StreamLog;
  forks: StreamForks;
  peers: StreamPeers;
}

/** The answer to a request of a stream deleted while its forks live, for every method but `PUT`. */
export function softDeleted(): Response {
  return streamError(
    "gone",
    "this stream was deleted; its forks still live, and its name is free again once they are all deleted",
    SECURITY_HEADERS,
  );
}

/**
 * `DELETE`: a stream without live forks is forgotten (its source told); one with forks is
 * soft-deleted.
 */
export async function deleteStream(lineage: StreamLineage): Promise<Response> {
  const meta = lineage.log.meta();
  if (!meta) return streamError("not_found", "no such stream");
  if (meta.deleted) return softDeleted();
  if (lineage.forks.count() > 0) lineage.log.softDelete();
  else await release(lineage, meta);
  return new Response(null, { status: 204, headers: SECURITY_HEADERS });
}

/**
 * Forgets the stream for good (deleted, expired, or its last fork gone) and tells its
 * source. The telling is best effort: this stream is gone either way, and a source that
 * missed it stays soft-deleted (decision 205).
 */
export async function release(lineage: StreamLineage, meta: StreamMeta): Promise<void> {
  lineage.log.delete();
  if (meta.origin) {
    await lineage.peers.forkGone(meta.origin, meta.generation).catch(() => undefined);
  }
}

/**
 * Whether a soft-deleted stream is still held: it asks its forks (up to `FORKS_ASKED`)
 * whether they live, forgets those that do not (a fork that expired with no request to
 * notice it never said so), and is released when none is left. A fork that cannot be
 * asked counts as alive.
 */
export async function stillHeld(lineage: StreamLineage, meta: StreamMeta): Promise<boolean> {
  const asked = lineage.forks.some(FORKS_ASKED);
  const alive = await Promise.all(
    asked.map((fork) => lineage.peers.forkAlive(fork.name, fork.generation).catch(() => true)),
  );
  asked.forEach((fork, i) => {
    if (!alive[i]) lineage.forks.remove(fork.name, fork.generation);
  });
  if (lineage.forks.count() > 0) return true;
  await release(lineage, meta);
  return false;
}

/** The fork side of `stillHeld`: this stream is still the making `generation`. */
export function isAlive(log: StreamLog, generation: string): boolean {
  const meta = log.meta();
  return meta !== null && meta.generation === generation && !expired(meta, Date.now());
}

/** The source side of `forkMade`: `fork` (made as `forkGeneration`) is a fork of this making. */
export function forkMade(
  lineage: StreamLineage,
  generation: string,
  fork: string,
  forkGeneration: string,
): void {
  // A source made again since the fork copied it has no part in that fork.
  if (lineage.log.meta()?.generation !== generation) return;
  lineage.forks.add(fork, forkGeneration);
}

/** The source side of `forkGone`: a soft-deleted source whose last fork went is released. */
export async function forkGone(
  lineage: StreamLineage,
  generation: string,
  fork: string,
  forkGeneration: string,
): Promise<void> {
  const meta = lineage.log.meta();
  if (meta?.generation !== generation) return;
  lineage.forks.remove(fork, forkGeneration);
  if (meta.deleted && lineage.forks.count() === 0) await release(lineage, meta);
}
