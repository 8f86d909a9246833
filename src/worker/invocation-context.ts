import type { ReaderVariables } from "./auth.ts";

/**
 * The invocation routes' context: the validated `:id` and, for reads, when the credential
 * expires. Its own file, so a route module (spill-route.ts) can be typed by it without
 * importing the router that mounts it.
 */
export type Routes = { Bindings: Env; Variables: { id: string } & ReaderVariables };
