/**
 * A real pi SDK session for the e2e tests: a faux model scripted by the test, the
 * `toolwire/pi` extension loaded the way `pi -e` loads it (from its source path), an
 * empty local working directory and agent directory of its own.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { type FauxResponseStep, registerFauxProvider } from "@mariozechner/pi-ai";
import {
  type AgentSession,
  AuthStorage,
  createAgentSession,
  DefaultResourceLoader,
  ModelRegistry,
  SessionManager,
  SettingsManager,
} from "@mariozechner/pi-coding-agent";

export const EXTENSION_PATH = path.resolve(import.meta.dirname, "../../../../src/pi/index.ts");

export interface PiSession {
  session: AgentSession;
  /** pi's own working directory (should stay empty: the tools run in the sandbox). */
  cwd: string;
  dispose(): void;
}

/**
 * Starts a session whose model answers with `responses`, in order; with `local`, pi's
 * built-in tools run in the session's directory instead (the benchmark's baseline).
 */
export async function startPiSession(
  toolwire: { url: string; token: string },
  responses: FauxResponseStep[],
  options: { local?: boolean } = {},
): Promise<PiSession> {
  process.env.TOOLWIRE_URL = toolwire.url;
  process.env.TOOLWIRE_TOKEN = toolwire.token;
  const cwd = mkdtempSync(path.join(tmpdir(), "toolwire-pi-cwd-"));
  const agentDir = mkdtempSync(path.join(tmpdir(), "toolwire-pi-agent-"));
  const faux = registerFauxProvider();
  faux.setResponses(responses);
  const model = faux.getModel();
  const authStorage = AuthStorage.inMemory();
  authStorage.setRuntimeApiKey(model.provider, "x");
  const settingsManager = SettingsManager.inMemory({ compaction: { enabled: false } });
  const resourceLoader = new DefaultResourceLoader({
    cwd,
    agentDir,
    settingsManager,
    additionalExtensionPaths: options.local ? [] : [EXTENSION_PATH],
    noSkills: true,
    noPromptTemplates: true,
    noThemes: true,
    noContextFiles: true,
  });
  await resourceLoader.reload();
  const { session } = await createAgentSession({
    cwd,
    agentDir,
    model,
    authStorage,
    modelRegistry: ModelRegistry.inMemory(authStorage),
    sessionManager: SessionManager.inMemory(cwd),
    settingsManager,
    resourceLoader,
  });
  return { session, cwd, dispose: () => faux.unregister() };
}
