import type { ReaderVariables } from "./auth.ts";

/**
 * The invocation routes' context: the validated `:id`, for reads when the credential
 * expires, and for typing who types. Its own file, so a route module (spill-route.ts) can be typed by it without
 * importing the router that mounts it.
 */
export type Routes = {
  Bindings: Env;
  /**
   * `typist`: the name an attach token types as, `typistUntil` when it expires (epoch ms;
   * terminal-routes.ts), set on its routes alone.
   */
  Variables: { id: string; typist: string; typistUntil: number } & ReaderVariables;
};
