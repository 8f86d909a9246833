// A sandbox per pi session (issue 29, decision 223): the real pi SDK session with a
// scripted faux model and the toolwire/pi extension, TOOLWIRE_SANDBOX unset. Two
// sessions at once write the same file name and each reads back its own; a resumed
// session finds its sandbox and its files; once that sandbox has ended, the resumed
// session makes a new one and records it.
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fauxAssistantMessage, fauxText, fauxToolCall } from "@mariozechner/pi-ai";
import { afterAll, describe, expect, inject, it } from "vitest";
import { SandboxesClient } from "../../src/client/sandboxes.ts";
import { SANDBOX_ENTRY } from "../../src/pi/session-sandbox.ts";
import { type PiSession, startPiSession } from "../support/e2e/pi/session.ts";

const toolwire = { url: inject("apiUrl"), token: inject("apiToken") };
const sandboxes = new SandboxesClient({ baseUrl: toolwire.url, token: toolwire.token });
const run = `ps${Date.now().toString(36)}`;

const sessions: PiSession[] = [];
afterAll(() => {
  for (const s of sessions) s.dispose();
});

type ToolMessage = { role: "toolResult"; content: { text?: string }[]; isError: boolean };

function results(pi: PiSession): ToolMessage[] {
  return pi.session.messages.filter((m) => m.role === "toolResult") as unknown as ToolMessage[];
}

const step = (name: string, args: Record<string, unknown>, callId: string) =>
  fauxAssistantMessage(fauxToolCall(name, args, { id: callId }), { stopReason: "toolUse" });

/** A session that writes `text` to same.txt, reads it back and stops. */
function writeThenRead(label: string, text: string) {
  return [
    step("write", { path: "same.txt", content: text }, `${run}-${label}-w`),
    step("read", { path: "same.txt" }, `${run}-${label}-r`),
    fauxAssistantMessage(fauxText("done")),
  ];
}

/** The sandbox ids a session recorded, in order. */
function recorded(pi: PiSession): string[] {
  return pi.session.sessionManager
    .getEntries()
    .filter((e) => e.type === "custom" && e.customType === SANDBOX_ENTRY)
    .map((e) => (e as { data: { id: string } }).data.id);
}

describe("a pi session gets a sandbox of its own", () => {
  it("two sessions at once write same.txt and each reads back its own", async () => {
    const [a, b] = await Promise.all([
      startPiSession(toolwire, writeThenRead("a", "written by A\n"), {
        sandbox: null,
        provider: `${run}-faux-a`,
      }),
      startPiSession(toolwire, writeThenRead("b", "written by B\n"), {
        sandbox: null,
        provider: `${run}-faux-b`,
      }),
    ]);
    sessions.push(a, b);
    await Promise.all([a.session.prompt("write and read"), b.session.prompt("write and read")]);
    const [readA, readB] = [results(a)[1], results(b)[1]];
    expect(readA?.isError).toBe(false);
    expect(readA?.content[0]?.text).toContain("written by A");
    expect(readA?.content[0]?.text).not.toContain("written by B");
    expect(readB?.content[0]?.text).toContain("written by B");
    const [idA, idB] = [recorded(a)[0], recorded(b)[0]];
    expect(idA).toMatch(/^sbx_default_[0-9a-f]{20}$/);
    expect(idB).toMatch(/^sbx_default_[0-9a-f]{20}$/);
    expect(idA).not.toBe(idB);
    const view = await sandboxes.get(idA as string);
    expect(view).toMatchObject({
      status: "active",
      name: `pi ${a.session.sessionManager.getSessionId()}`,
    });
    for (const id of [idA, idB]) await sandboxes.remove(id as string);
  }, 120_000);

  it("a resumed session finds its sandbox and its files; once it has ended, a new one is made and recorded", async () => {
    const sessionDir = mkdtempSync(path.join(tmpdir(), "toolwire-pi-sessions-"));
    const first = await startPiSession(
      toolwire,
      [
        step("write", { path: "kept.txt", content: "from the first run\n" }, `${run}-r1`),
        fauxAssistantMessage(fauxText("written")),
      ],
      { sandbox: null, sessionDir, provider: `${run}-faux-r1` },
    );
    sessions.push(first);
    await first.session.prompt("write it");
    const file = first.session.sessionManager.getSessionFile() as string;
    const [made] = recorded(first);
    expect(readFileSync(file, "utf8")).toContain(made);
    first.dispose();

    const resumed = await startPiSession(
      toolwire,
      [step("read", { path: "kept.txt" }, `${run}-r2`), fauxAssistantMessage(fauxText("read"))],
      { sandbox: null, resume: file, provider: `${run}-faux-r2` },
    );
    sessions.push(resumed);
    await resumed.session.prompt("read it");
    expect(results(resumed).at(-1)?.content[0]?.text).toContain("from the first run");
    expect(recorded(resumed)).toEqual([made]);
    resumed.dispose();

    await sandboxes.remove(made as string);
    const again = await startPiSession(
      toolwire,
      [step("read", { path: "kept.txt" }, `${run}-r3`), fauxAssistantMessage(fauxText("read"))],
      { sandbox: null, resume: file, provider: `${run}-faux-r3` },
    );
    sessions.push(again);
    await again.session.prompt("read it again");
    const last = results(again).at(-1);
    expect(last?.isError).toBe(true);
    const ids = recorded(again);
    expect(ids).toHaveLength(2);
    expect(ids[0]).toBe(made);
    expect(ids[1]).not.toBe(made);
    expect((await sandboxes.get(ids[1] as string)).status).toBe("active");
    await sandboxes.remove(ids[1] as string);
  }, 120_000);
});
