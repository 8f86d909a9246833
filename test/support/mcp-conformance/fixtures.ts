// The conformance suite's fixture tools (test_simple_text, test_tool_with_progress, …),
// registered on the MCP server of the test Worker only: production /mcp lists Toolwire's
// tools and nothing else. They answer directly, without an invocation, because what they
// test is the protocol surface (content kinds, progress, logging, schemas), not the engine.
import { fromJsonSchema, inputRequired, type McpServer } from "@modelcontextprotocol/server";

// A 1x1 PNG and a 44-byte silent WAV header: the smallest valid payloads of each type.
const PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
const WAV = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA=";

const RESOURCE = {
  type: "resource" as const,
  resource: {
    uri: "test://embedded-resource",
    mimeType: "text/plain",
    text: "This is an embedded resource content.",
  },
};

const JSON_SCHEMA_2020_12 = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: "object",
  $defs: {
    address: {
      $anchor: "addressDef",
      type: "object",
      properties: { street: { type: "string" }, city: { type: "string" } },
    },
  },
  properties: {
    name: { type: "string" },
    address: { $ref: "#/$defs/address" },
    contactMethod: { type: "string", enum: ["phone", "email"] },
    phone: { type: "string" },
    email: { type: "string" },
  },
  allOf: [{ anyOf: [{ required: ["phone"] }, { required: ["email"] }] }],
  if: { properties: { contactMethod: { const: "phone" } }, required: ["contactMethod"] },
  // biome-ignore lint/suspicious/noThenProperty: `then` is JSON Schema's conditional keyword.
  then: { required: ["phone"] },
  else: { required: ["email"] },
  additionalProperties: false,
} as const;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Registers every fixture the server scenarios call. */
export function registerConformanceFixtures(server: McpServer): void {
  server.registerTool(
    "test_simple_text",
    { description: "Returns a fixed text (conformance fixture)" },
    () => ({ content: [{ type: "text", text: "This is a simple text response for testing." }] }),
  );
  server.registerTool(
    "test_image_content",
    { description: "Returns a PNG image (conformance fixture)" },
    () => ({ content: [{ type: "image", data: PNG, mimeType: "image/png" }] }),
  );
  server.registerTool(
    "test_audio_content",
    { description: "Returns a WAV clip (conformance fixture)" },
    () => ({ content: [{ type: "audio", data: WAV, mimeType: "audio/wav" }] }),
  );
  server.registerTool(
    "test_embedded_resource",
    { description: "Returns an embedded text resource (conformance fixture)" },
    () => ({ content: [RESOURCE] }),
  );
  server.registerTool(
    "test_multiple_content_types",
    { description: "Returns text, an image and a resource (conformance fixture)" },
    () => ({
      content: [
        { type: "text", text: "Multiple content types test:" },
        { type: "image", data: PNG, mimeType: "image/png" },
        RESOURCE,
      ],
    }),
  );
  server.registerTool(
    "test_tool_with_logging",
    { description: "Sends three log messages while it runs (conformance fixture)" },
    async (ctx) => {
      for (const step of [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
      ]) {
        await ctx.mcpReq.log("info", step);
        await sleep(50);
      }
      return { content: [{ type: "text", text: "Tool with logging executed successfully" }] };
    },
  );
  server.registerTool(
    "test_error_handling",
    { description: "Always fails as a tool error (conformance fixture)" },
    () => ({
      content: [{ type: "text", text: "This tool intentionally returns an error for testing" }],
      isError: true,
    }),
  );
  server.registerTool(
    "test_tool_with_progress",
    { description: "Reports progress 0, 50, 100 (conformance fixture)" },
    async (ctx) => {
      const token = ctx.mcpReq._meta?.progressToken;
      for (const progress of [0, 50, 100]) {
        if (token !== undefined) {
          await ctx.mcpReq.notify({
            method: "notifications/progress",
            params: { progressToken: token, progress, total: 100, message: `step ${progress}` },
          });
        }
        await sleep(50);
      }
      return { content: [{ type: "text", text: "Progress test completed" }] };
    },
  );
  server.registerTool(
    "json_schema_2020_12_tool",
    {
      description: "Tool with JSON Schema 2020-12 features",
      inputSchema: fromJsonSchema(JSON_SCHEMA_2020_12),
    },
    (args) => ({ content: [{ type: "text", text: JSON.stringify(args) }] }),
  );
  server.registerTool(
    "test_reconnection",
    { description: "Closes its SSE stream before answering (conformance fixture)" },
    async (ctx) => {
      ctx.http?.closeSSE?.();
      await sleep(100);
      return { content: [{ type: "text", text: "Reconnection test completed" }] };
    },
  );
  // tasks extension: the sync-only tool (the task-supporting ones are Toolwire tools,
  // task-fixtures.ts).
  server.registerTool(
    "greet",
    {
      description: "Greets by name, synchronously (conformance fixture)",
      inputSchema: fromJsonSchema({
        type: "object",
        properties: { name: { type: "string" } },
        required: ["name"],
      }),
    },
    (args) => ({
      content: [{ type: "text", text: `Hello, ${String((args as { name: unknown }).name)}!` }],
    }),
  );
  // server-stateless (2026-07-28) diagnostics.
  server.registerTool(
    "test_missing_capability",
    { description: "Needs the client's sampling capability (conformance fixture)" },
    () =>
      inputRequired({
        inputRequests: {
          sample: inputRequired.createMessage({
            messages: [{ role: "user", content: { type: "text", text: "Say hello" } }],
            maxTokens: 16,
          }),
        },
      }),
  );
  server.registerTool(
    "test_streaming_elicitation",
    { description: "Asks the client for input mid-call (conformance fixture)" },
    () =>
      inputRequired({
        inputRequests: {
          answer: inputRequired.elicit({
            message: "Your name?",
            requestedSchema: {
              type: "object",
              properties: { name: { type: "string" } },
              required: ["name"],
            },
          }),
        },
      }),
  );
  server.registerTool(
    "test_logging_tool",
    { description: "Logs only when the request asked for a log level (conformance fixture)" },
    async (ctx) => {
      await ctx.mcpReq.log("info", "logging tool ran");
      return { content: [{ type: "text", text: "logged" }] };
    },
  );
  // SEP-2243: an argument mirrored into the Mcp-Param-Region header.
  server.registerTool(
    "test_custom_header",
    {
      description: "Echoes a region that is also sent as a header (conformance fixture)",
      // `x-mcp-header` is an extension keyword the schema type does not list.
      inputSchema: fromJsonSchema({
        type: "object",
        properties: { region: { type: "string", "x-mcp-header": "Region" } },
        required: ["region"],
      } as Parameters<typeof fromJsonSchema>[0]),
    },
    (args) => ({ content: [{ type: "text", text: JSON.stringify(args) }] }),
  );
}
