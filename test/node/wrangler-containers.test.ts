// wrangler.containers.toml is wrangler.toml plus the container backend: the two cannot
// drift apart, and the container part adds exactly the binding, the class and its
// migration (docs/sandboxes.md). The deploy dry run itself is test/containers/.
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "../..");
const read = (file: string) => readFileSync(path.join(ROOT, file), "utf8");

describe("wrangler.containers.toml", () => {
  const main = read("wrangler.toml");
  const containers = read("wrangler.containers.toml");

  it("is wrangler.toml, byte for byte, followed by the container part", () => {
    expect(containers.startsWith(main)).toBe(true);
  });

  it("adds the container DO and the warm pool's, the container, their migrations, and nothing else", () => {
    const added = containers
      .slice(main.length)
      .split("\n")
      .filter((line) => line.trim() !== "" && !line.startsWith("#"));
    expect(added).toEqual([
      "[[durable_objects.bindings]]",
      'name = "SANDBOX_CONTAINERS"',
      'class_name = "SandboxContainer"',
      "[[containers]]",
      'class_name = "SandboxContainer"',
      'image = "./container/Dockerfile"',
      'image_build_context = "./.cache/container/context"',
      'instance_type = "basic"',
      "max_instances = 50",
      "[[durable_objects.bindings]]",
      'name = "CONTAINER_POOL"',
      'class_name = "ContainerPoolDO"',
      "[[migrations]]",
      'tag = "v4"',
      'new_sqlite_classes = ["SandboxContainer"]',
      "[[migrations]]",
      'tag = "v5"',
      'new_sqlite_classes = ["ContainerPoolDO"]',
    ]);
  });

  it("builds from a context that git never holds", () => {
    expect(read(".gitignore").split("\n")).toContain(".cache/");
  });
});
