/**
 * Finds the uses of facilities some systems lack in test sources, and whether each sits in a test skipped where
 * the facility is missing (`test/helpers/platform.ts`): read by test/unit/platform-skips.test.ts.
 */
import ts from 'typescript';
import { linuxOnly, type PlatformNeed, unixOnly } from './platform.js';

/** Which systems have a facility: Linux alone, or Linux and macOS (not Windows). */
export type Scope = 'linux' | 'unix';

/** A facility some systems lack, and how its use reads in a test's code (comments left out). */
export interface Facility {
  name: string;
  scope: Scope;
  pattern: RegExp;
  /** True when a use in an `afterEach`/`afterAll` hook only cleans up, and does so on every system. */
  cleanupAnywhere?: boolean;
}

/** A run of the program `name` by a child_process call (the name alone may be a value, as `completion bash`). */
function command(name: string): RegExp {
  return new RegExp(`\\b(?:exec|execFile|execFileSync|execSync|spawn|spawnSync)\\(\\s*'${name}'`, 'g');
}

/** The facilities the suite uses that a system of the CI matrix lacks. */
export const FACILITIES: readonly Facility[] = [
  { name: 'SIGSTOP', scope: 'linux', pattern: /'SIG(STOP|CONT)'/g },
  // startPostgres().freeze() stops the cluster with SIGSTOP, found from /proc.
  { name: 'SIGSTOP', scope: 'linux', pattern: /\b(db|database|postgres)\.freeze\(/g },
  { name: '/proc', scope: 'linux', pattern: /\/proc\//g },
  { name: 'tmpfs', scope: 'linux', pattern: /\bmountTmpfs\(/g },
  { name: 'tmpfs', scope: 'linux', pattern: command('mount') },
  { name: 'prlimit', scope: 'linux', pattern: command('prlimit') },
  // util-linux's script(1): BSD's, on macOS, takes other arguments.
  { name: 'script', scope: 'linux', pattern: command('script') },
  { name: 'tmux', scope: 'linux', pattern: command('tmux') },
  { name: 'bash', scope: 'unix', pattern: command('bash') },
  { name: 'sh', scope: 'unix', pattern: /#!\/bin\/sh/g },
  { name: 'sh', scope: 'unix', pattern: command('sh') },
  { name: 'touch', scope: 'unix', pattern: command('touch') },
  { name: '/dev/null', scope: 'unix', pattern: /'\/dev\/null'/g },
  // Windows keeps a read-only flag, no modes; a hook that restores a mode does no harm there.
  { name: 'file modes', scope: 'unix', pattern: /\bchmod\(|\.mode & 0o/g, cleanupAnywhere: true },
  { name: 'symlinks', scope: 'unix', pattern: /\bsymlink\(/g },
  { name: 'Unix sockets', scope: 'unix', pattern: /\.sock['`]|\bsocketPath\b/g },
  // Windows ends a child at once on any signal: no handler of the child runs. A hook that ends what a test left
  // running does not care how it ends.
  {
    name: 'signals',
    scope: 'unix',
    pattern: /\.kill\((?!\s*\)|\s*'SIGKILL')|process\.kill\([^)]*'SIG(?!KILL)/g,
    cleanupAnywhere: true,
  },
];

/** One use of a facility in a test source. */
export interface PlatformUse {
  file: string;
  line: number;
  facility: string;
  /** The titles of the suites and test around it, outermost first, when a skip covers it. */
  skippedAs?: string[];
}

/** A need a test file declares, with its scope. */
interface DeclaredNeed {
  scope: Scope;
  need: PlatformNeed;
}

/** The text of a string literal as written in the source; undefined for any other expression. */
function literal(node: ts.Node | undefined): string | undefined {
  return node && (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node))
    ? node.text
    : undefined;
}

/** What the file declares with `const X = linuxOnly('reason')` or `unixOnly('reason')`. */
function declaredNeeds(source: ts.SourceFile): Map<string, DeclaredNeed> {
  const needs = new Map<string, DeclaredNeed>();
  const visit = (node: ts.Node): void => {
    if (
      ts.isVariableDeclaration(node) &&
      ts.isIdentifier(node.name) &&
      node.initializer &&
      ts.isCallExpression(node.initializer) &&
      ts.isIdentifier(node.initializer.expression)
    ) {
      const callee = node.initializer.expression.text;
      const reason = literal(node.initializer.arguments[0]) ?? '?';
      if (callee === 'linuxOnly')
        needs.set(node.name.text, { scope: 'linux', need: linuxOnly(reason, 'linux') });
      if (callee === 'unixOnly')
        needs.set(node.name.text, { scope: 'unix', need: unixOnly(reason, 'linux') });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return needs;
}

/** The nodes from the file down to the one at `position`; undefined when the position is in a comment. */
function pathTo(source: ts.SourceFile, position: number): ts.Node[] | undefined {
  const path: ts.Node[] = [source];
  let node: ts.Node = source;
  for (;;) {
    const child: ts.Node | undefined = node
      .getChildren(source)
      .find((each) => each.pos <= position && position < each.end);
    if (!child) break;
    if (child.kind >= ts.SyntaxKind.FirstJSDocNode && child.kind <= ts.SyntaxKind.LastJSDocNode)
      return undefined;
    path.push(child);
    node = child;
  }
  return position < node.getStart(source) ? undefined : path;
}

/** The calls a test call is made of, outermost first: `it.runIf(x).each(y)('t', f)` gives each link's call. */
function calleeChain(call: ts.CallExpression): { root: string | undefined; calls: ts.CallExpression[] } {
  const calls: ts.CallExpression[] = [call];
  let expression: ts.Expression = call.expression;
  for (;;) {
    if (ts.isCallExpression(expression)) {
      calls.push(expression);
      expression = expression.expression;
    } else if (ts.isPropertyAccessExpression(expression)) expression = expression.expression;
    else break;
  }
  return { root: ts.isIdentifier(expression) ? expression.text : undefined, calls };
}

/** Whether a `skipIf(…)` of `calls` names `NEED.missing` (or a `runIf(…)` its negation). */
function skipsWithout(calls: ts.CallExpression[], need: string, source: ts.SourceFile): boolean {
  const missing = new RegExp(`(^|[^!.\\w])${need}\\.missing\\b`);
  const present = new RegExp(`!${need}\\.missing\\b`);
  return calls.some((call) => {
    const name = ts.isPropertyAccessExpression(call.expression) ? call.expression.name.text : undefined;
    const condition = call.arguments[0]?.getText(source) ?? '';
    return (name === 'skipIf' && missing.test(condition)) || (name === 'runIf' && present.test(condition));
  });
}

/** A suite or test call: its title as run (a need's note included), the need named, and whether it skips. */
interface TestCall {
  title: string;
  need?: DeclaredNeed;
  /** False when the title names a need whose `missing` no `skipIf` of the call reads. */
  skips: boolean;
}

/** The suite or test call `node` is, if it is one. */
function testCall(
  node: ts.Node,
  needs: Map<string, DeclaredNeed>,
  source: ts.SourceFile,
): TestCall | undefined {
  if (!ts.isCallExpression(node)) return undefined;
  const { root, calls } = calleeChain(node);
  const first = node.arguments[0];
  if (!root || !['describe', 'it', 'test'].includes(root) || !first) return undefined;
  // The title names the need: NEED.title('…').
  if (
    ts.isCallExpression(first) &&
    ts.isPropertyAccessExpression(first.expression) &&
    first.expression.name.text === 'title' &&
    ts.isIdentifier(first.expression.expression)
  ) {
    const name = first.expression.expression.text;
    const need = needs.get(name);
    const text = literal(first.arguments[0]) ?? first.arguments[0]?.getText(source) ?? '';
    if (need) return { title: need.need.title(text), need, skips: skipsWithout(calls, name, source) };
  }
  return { title: literal(first) ?? first.getText(source), skips: true };
}

/** Whether a test call skips on every system a facility of `required` scope is missing from. */
function covers(call: TestCall, required: Scope): boolean {
  const scope = call.skips ? call.need?.scope : undefined;
  return scope === 'linux' || (scope === 'unix' && required === 'unix');
}

/**
 * A probe (`const HAS_SCRIPT = …`, `const hasZsh = …`, `const mounted = mountTmpfs(…)`): a value saying whether a
 * facility is here, which runs and fails quietly everywhere.
 */
function isProbe(statement: ts.Node): boolean {
  return (
    ts.isVariableStatement(statement) &&
    statement.declarationList.declarations.every(
      (declaration) =>
        ts.isIdentifier(declaration.name) &&
        /^(HAS_|CAN_|has[A-Z]|mount(ed)?$)|_INSTALLED$/.test(declaration.name.text),
    )
  );
}

/** Whether `node` is a `linuxOnly(…)` or `unixOnly(…)` call. */
function isNeedDeclaration(node: ts.Node): boolean {
  return (
    ts.isCallExpression(node) &&
    ts.isIdentifier(node.expression) &&
    ['linuxOnly', 'unixOnly'].includes(node.expression.text)
  );
}

/** Whether `node` is an `afterEach(…)` or `afterAll(…)` call. */
function isCleanupHook(node: ts.Node): boolean {
  return (
    ts.isCallExpression(node) &&
    ts.isIdentifier(node.expression) &&
    ['afterEach', 'afterAll'].includes(node.expression.text)
  );
}

/** The name a module-level function is called by, when `statement` declares one. */
function functionName(statement: ts.Node): string | undefined {
  if (ts.isFunctionDeclaration(statement)) return statement.name?.text;
  if (!ts.isVariableStatement(statement)) return undefined;
  const [declaration] = statement.declarationList.declarations;
  const initializer = declaration?.initializer;
  if (declaration && ts.isIdentifier(declaration.name) && initializer) {
    if (ts.isArrowFunction(initializer) || ts.isFunctionExpression(initializer)) return declaration.name.text;
  }
  return undefined;
}

/** One file's analysis: its needs, and the places each module-level function is called from. */
class SourceUses {
  readonly source: ts.SourceFile;
  readonly needs: Map<string, DeclaredNeed>;

  constructor(
    readonly file: string,
    text: string,
  ) {
    this.source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
    this.needs = declaredNeeds(this.source);
  }

  /**
   * The titles of the tests covering `position` with a need `facility` fits, or undefined when some way to
   * reach it is not skipped. A use in a module-level function is covered when every call of that function is.
   */
  coverAt(position: number, facility: Facility, seen = new Set<string>()): string[] | undefined | 'comment' {
    const path = pathTo(this.source, position);
    // A need's reason (`linuxOnly('SIGSTOP')`) names the facility without using it.
    if (!path || path.some(isNeedDeclaration)) return 'comment';
    if (this.saidAnySystem(position)) return [];
    const titles: string[] = [];
    let covered = false;
    for (const node of path) {
      const call = testCall(node, this.needs, this.source);
      if (!call) continue;
      titles.push(call.title);
      if (covers(call, facility.scope)) covered = true;
    }
    if (covered || this.inProbe(path)) return titles;
    if (facility.cleanupAnywhere && path.some((node) => isCleanupHook(node))) return titles;
    if (titles.length > 0) return undefined;
    const statement = path.find((node) => this.source.statements.includes(node as ts.Statement));
    if (!statement) return undefined;
    return this.coverOfCalls(statement, facility, seen);
  }

  /**
   * Whether the line of `position`, or a comment line just above it, says `Any system: <why>`: a use that works
   * on every system as the test uses it (a signal that only stops a child whose exit status no one reads).
   */
  private saidAnySystem(position: number): boolean {
    const { line } = this.source.getLineAndCharacterOfPosition(position);
    const lines = this.source.text.split('\n');
    for (let index = line; index >= 0; index -= 1) {
      const text = lines[index] ?? '';
      if (/\/\/ Any system: \S/.test(text)) return true;
      if (index < line && !/^\s*\/\//.test(text)) return false;
    }
    return false;
  }

  /**
   * Whether the use is a probe run as the suites are collected (a `const HAS_SCRIPT = …` of the module or of a
   * suite's body, outside any test or hook): it says whether the facility is here, quietly, on every system.
   */
  private inProbe(path: ts.Node[]): boolean {
    const probe = path.findIndex((node) => isProbe(node));
    if (probe < 0) return false;
    return !path.slice(0, probe).some((node) => {
      if (!ts.isCallExpression(node)) return false;
      const { root } = calleeChain(node);
      return root !== undefined && root !== 'describe' && /^(it|test|before|after)/.test(root);
    });
  }

  /** The cover of every reference to the function `statement` declares; undefined when one is not covered. */
  private coverOfCalls(statement: ts.Node, facility: Facility, seen: Set<string>): string[] | undefined {
    const name = functionName(statement);
    if (!name || seen.has(name)) return name ? [] : undefined;
    seen.add(name);
    const references = [...this.source.text.matchAll(new RegExp(`\\b${name}\\b`, 'g'))]
      .map((match) => match.index)
      .filter((index) => index < statement.getStart(this.source) || index >= statement.end)
      .filter((index) => {
        // The name itself, not the same word in a string or a comment.
        const path = pathTo(this.source, index);
        return path !== undefined && ts.isIdentifier(path[path.length - 1] as ts.Node);
      });
    const titles: string[] = [];
    for (const index of references) {
      const cover = this.coverAt(index, facility, seen);
      if (cover === 'comment') continue;
      if (cover === undefined) return undefined;
      titles.push(...cover);
    }
    return titles;
  }
}

/** Every use of a facility in `text` (the source of `file`), with the tests that skip it where it is missing. */
export function platformUses(file: string, text: string): PlatformUse[] {
  const uses = new SourceUses(file, text);
  const found: PlatformUse[] = [];
  for (const facility of FACILITIES) {
    for (const match of text.matchAll(facility.pattern)) {
      const cover = uses.coverAt(match.index, facility);
      if (cover === 'comment') continue;
      const line = uses.source.getLineAndCharacterOfPosition(match.index).line + 1;
      found.push({
        file,
        line,
        facility: facility.name,
        ...(cover === undefined ? {} : { skippedAs: cover }),
      });
    }
  }
  return found.sort((a, b) => a.line - b.line);
}

/** A suite or test whose title names a need: what a run on a system without it reports as skipped. */
export interface PlatformSkip {
  file: string;
  line: number;
  title: string;
  /** False when no `skipIf` of the call reads the need's `missing`: the title says more than the run does. */
  skips: boolean;
}

/** Every suite and test of `text` whose title names a need (`NEED.title('…')`). */
export function platformSkips(file: string, text: string): PlatformSkip[] {
  const uses = new SourceUses(file, text);
  const found: PlatformSkip[] = [];
  const visit = (node: ts.Node): void => {
    const call = testCall(node, uses.needs, uses.source);
    if (call?.need) {
      const line = uses.source.getLineAndCharacterOfPosition(node.getStart(uses.source)).line + 1;
      found.push({ file, line, title: call.title, skips: call.skips });
    }
    ts.forEachChild(node, visit);
  };
  visit(uses.source);
  return found;
}
