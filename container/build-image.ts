/**
 * Builds the `container` backend's images with no registry (docs/sandboxes.md,
 * decision 144): `node container/build-image.ts [--context-only]`.
 *
 * 1. a Debian root file system made by mmdebstrap, cached in `.cache/container/`
 *    (git-ignored; remade only when its package list changes);
 * 2. the build context `.cache/container/context/`: that rootfs, the project's Node 22
 *    binary, npm (its package, cached and checked), the sandbox host bundle
 *    (sandbox/build.ts), the egress stand-in and the Dockerfile (what wrangler builds
 *    from, through container/docker-classic);
 * 3. unless `--context-only`: `toolwire-sandbox:dev` and `toolwire-egress-standin:dev`
 *    with the classic builder (`DOCKER_BUILDKIT=0`).
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  copyFileSync,
  cpSync,
  existsSync,
  linkSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
} from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { buildSandboxHost } from "../sandbox/build.ts";
import { findExecutable } from "../sandbox/jail/find-executable.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
/** Where the rootfs cache and the build context live (git-ignored). */
const CONTAINER_CACHE = path.join(ROOT, ".cache/container");
const BUILD_CONTEXT = path.join(CONTAINER_CACHE, "context");
/** The local images the tests and `wrangler dev` use. */
const SANDBOX_IMAGE = "toolwire-sandbox:dev";
const EGRESS_STANDIN_IMAGE = "toolwire-egress-standin:dev";

/**
 * Debian packages beyond minbase: the jail, Node's C++ runtime, PID 1, search, TLS roots,
 * `ip` (the sandbox's network namespace, decision 183), and curl, git and python3, which
 * agents reach for first. Not Debian's `npm`: it brings a second Node and some 300
 * packages (decision 184); npm comes from its own package, below.
 */
const PACKAGES = [
  "bubblewrap",
  "ca-certificates",
  "curl",
  "git",
  "iproute2",
  "libstdc++6",
  "python3",
  "ripgrep",
  "tini",
];
const SUITE = "bookworm";

/**
 * npm for the image's Node 22 (the line Node 22 ships with), packed by the build
 * machine's npm and checked against this integrity before it is used (decision 184).
 */
const NPM = {
  version: "10.9.9",
  integrity:
    "sha512-1g+6jLQvaIuB4zwvHL7yrXuXcWZwDsCtBX8bbWDqbvJSSr9nPiDDWTHNgwXR27iIcTTW7v3A57hDW9RYv2W4Yg==",
};
const MIRROR = process.env.DEBIAN_MIRROR ?? "http://deb.debian.org/debian";

/** Documentation, manuals and translations: dead weight in a sandbox image. */
const DPKG_EXCLUDES = ["/usr/share/doc", "/usr/share/man", "/usr/share/info", "/usr/share/locale"];

/** The cached rootfs, named by what makes it so that a change makes a new one. */
function rootfsPath(): string {
  const recipe = createHash("sha256")
    .update(JSON.stringify([SUITE, PACKAGES, DPKG_EXCLUDES]))
    .digest("hex")
    .slice(0, 12);
  return path.join(CONTAINER_CACHE, `rootfs-${SUITE}-${recipe}.tar`);
}

function makeRootfs(): string {
  const target = rootfsPath();
  if (existsSync(target)) return target;
  if (!findExecutable("mmdebstrap")) {
    throw new Error(
      "mmdebstrap is missing: install the Debian package mmdebstrap (apt-get install mmdebstrap) to make the image's root file system",
    );
  }
  mkdirSync(CONTAINER_CACHE, { recursive: true });
  const partial = `${target}.partial`;
  const started = Date.now();
  execFileSync(
    "mmdebstrap",
    [
      "--variant=minbase",
      "--format=tar",
      `--include=${PACKAGES.join(",")}`,
      ...DPKG_EXCLUDES.map((dir) => `--dpkgopt=path-exclude=${dir}/*`),
      SUITE,
      partial,
      MIRROR,
    ],
    { stdio: ["ignore", "ignore", "inherit"] },
  );
  renameSync(partial, target);
  console.log(
    `made ${path.relative(ROOT, target)} in ${((Date.now() - started) / 1000).toFixed(0)} s`,
  );
  return target;
}

/** npm's package, cached in CONTAINER_CACHE: packed once, its integrity checked every time. */
function npmPackage(): string {
  const target = path.join(CONTAINER_CACHE, `npm-${NPM.version}.tgz`);
  if (!existsSync(target)) {
    if (!findExecutable("npm")) {
      throw new Error("npm is missing: the image's npm is packed with the build machine's npm");
    }
    mkdirSync(CONTAINER_CACHE, { recursive: true });
    execFileSync("npm", ["pack", `npm@${NPM.version}`, "--pack-destination", CONTAINER_CACHE], {
      stdio: ["ignore", "ignore", "inherit"],
    });
  }
  const integrity = `sha512-${createHash("sha512").update(readFileSync(target)).digest("base64")}`;
  if (integrity !== NPM.integrity) {
    rmSync(target);
    throw new Error(`npm-${NPM.version}.tgz has integrity ${integrity}, not ${NPM.integrity}`);
  }
  return target;
}

async function makeContext(): Promise<void> {
  const rootfs = makeRootfs();
  mkdirSync(BUILD_CONTEXT, { recursive: true });
  const place = (from: string, name: string, link = false) => {
    const to = path.join(BUILD_CONTEXT, name);
    rmSync(to, { force: true });
    if (link) linkSync(from, to);
    else copyFileSync(from, to);
  };
  place(rootfs, "rootfs.tar", true);
  place(process.execPath, "node");
  place(path.join(ROOT, "container/Dockerfile"), "Dockerfile");
  place(path.join(ROOT, "container/egress-standin.mjs"), "egress-standin.mjs");
  const npm = path.join(BUILD_CONTEXT, "npm");
  rmSync(npm, { recursive: true, force: true });
  mkdirSync(npm);
  execFileSync("tar", ["xzf", npmPackage(), "-C", npm, "--strip-components=1"]);
  await buildSandboxHost(path.join(BUILD_CONTEXT, "host.mjs"));
  // node-pty is native, so the bundle loads it from beside itself (sandbox/exec/terminal.ts).
  const modules = path.join(BUILD_CONTEXT, "node_modules");
  rmSync(modules, { recursive: true, force: true });
  for (const name of ["@lydell/node-pty", `@lydell/node-pty-${process.platform}-${process.arch}`]) {
    cpSync(path.join(ROOT, "node_modules", name), path.join(modules, name), { recursive: true });
  }
}

function dockerBuild(target: string, tag: string): void {
  execFileSync("docker", ["build", "--quiet", "--target", target, "-t", tag, BUILD_CONTEXT], {
    stdio: ["ignore", "ignore", "inherit"],
    env: { ...process.env, DOCKER_BUILDKIT: "0" },
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (!process.versions.node.startsWith("22.")) {
    throw new Error(
      `run with the project's Node 22 (node_modules/.bin on PATH), not ${process.version}`,
    );
  }
  const started = Date.now();
  await makeContext();
  if (!process.argv.includes("--context-only")) {
    dockerBuild("sandbox", SANDBOX_IMAGE);
    dockerBuild("egress-standin", EGRESS_STANDIN_IMAGE);
  }
  console.log(`container images ready in ${((Date.now() - started) / 1000).toFixed(0)} s`);
}
