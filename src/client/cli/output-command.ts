import type { ToolwireClient } from "../http-client.ts";
import type { Terminal } from "./live-printer.ts";

/**
 * `toolwire output <id>`: writes a call's whole output (every byte its command printed,
 * also what the window cut) to stdout as it arrives, waiting for a slow reader rather than
 * holding a large output in memory.
 * @example await printWholeOutput(client, "call_1", process) // toolwire output call_1 > call_1.log
 */
export async function printWholeOutput(
  client: ToolwireClient,
  id: string,
  term: Terminal,
): Promise<void> {
  const out = term.stdout;
  const reader = (await client.wholeOutput(id)).getReader();
  for (let next = await reader.read(); !next.done; next = await reader.read()) {
    if (out.write(next.value) === false && out.once) {
      await new Promise<void>((resolve) => out.once?.("drain", resolve));
    }
  }
}
