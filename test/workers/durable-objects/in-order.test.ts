// The Sandbox DO's directory lines land in the order they were made (decision 275):
// InOrder with writes that take different times, some not waited for, one failing.
import { describe, expect, it } from "vitest";
import { InOrder } from "../../../durable-objects/sandbox/in-order.ts";

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("InOrder", () => {
  it("a write made later never lands before one made earlier, however long the earlier takes", async () => {
    const landed: string[] = [];
    const failures: unknown[] = [];
    const order = new InOrder((err) => failures.push(err));
    // A use's line (slow, not waited for), then an end's line (fast, waited for).
    void order.run(async () => {
      await pause(60);
      landed.push("active");
    });
    await order.run(async () => {
      landed.push("deleted");
    });
    expect(landed).toEqual(["active", "deleted"]);
    expect(failures).toEqual([]);
  });

  it("a write that fails is told and rejects its own caller; the writes after it still run", async () => {
    const landed: string[] = [];
    const failures: unknown[] = [];
    const order = new InOrder((err) => failures.push(err));
    const broken = new Error("directory unreachable");
    const first = order.run(async () => {
      await pause(20);
      throw broken;
    });
    const second = order.run(async () => {
      landed.push("second");
    });
    await expect(first).rejects.toBe(broken);
    await second;
    expect(landed).toEqual(["second"]);
    expect(failures).toEqual([broken]);
  });
});
