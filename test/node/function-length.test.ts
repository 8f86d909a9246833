/**
 * No production function runs past 120 lines (issue 24, decision 274). Parses every .ts
 * file under src/, sandbox/, durable-objects/, container/ and scripts/ with the
 * TypeScript compiler (syntax only, no type check, about a second) and measures each
 * function, method, constructor, accessor and arrow function from its signature to its
 * closing brace, its doc comment left out. A function nested in another counts in both.
 * `FUNCTION_LENGTHS=1` prints the longest ten.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "../..");
const PRODUCTION = ["src", "sandbox", "durable-objects", "container", "scripts"];
const MAX_FUNCTION_LINES = 120;

interface FunctionLength {
  /** `file:line name`, the line where the signature starts. */
  where: string;
  lines: number;
}

function tsFiles(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(".ts"))
    .map((entry) => path.relative(ROOT, path.join(entry.parentPath, entry.name)))
    .sort();
}

/** The name a reader would search for: the declared one, or the variable or property an arrow is assigned to. */
function nameOf(node: ts.FunctionLikeDeclaration): string {
  if (ts.isConstructorDeclaration(node)) return "constructor";
  if (node.name) return node.name.getText();
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) {
    return parent.name.getText();
  }
  if (ts.isPropertyDeclaration(parent)) return parent.name.getText();
  if (ts.isCallExpression(parent)) return `(callback of ${parent.expression.getText()})`;
  return "(anonymous)";
}

function functionLengths(file: string): FunctionLength[] {
  const source = ts.createSourceFile(
    file,
    readFileSync(path.join(ROOT, file), "utf8"),
    ts.ScriptTarget.Latest,
    true,
  );
  const found: FunctionLength[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && "body" in node && node.body) {
      const fn = node as ts.FunctionLikeDeclaration;
      const first = source.getLineAndCharacterOfPosition(fn.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(fn.getEnd()).line;
      found.push({ where: `${file}:${first + 1} ${nameOf(fn)}`, lines: last - first + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe("function length", () => {
  const all = PRODUCTION.flatMap(tsFiles)
    .flatMap(functionLengths)
    .sort((a, b) => b.lines - a.lines);

  it("measures every production function", () => {
    // A parser that found nothing would pass; the tree has thousands of functions.
    expect(all.length).toBeGreaterThan(1000);
    expect(all.some((f) => f.where.startsWith("sandbox/app.ts:") && f.lines > 10)).toBe(true);
    if (process.env.FUNCTION_LENGTHS) console.log(all.slice(0, 10));
  });

  it(`keeps every production function within ${MAX_FUNCTION_LINES} lines`, () => {
    const tooLong = all
      .filter((f) => f.lines > MAX_FUNCTION_LINES)
      .map((f) => `${f.where}: ${f.lines} lines; split it into named parts`);
    expect(tooLong).toEqual([]);
  });
});
