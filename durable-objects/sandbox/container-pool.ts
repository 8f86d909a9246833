/**
 * The warm pool of the container backend (decision 230): `CONTAINER_POOL_SIZE` containers
 * of the sandbox image, started ahead and assigned to no one. Each is started under the id
 * of a sandbox not made yet (its container DO's name), so a create that takes one makes
 * its sandbox under that id, and routing still finds the container from the id alone
 * (decision 144). A taken container is claimed for good: it never comes back, so no
 * sandbox finds another's files. Its alarm is the one clock: it refills one container at a
 * time, retires a container that waited an hour, and forgets one that stopped.
 * One object, `CONTAINER_POOL_NAME`.
 */
import { DurableObject } from "cloudflare:workers";
import { CONTAINER_PLACEMENT } from "../../src/execenv/sandbox-routing.ts";
import {
  type ContainerPoolApi,
  type ContainerPoolView,
  newSandboxId,
  workerConfig,
} from "../../src/protocol/index.ts";
import { containerOf } from "./container.ts";

/** How soon after a take the refill starts: the taken sandbox's first command goes first. */
const REFILL_DELAY_MS = 1000;

/** How soon a refill that failed (the container did not start) is tried again. */
const RETRY_MS = 5000;

/**
 * How long a pooled container waits for a sandbox before it is replaced: it keeps the
 * image and settings it was started with, so a change reaches new sandboxes within this.
 */
const POOL_MAX_AGE_MS = 3_600_000;

interface Ready {
  id: string;
  /** When it answered, ready to be taken. */
  readyAt: number;
}

const READY = "ready:";
/** A container being started; one left behind by an alarm that died is shut down. */
const STARTING = "starting:";

export class ContainerPoolDO extends DurableObject<Env> implements ContainerPoolApi {
  async take(): Promise<string | null> {
    if (workerConfig(this.env).containerPoolSize === 0) return null;
    for (;;) {
      const entry = (await this.#ready())[0];
      if (!entry) break;
      // Out of the pool before anything is awaited: no other take can get it.
      await this.ctx.storage.delete(READY + entry.id);
      if (Date.now() >= entry.readyAt + POOL_MAX_AGE_MS) {
        this.ctx.waitUntil(containerOf(this.env, entry.id).shutdown());
        continue;
      }
      // A container that died unnoticed is refused here (and shut down): take the next.
      if ((await containerOf(this.env, entry.id).claim(entry.id)).ok) {
        await this.#refillIn(REFILL_DELAY_MS);
        return entry.id;
      }
    }
    await this.#refillIn(REFILL_DELAY_MS);
    return null;
  }

  async fill(): Promise<void> {
    const { ready, starting } = await this.view();
    if (ready + starting < workerConfig(this.env).containerPoolSize) await this.#refillIn(0);
  }

  async drop(sandboxId: string): Promise<void> {
    if (!(await this.ctx.storage.get(READY + sandboxId))) return;
    await this.ctx.storage.delete(READY + sandboxId);
    await this.#refillIn(REFILL_DELAY_MS);
  }

  async view(): Promise<ContainerPoolView> {
    const starting = await this.ctx.storage.list({ prefix: STARTING });
    return {
      size: workerConfig(this.env).containerPoolSize,
      ready: (await this.#ready()).length,
      starting: starting.size,
    };
  }

  /** Retires what aged or is past the size, then starts containers one at a time until full. */
  override async alarm(): Promise<void> {
    const size = workerConfig(this.env).containerPoolSize;
    // Alarms never overlap: a container still "starting" now was left by one that died.
    for (const key of (await this.ctx.storage.list({ prefix: STARTING })).keys()) {
      await this.#retire(key.slice(STARTING.length), key);
    }
    const ready = await this.#ready();
    for (const [i, entry] of ready.entries()) {
      const surplus = ready.length - i > size;
      if (surplus || Date.now() >= entry.readyAt + POOL_MAX_AGE_MS) {
        await this.#retire(entry.id, READY + entry.id);
      }
    }
    const filled = await this.#fill(size);
    const left = await this.#ready();
    const next =
      !filled || left.length < size
        ? Date.now() + (filled ? REFILL_DELAY_MS : RETRY_MS)
        : left[0] && left[0].readyAt + POOL_MAX_AGE_MS;
    if (next) await this.ctx.storage.setAlarm(next);
  }

  /** Starts containers until `size` are ready; false when one did not start (logged). */
  async #fill(size: number): Promise<boolean> {
    while ((await this.#ready()).length < size) {
      const id = newSandboxId(CONTAINER_PLACEMENT);
      await this.ctx.storage.put(STARTING + id, Date.now());
      const warmed = await containerOf(this.env, id).warm(id);
      await this.ctx.storage.delete(STARTING + id);
      if (!warmed.ok) {
        console.warn(`the warm pool could not start a container: ${warmed.error.message}`);
        return false;
      }
      await this.ctx.storage.put<Ready>(READY + id, { id, readyAt: Date.now() });
    }
    return true;
  }

  async #retire(id: string, key: string): Promise<void> {
    await this.ctx.storage.delete(key);
    await containerOf(this.env, id).shutdown();
  }

  /** The ready containers, the one waiting longest first. */
  async #ready(): Promise<Ready[]> {
    const rows = await this.ctx.storage.list<Ready>({ prefix: READY });
    return [...rows.values()].sort((a, b) => a.readyAt - b.readyAt);
  }

  /** Sets the alarm to `ms` from now, unless it is set to ring sooner. */
  async #refillIn(ms: number): Promise<void> {
    const at = Date.now() + ms;
    const set = await this.ctx.storage.getAlarm();
    if (set === null || set > at) await this.ctx.storage.setAlarm(at);
  }
}
