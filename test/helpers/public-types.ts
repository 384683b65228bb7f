/** What a package entry promises, read with the TypeScript compiler. */
import ts from 'typescript';

/** The kinds of declaration a program may need to name: a type it can import. */
const NAMEABLE =
  ts.SymbolFlags.Interface | ts.SymbolFlags.TypeAlias | ts.SymbolFlags.Class | ts.SymbolFlags.Enum;

/**
 * Every type of `src/` that a public name's declaration (of the entry `entryFile`) uses (its properties, parameters, results, bases) and
 * that the entry does not export, as `PublicName uses Type`: a program could receive such a value but not name
 * its type. Bodies, initializers and private members are not part of the contract and are not looked at.
 */
export function unexportedTypesInSignatures(entryFile: string): string[] {
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    noEmit: true,
    skipLibCheck: true,
  };
  const program = ts.createProgram([entryFile], options);
  const checker = program.getTypeChecker();
  const entry = program.getSourceFile(entryFile);
  const moduleSymbol = entry && checker.getSymbolAtLocation(entry);
  if (!moduleSymbol) throw new Error(`${entryFile} could not be read as a module`);
  const real = (symbol: ts.Symbol) =>
    symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
  const exported = checker
    .getExportsOfModule(moduleSymbol)
    .map((symbol) => [symbol.name, real(symbol)] as const);
  const exportedSymbols = new Set(exported.map(([, symbol]) => symbol));
  const ours = (node: ts.Node) => node.getSourceFile().fileName.includes('/src/');
  const missing = new Set<string>();
  const hidden = (node: ts.Node) =>
    (ts.canHaveModifiers(node) &&
      ts
        .getModifiers(node)
        ?.some(
          (modifier) =>
            modifier.kind === ts.SyntaxKind.PrivateKeyword ||
            modifier.kind === ts.SyntaxKind.ProtectedKeyword,
        )) ||
    ((ts.isPropertyDeclaration(node) || ts.isMethodDeclaration(node)) && ts.isPrivateIdentifier(node.name));
  const visit = (node: ts.Node, owner: string): void => {
    if (hidden(node)) return;
    if (ts.isTypeReferenceNode(node) || ts.isExpressionWithTypeArguments(node)) {
      let name: ts.Node = ts.isTypeReferenceNode(node) ? node.typeName : node.expression;
      while (ts.isQualifiedName(name)) name = name.right;
      while (ts.isPropertyAccessExpression(name)) name = name.name;
      const symbol = checker.getSymbolAtLocation(name);
      const target = symbol && real(symbol);
      const declaration = target?.declarations?.[0];
      if (
        target &&
        declaration &&
        target.flags & NAMEABLE &&
        ours(declaration) &&
        !exportedSymbols.has(target)
      )
        missing.add(`${owner} uses ${target.name}`);
    }
    ts.forEachChild(node, (child) => {
      // What a function does, and what a value starts as, are not part of what it promises.
      if (
        (ts.isFunctionLike(node) && 'body' in node && child === node.body) ||
        ((ts.isVariableDeclaration(node) || ts.isPropertyDeclaration(node)) && child === node.initializer)
      )
        return;
      visit(child, owner);
    });
  };
  for (const [name, symbol] of exported) {
    for (const declaration of symbol.declarations ?? []) if (ours(declaration)) visit(declaration, name);
  }
  return [...missing].sort();
}
