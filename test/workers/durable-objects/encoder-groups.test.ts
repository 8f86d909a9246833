import { evictDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { connectSocket, startRequest, stubFor, textOf, value, waitFor } from "./helpers.ts";

const bash = { name: "bash", input: { command: "make" } };

/** A subscriber that also keeps each message as it arrived. */
async function raw(name: string) {
  const sub = await connectSocket(name);
  const texts: string[] = [];
  sub.socket.addEventListener("message", (e) => texts.push(e.data as string));
  return Object.assign(sub, { texts });
}

async function publish(name: string, text: string) {
  const stub = stubFor(name);
  value(await stub.produce([{ write: text }, { details: [["s", ["n"], text.length]] }]));
  await stub.flushOutput();
}

describe("sockets that share a base share its encoder", () => {
  it("sockets greeted at the same seq get the same bytes; later ones and resynced ones converge too", async () => {
    const name = "groups";
    value(await stubFor(name).start(startRequest(name, "external", bash)));
    await publish(name, "one\n");
    const same = [await raw(name), await raw(name), await raw(name)];
    await publish(name, "two\n");
    const later = await raw(name);
    await publish(name, "three\n");
    same[2]!.socket.send(JSON.stringify({ type: "resync" }));
    await waitFor("the resync's base", () => (same[2]!.bases === 2 ? true : undefined));
    for (let i = 0; i < 5; i++) await publish(name, `line ${i}\n`);
    const expected = value(await stubFor(name).view()).state;
    for (const sub of [...same, later]) await sub.converge(expected);
    await waitFor("every update", () => (same[1]!.texts.length === 9 ? true : undefined));
    // tool_start, the shared base and every delta: byte for byte the same for the first two.
    expect(same[0]!.texts).toEqual(same[1]!.texts);
    expect(later.bases).toBe(1);
  });

  it("after a wake-up from hibernation every socket gets one fresh base, then deltas", async () => {
    const name = "groups-wake";
    value(await stubFor(name).start(startRequest(name, "external", bash)));
    await publish(name, "before\n");
    const subs = [await raw(name), await raw(name)];
    await evictDurableObject(stubFor(name));
    await publish(name, "after\n");
    await publish(name, "again\n");
    const expected = value(await stubFor(name).view()).state;
    for (const sub of subs) {
      await sub.converge(expected);
      expect(sub.bases).toBe(2);
      expect(textOf(sub.state)).toBe("before\nafter\nagain\n");
    }
    expect(subs[0]!.texts.slice(-2)).toEqual(subs[1]!.texts.slice(-2));
  });
});
