/**
 * The tools' public face: the registry, with every built-in registered — the sandbox
 * tools (`bash`, `read`, `grep`, `glob`, `find`, `ls`, `write`, `edit`), `web_fetch`, the job
 * tools, `expose_port` (preview URLs, decision 182), the agent-side `external` tool and
 * the examples. Import tools from here (not from registry.ts) so the built-ins are present.
 */
import { bashTool } from "./bash.ts";
import { editTool } from "./edit.ts";
import { exampleTools } from "./examples.ts";
import { exposePortTool } from "./expose-port.ts";
import { findTool } from "./find.ts";
import { globTool } from "./glob.ts";
import { grepTool } from "./grep.ts";
import { jobOutputTool } from "./job-output.ts";
import { jobsTool } from "./jobs.ts";
import { killTool } from "./kill.ts";
import { lsTool } from "./ls.ts";
import { readTool } from "./read.ts";
import { externalTool, registerTool } from "./registry.ts";
import { webFetchTool } from "./web-fetch.ts";
import { writeTool } from "./write.ts";
import { writeStdinTool } from "./write-stdin.ts";

for (const tool of [
  bashTool,
  readTool,
  grepTool,
  globTool,
  findTool,
  lsTool,
  writeTool,
  editTool,
  webFetchTool,
  jobsTool,
  jobOutputTool,
  killTool,
  writeStdinTool,
  exposePortTool,
  externalTool,
  ...exampleTools,
]) {
  registerTool(tool);
}

const exampleNames = new Set(exampleTools.map((tool) => tool.name));

/**
 * Whether `name` is one of the built-in examples (`emit`, `steps`, `report`): stand-ins
 * for demos and tests, callable, but left out of the lists offered to people.
 * @example isExampleTool("emit") // true
 */
export function isExampleTool(name: string): boolean {
  return exampleNames.has(name);
}

export { scopedCall } from "./call-scope.ts";
export { firstMoment } from "./first-moment.ts";
export { outputLines } from "./job-lines.ts";
export { isBackgroundCall } from "./jobs.ts";
export {
  type AnyTool,
  defineTool,
  EXTERNAL_TOOL,
  formatIssues,
  getTool,
  listTools,
  registerTool,
  ToolArgsError,
} from "./registry.ts";
export {
  ownTerminalSize,
  paintOf,
  resizeTerminal,
  terminalRefusal,
  typeInto,
} from "./terminal-control.ts";
export { inputDetails, inputStateOf } from "./terminal-view.ts";
export type { StretchEnd, ToolContext } from "./types.ts";
