// What the web server's global setup provides to the worker tests (`inject("webOrigin")`).
// A declaration file of its own: the setup runs in Node (node project), the tests in the
// Workers runtime (worker project), and both need to see it.
import "vitest";

declare module "vitest" {
  export interface ProvidedContext {
    webOrigin: string;
  }
}
