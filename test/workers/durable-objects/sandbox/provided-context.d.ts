// What the sandbox host's global setup provides to these tests (`inject("previewApp")`):
// the preview tests' Python app, read in Node where the Workers runtime has no files.
import "vitest";

declare module "vitest" {
  export interface ProvidedContext {
    previewApp: string;
  }
}
