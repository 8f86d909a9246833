/**
 * A pi extension for the TUI test: registers pi-ai's scripted faux model as the
 * provider `faux` (model `faux-1`), answering with the steps in the JSON file at
 * `TOOLWIRE_TEST_FAUX_SCRIPT`: `{ "text": "…" }` or `{ "tool": "bash", "args": {…}, "id": "…" }`.
 *
 * pi knows a model only when an extension registers it with `pi.registerProvider`
 * (queued by the factory and applied before pi resolves `--provider faux --model
 * faux-1`). `registerFauxProvider` alone only adds the stream to pi-ai's API registry,
 * so pi stops with `Unknown provider "faux"`. The faux stream is also handed over as
 * `streamSimple`, so pi registers it again whenever it resets its API registry (the
 * model selector, `/login`, `/reload`).
 */
import { readFileSync } from "node:fs";
import {
  type FauxResponseStep,
  fauxAssistantMessage,
  fauxText,
  fauxToolCall,
  getApiProvider,
  registerFauxProvider,
} from "@mariozechner/pi-ai";
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";

type Step = { text: string } | { tool: string; args: Record<string, unknown>; id: string };

function responses(path: string): FauxResponseStep[] {
  const steps = JSON.parse(readFileSync(path, "utf8")) as Step[];
  return steps.map((step) =>
    "text" in step
      ? fauxAssistantMessage(fauxText(step.text))
      : fauxAssistantMessage(fauxToolCall(step.tool, step.args, { id: step.id }), {
          stopReason: "toolUse",
        }),
  );
}

export default function fauxProvider(pi: ExtensionAPI): void {
  const script = process.env.TOOLWIRE_TEST_FAUX_SCRIPT;
  if (!script) throw new Error("TOOLWIRE_TEST_FAUX_SCRIPT is not set");
  const faux = registerFauxProvider();
  faux.setResponses(responses(script));
  const stream = getApiProvider(faux.api);
  if (!stream) throw new Error("the faux provider registered no stream");
  pi.registerProvider("faux", {
    baseUrl: "http://127.0.0.1:1",
    apiKey: "faux",
    api: faux.api,
    streamSimple: stream.streamSimple,
    models: faux.models.map((m) => ({
      id: m.id,
      name: m.name,
      reasoning: m.reasoning,
      input: m.input,
      cost: m.cost,
      contextWindow: m.contextWindow,
      maxTokens: m.maxTokens,
    })),
  });
}
