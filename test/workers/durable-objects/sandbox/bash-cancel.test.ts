// Nothing lost at cancel: the cancelled result holds every line the process wrote
// before it was killed, then the cancel notice. The command writes a counter to a
// marker file after each line it prints; a second command reads the marker afterwards.
import { expect, it } from "vitest";
import { CANCELLED_NOTICE } from "../../../../durable-objects/invocation/settle-table.ts";
import { startRequest, stubFor, textOf, value, view, waitFor } from "../helpers.ts";

async function markerOf(name: string, marker: string): Promise<number> {
  const check = `${name}-check`;
  value(await stubFor(check).start(startRequest(check, "bash", { command: `cat ${marker}` })));
  const poll = value(await stubFor(check).result(20_000));
  if (poll.status !== "settled") throw new Error("check not settled");
  return Number(textOf(poll.result));
}

/** Lines 1..n, each "line i\n". */
function lines(n: number): string {
  return Array.from({ length: n }, (_, i) => `line ${i + 1}\n`).join("");
}

async function cancelAfter(name: string, seen: number): Promise<void> {
  const marker = `${name}.marker`;
  // The marker is replaced by a rename, never truncated in place: a kill between an
  // O_TRUNC and its write left an empty marker (2 of 40 kills, measured), which says
  // nothing about the output.
  const command = `for i in $(seq 1 100000); do echo line $i; echo $i > ${marker}.new; mv ${marker}.new ${marker}; sleep 0.01; done`;
  value(await stubFor(name).start(startRequest(name, "bash", { command })));
  await waitFor(
    `line ${seen}`,
    async () => (textOf((await view(name)).state).includes(`line ${seen}\n`) ? true : undefined),
    15_000,
  );
  const cancelled = value(await stubFor(name).cancel());
  expect(cancelled).toMatchObject({ status: "settled", isError: true, cancelled: true });
  const last = await markerOf(name, marker);
  const text = textOf(cancelled.state);
  // The process may have printed line last+1 before it was killed, not its marker.
  const printed = text.startsWith(lines(last + 1)) ? last + 1 : last;
  expect(text.startsWith(lines(printed))).toBe(true);
  expect(text.slice(lines(printed).length)).toMatch(
    new RegExp(
      `^(\\n\\[[^\\n]*\\])?\\n*${CANCELLED_NOTICE.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`,
    ),
  );
  expect(printed).toBeGreaterThanOrEqual(seen);
}

it("a cancel while a stretch follows the command keeps every line up to the kill", async () => {
  await cancelAfter("bash-cancel-live", 20);
}, 40_000);

it("a cancel later in the run (across stretches) keeps every line up to the kill", async () => {
  await cancelAfter("bash-cancel-later", 150);
}, 40_000);
