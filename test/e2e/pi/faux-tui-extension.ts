/**
 * A test extension for the TUI test: registers a faux provider "toolwire-faux" whose
 * model asks for one long-running bash command (in the Toolwire sandbox, through the
 * toolwire/pi extension loaded beside this one), then says "done".
 */
import {
  fauxAssistantMessage,
  fauxText,
  fauxToolCall,
  registerFauxProvider,
} from "@mariozechner/pi-ai";
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";

export default function fauxTui(pi: ExtensionAPI): void {
  const faux = registerFauxProvider({ provider: "toolwire-faux", models: [{ id: "scripted" }] });
  const command =
    process.env.TOOLWIRE_TUI_COMMAND ?? "for i in $(seq 1 600); do echo tick $i; sleep 0.1; done";
  faux.setResponses([
    fauxAssistantMessage(
      fauxToolCall("bash", { command }, { id: process.env.TOOLWIRE_TUI_CALL_ID }),
      {
        stopReason: "toolUse",
      },
    ),
    fauxAssistantMessage(fauxText("done")),
  ]);
  pi.registerProvider("toolwire-faux", {
    baseUrl: "http://127.0.0.1:1",
    apiKey: "x",
    api: faux.api,
    models: [
      {
        id: "scripted",
        name: "scripted",
        reasoning: false,
        input: ["text"],
        cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
        contextWindow: 100_000,
        maxTokens: 4096,
      },
    ],
  });
}
