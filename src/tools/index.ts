/**
 * The tools' public face: the registry, with every built-in registered — `web_fetch`,
 * the agent-side `external` tool, the examples and the sandbox tools. Import tools from
 * here (not from registry.ts) so the built-ins are present.
 */
import { exampleTools } from "./examples.ts";
import { externalTool, registerTool } from "./registry.ts";
import { webFetchTool } from "./web-fetch.ts";

for (const tool of [webFetchTool, externalTool, ...exampleTools]) registerTool(tool);

export {
  type AnyTool,
  defineTool,
  EXTERNAL_TOOL,
  externalTool,
  formatIssues,
  getTool,
  listTools,
  registerTool,
  ToolArgsError,
  type ToolSpec,
} from "./registry.ts";
export type { ToolContext, ToolDefinition } from "./types.ts";
