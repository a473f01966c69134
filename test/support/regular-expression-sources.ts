import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { type Node, parse } from 'acorn';
import { transformSync } from 'esbuild';

/** One regular expression the code builds: where, and its source and flags as the engine gets them. */
export interface RegularExpressionSite {
  readonly file: string;
  readonly line: number;
  /** How the code spells it: the literal, or `RegExp(` for a constructed one. */
  readonly spelling: string;
  /** `undefined` when the source is not built from literals, so no analyser can check it. */
  readonly source: string | undefined;
  readonly flags: string;
}

/**
 * Every regular expression in the TypeScript files under `directory`: each RegExp literal, and
 * each `RegExp(...)`/`new RegExp(...)` whose source folds to a string from literals, `+`,
 * templates (`String.raw` too) and the module's own `const`s. One built from anything else
 * comes back with `source: undefined`, so a caller can refuse what it cannot check.
 *
 * esbuild strips the types (TypeScript 7 has no JavaScript API) and acorn parses the result.
 */
export function collectRegularExpressions(directory: string): RegularExpressionSite[] {
  return typeScriptFiles(directory).flatMap((path) => {
    const typeScript = readFileSync(path, 'utf8');
    const javascript = transformSync(typeScript, { loader: 'ts', format: 'esm' }).code;
    const program = parse(javascript, { ecmaVersion: 'latest', sourceType: 'module', locations: true });
    const file = relative(process.cwd(), path);
    return withSourceLines(typeScript, sitesOf(program, file));
  });
}

function typeScriptFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return typeScriptFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

type AnyNode = Node & Record<string, unknown>;

function sitesOf(program: Node, file: string): RegularExpressionSite[] {
  const constants = new Map<string, AnyNode>();
  for (const statement of (program as AnyNode).body as AnyNode[]) {
    const declaration =
      statement.type === 'ExportNamedDeclaration' ? (statement.declaration as AnyNode) : statement;
    if (declaration?.type !== 'VariableDeclaration' || declaration.kind !== 'const') continue;
    for (const declarator of declaration.declarations as AnyNode[]) {
      const id = declarator.id as AnyNode;
      if (id.type === 'Identifier' && declarator.init)
        constants.set(id.name as string, declarator.init as AnyNode);
    }
  }
  const fold = (node: AnyNode | undefined, seen: ReadonlySet<string> = new Set()): string | undefined =>
    foldString(node, constants, seen);
  const sites: RegularExpressionSite[] = [];
  visit(program as AnyNode, (node) => {
    const line = node.loc?.start.line ?? 0;
    const regex = node.regex as { pattern: string; flags: string } | undefined;
    if (node.type === 'Literal' && regex) {
      const spelling = `/${regex.pattern}/${regex.flags}`;
      sites.push({ file, line, spelling, source: regex.pattern, flags: regex.flags });
    } else if (
      (node.type === 'NewExpression' || node.type === 'CallExpression') &&
      (node.callee as AnyNode).type === 'Identifier' &&
      (node.callee as AnyNode).name === 'RegExp'
    ) {
      const [source, flags] = node.arguments as AnyNode[];
      const foldedFlags = flags === undefined ? '' : fold(flags);
      sites.push({ file, line, spelling: 'RegExp(', source: fold(source), flags: foldedFlags ?? '' });
    }
  });
  return sites;
}

/**
 * The line of each site in the TypeScript file rather than in esbuild's output (types and
 * comments removed): the n-th spelling of a site is the n-th in the file, as esbuild keeps
 * both literals and calls in order.
 */
function withSourceLines(
  typeScript: string,
  sites: readonly RegularExpressionSite[],
): RegularExpressionSite[] {
  const searchedFrom = new Map<string, number>();
  return sites.map((site) => {
    const at = typeScript.indexOf(site.spelling, searchedFrom.get(site.spelling) ?? 0);
    if (at === -1) return site;
    searchedFrom.set(site.spelling, at + site.spelling.length);
    return { ...site, line: typeScript.slice(0, at).split('\n').length };
  });
}

function visit(node: AnyNode, onNode: (node: AnyNode) => void): void {
  onNode(node);
  for (const value of Object.values(node)) {
    for (const child of Array.isArray(value) ? value : [value]) {
      if (child !== null && typeof child === 'object' && typeof (child as AnyNode).type === 'string')
        visit(child as AnyNode, onNode);
    }
  }
}

function foldString(
  node: AnyNode | undefined,
  constants: ReadonlyMap<string, AnyNode>,
  seen: ReadonlySet<string>,
): string | undefined {
  const fold = (child: AnyNode | undefined) => foldString(child, constants, seen);
  if (node === undefined) return undefined;
  switch (node.type) {
    case 'Literal':
      return typeof node.value === 'string' ? node.value : undefined;
    case 'TemplateLiteral':
      return foldTemplate(node, 'cooked', fold);
    case 'TaggedTemplateExpression': {
      const tag = node.tag as AnyNode;
      const isStringRaw =
        tag.type === 'MemberExpression' &&
        (tag.object as AnyNode).name === 'String' &&
        (tag.property as AnyNode).name === 'raw';
      return isStringRaw ? foldTemplate(node.quasi as AnyNode, 'raw', fold) : undefined;
    }
    case 'BinaryExpression': {
      if (node.operator !== '+') return undefined;
      const left = fold(node.left as AnyNode);
      const right = fold(node.right as AnyNode);
      return left === undefined || right === undefined ? undefined : left + right;
    }
    case 'Identifier': {
      const name = node.name as string;
      if (seen.has(name)) return undefined;
      return foldString(constants.get(name), constants, new Set([...seen, name]));
    }
    default:
      return undefined;
  }
}

function foldTemplate(
  template: AnyNode,
  which: 'cooked' | 'raw',
  fold: (node: AnyNode | undefined) => string | undefined,
): string | undefined {
  const quasis = template.quasis as AnyNode[];
  const expressions = template.expressions as AnyNode[];
  let text = '';
  for (const [index, quasi] of quasis.entries()) {
    const part = (quasi.value as { cooked?: string; raw: string })[which];
    if (part === undefined) return undefined;
    text += part;
    if (index < expressions.length) {
      const value = fold(expressions[index]);
      if (value === undefined) return undefined;
      text += value;
    }
  }
  return text;
}
