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

/** How a test session differs from the plain one. */
export interface PiSessionOptions {
  /** pi's built-in tools run in the session's directory instead (the benchmark's baseline). */
  local?: boolean;
  /** `TOOLWIRE_SANDBOX`; default `default` (the shared workspace); null: unset, a sandbox per session. */
  sandbox?: string | null;
  /** A session file to resume (`SessionManager.open`), or a folder to keep a new one in. */
  resume?: string;
  sessionDir?: string;
  /** A provider name of its own, for sessions that run at once. */
  provider?: string;
  /** `TOOLWIRE_SANDBOX_ALLOW`: the network policy of the session's sandbox; unset when not given. */
  allow?: string;
  /** `TOOLWIRE_SANDBOX_BACKEND`: the kind of the session's sandbox; unset when not given. */
  backend?: "host" | "container";
}

/** Starts a session whose model answers with `responses`, in order. */
export async function startPiSession(
  toolwire: { url: string; token: string },
  responses: FauxResponseStep[],
  options: PiSessionOptions = {},
): Promise<PiSession> {
  process.env.TOOLWIRE_URL = toolwire.url;
  process.env.TOOLWIRE_TOKEN = toolwire.token;
  const sandbox = options.sandbox === undefined ? "default" : options.sandbox;
  if (sandbox === null) delete process.env.TOOLWIRE_SANDBOX;
  else process.env.TOOLWIRE_SANDBOX = sandbox;
  if (options.allow === undefined) delete process.env.TOOLWIRE_SANDBOX_ALLOW;
  else process.env.TOOLWIRE_SANDBOX_ALLOW = options.allow;
  if (options.backend === undefined) delete process.env.TOOLWIRE_SANDBOX_BACKEND;
  else process.env.TOOLWIRE_SANDBOX_BACKEND = options.backend;
  const cwd = mkdtempSync(path.join(tmpdir(), "toolwire-pi-cwd-"));
  const agentDir = mkdtempSync(path.join(tmpdir(), "toolwire-pi-agent-"));
  const faux = registerFauxProvider(
    options.provider ? { api: options.provider, provider: options.provider } : {},
  );
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
    sessionManager: options.resume
      ? SessionManager.open(options.resume)
      : options.sessionDir
        ? SessionManager.create(cwd, options.sessionDir)
        : SessionManager.inMemory(cwd),
    settingsManager,
    resourceLoader,
  });
  return { session, cwd, dispose: () => faux.unregister() };
}
