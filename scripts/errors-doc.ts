// The error codes of docs/errors.md, generated from the error classes in src/ as the API report is from the exports.
// Each class is the one definition of its error: its static `code`, its name, its doc comment (the "Thrown when" text)
// and its public fields. `npm run errors:update` (and `npm run api:update`) rewrites the part of docs/errors.md between
// the markers; `npm run lint:docs` fails when that part differs from the classes, or a class breaks the rules below.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const errorsDocPath = join(root, 'docs', 'errors.md');
const BEGIN = '<!-- BEGIN error codes: generated from the error classes by `npm run errors:update` (scripts/errors-doc.ts); edit their doc comments, not this part -->';
const END = '<!-- END error codes -->';

/** One error class as its declaration states it. */
export interface ErrorClassInfo {
  readonly className: string;
  readonly code: string;
  /** The class's doc comment without its tags, as Markdown on one line. */
  readonly doc: string;
  /** Its own public instance fields, in declaration order (`?` when optional). */
  readonly fields: readonly string[];
  /** The file it is declared in, from the repository root. */
  readonly file: string;
}

/** The sections of the page: a folder of src/ and its title, in the order a reader meets them. */
const SECTIONS: readonly (readonly [folder: string, title: string])[] = [
  ['', 'Across the library'],
  ['events', 'Events'],
  ['log', 'The log'],
  ['postgres', 'PostgreSQL (`context-ledger/postgres`)'],
  ['model', 'Model clients'],
  ['context', 'Context projection and token counts'],
  ['compact', 'Compaction'],
  ['session', 'Sessions'],
  ['runtime', 'The runtime: agents, tools, CodeAct, SDK adapters'],
  ['replay', 'Replay and audit'],
  ['testing', 'Test suites (`context-ledger/testing`)'],
  ['cli', 'The CLI'],
];

const sourceFilesUnder = (dir: string): string[] => ts.sys.readDirectory(dir, ['.ts']).filter((f) => !f.endsWith('.d.ts'));

const isContextLedgerErrorClass = (type: ts.Type, baseFile: string): boolean =>
  (type.getBaseTypes() ?? []).some((base) => {
    const declaration = base.getSymbol()?.declarations?.[0];
    return (base.getSymbol()?.name === 'ContextLedgerError' && declaration !== undefined && resolve(declaration.getSourceFile().fileName) === baseFile) || isContextLedgerErrorClass(base, baseFile);
  });

const hasModifier = (node: ts.Node, kind: ts.SyntaxKind): boolean => ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === kind);

const isPublic = (node: ts.Node): boolean => !hasModifier(node, ts.SyntaxKind.PrivateKeyword) && !hasModifier(node, ts.SyntaxKind.ProtectedKeyword);

/** Whether the class's body uses its own name as a value (types aside). */
const namesItself = (declaration: ts.ClassDeclaration, className: string): boolean => {
  const visit = (node: ts.Node): boolean => {
    if (ts.isTypeNode(node)) return false;
    if (ts.isIdentifier(node) && node.text === className && !(ts.isPropertyAccessExpression(node.parent) && node.parent.name === node)) return true;
    return ts.forEachChild(node, visit) ?? false;
  };
  return declaration.members.some(visit);
};

/** `{@link X}` → `` `X` ``, whitespace flattened, `|` escaped for a table cell. */
const markdownCell = (text: string): string =>
  text
    .replace(/\{@link\s+([^}\s|]+)(?:\s*\|?\s*([^}]*))?\}/g, (_, target: string, label: string | undefined) => `\`${label?.trim() || target}\``)
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/\|/g, '\\|');

const stringInitializer = (member: ts.ClassElement | undefined): string | undefined =>
  member && ts.isPropertyDeclaration(member) && member.initializer && ts.isStringLiteral(member.initializer) ? member.initializer.text : undefined;

/**
 * Every class in src/ that extends ContextLedgerError, and what is wrong with any of them: each must declare its own code
 * (`static override readonly code = '…'`, unique across the classes), have a doc comment saying when it is thrown, and
 * not name itself inside its body (its errors' `name` is the class's name, which a bundler changes for such a class).
 */
export const collectErrorClasses = (): { classes: ErrorClassInfo[]; problems: string[] } => {
  const files = sourceFilesUnder(join(root, 'src'));
  const config = ts.getParsedCommandLineOfConfigFile(join(root, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} });
  if (!config) throw new Error('errors-doc: cannot read tsconfig.json');
  const program = ts.createProgram(files, { ...config.options, noEmit: true });
  const checker = program.getTypeChecker();
  const baseFile = join(root, 'src', 'base', 'errors.ts');
  const classes: ErrorClassInfo[] = [];
  const problems: string[] = [];
  for (const file of files) {
    const source = program.getSourceFile(file);
    if (!source) continue;
    for (const statement of source.statements) {
      if (!ts.isClassDeclaration(statement) || !statement.name) continue;
      if (resolve(file) === baseFile && statement.name.text === 'ContextLedgerError' && namesItself(statement, 'ContextLedgerError')) {
        problems.push('src/base/errors.ts: ContextLedgerError names itself inside its class body: a bundler then renames it (esbuild: _ContextLedgerError), and its errors\' name with it');
      }
      const symbol = checker.getSymbolAtLocation(statement.name);
      if (!symbol || !isContextLedgerErrorClass(checker.getDeclaredTypeOfSymbol(symbol), baseFile)) continue;
      const className = statement.name.text;
      const at = `${relative(root, file)}: ${className}`;
      const codeMember = statement.members.find((m) => ts.isPropertyDeclaration(m) && hasModifier(m, ts.SyntaxKind.StaticKeyword) && m.name.getText(source) === 'code');
      const code = stringInitializer(codeMember);
      if (code === undefined) problems.push(`${at} declares no \`static override readonly code = 'SOME_CODE'\` (a string literal)`);
      else if (!/^[A-Z][A-Z0-9_]*$/.test(code)) problems.push(`${at}: code ${JSON.stringify(code)} is not in UPPER_SNAKE_CASE`);
      if (namesItself(statement, className)) problems.push(`${at} names itself inside its class body: a bundler then renames the class (esbuild: _${className}), and its errors' name with it`);
      const doc = markdownCell(ts.displayPartsToString(symbol.getDocumentationComment(checker)));
      if (doc === '') problems.push(`${at} has no doc comment saying when it is thrown`);
      const fields: string[] = [];
      for (const member of statement.members) {
        if (ts.isPropertyDeclaration(member) && !hasModifier(member, ts.SyntaxKind.StaticKeyword) && !hasModifier(member, ts.SyntaxKind.DeclareKeyword) && isPublic(member) && ts.isIdentifier(member.name)) {
          fields.push(`${member.name.text}${member.questionToken ? '?' : ''}`);
        }
        if (ts.isConstructorDeclaration(member)) {
          for (const parameter of member.parameters) {
            if (ts.isIdentifier(parameter.name) && ts.isParameterPropertyDeclaration(parameter, member) && isPublic(parameter)) fields.push(`${parameter.name.text}${parameter.questionToken ? '?' : ''}`);
          }
        }
      }
      if (code !== undefined) classes.push({ className, code, doc, fields, file: relative(root, file) });
    }
  }
  const byCode = new Map<string, string[]>();
  for (const c of classes) byCode.set(c.code, [...(byCode.get(c.code) ?? []), `${c.file}: ${c.className}`]);
  for (const [code, where] of byCode) if (where.length > 1) problems.push(`code ${code} is declared by ${where.length} classes: ${where.join(', ')}`);
  return { classes, problems };
};

const folderOf = (file: string): string => {
  const parts = file.split('/');
  return parts.length > 2 ? parts[1]! : '';
};

/** The generated part of docs/errors.md: one table per part of the library, rows in declaration order. */
export const renderErrorCodes = (classes: readonly ErrorClassInfo[]): string => {
  const known = new Map(SECTIONS);
  const folders = [...new Set(classes.map((c) => folderOf(c.file)))].sort((a, b) => {
    const rank = (f: string): number => (known.has(f) ? SECTIONS.findIndex(([folder]) => folder === f) : SECTIONS.length);
    return rank(a) - rank(b) || a.localeCompare(b);
  });
  const out: string[] = [BEGIN, ''];
  for (const folder of folders) {
    out.push(`### ${known.get(folder) ?? folder}`, '', '| Code | Class | Thrown when | Fields |', '| --- | --- | --- | --- |');
    // The folder's errors.ts first, then the other files by name; a file's classes in the order it declares them.
    const fileRank = (file: string): string => (file.endsWith('/errors.ts') && folderOf(file) === folder && file.split('/').length === 3 ? '' : file);
    const rows = classes.filter((c) => folderOf(c.file) === folder).sort((a, b) => fileRank(a.file).localeCompare(fileRank(b.file)));
    for (const c of rows) {
      const fields = c.fields.map((f) => `\`${f}\``).join(', ');
      out.push(`| \`${c.code}\` | \`${c.className}\` | ${c.doc} |${fields === '' ? '' : ` ${fields}`} |`);
    }
    out.push('');
  }
  out.push(END);
  return out.join('\n');
};

/** docs/errors.md with its generated part made from the classes (the rest of the page is written by hand). */
export const errorsDocFromClasses = (page: string, classes: readonly ErrorClassInfo[]): string => {
  const begin = page.indexOf(BEGIN);
  const end = page.indexOf(END);
  if (begin < 0 || end < begin) throw new Error(`errors-doc: docs/errors.md lacks the markers of its generated part:\n${BEGIN}\n...\n${END}`);
  return `${page.slice(0, begin)}${renderErrorCodes(classes)}${page.slice(end + END.length)}`;
};

/** What `npm run lint:docs` reports: broken error classes, and a docs/errors.md that is not what the classes make. */
export const errorsDocProblems = (): string[] => {
  const { classes, problems } = collectErrorClasses();
  if (!existsSync(errorsDocPath)) return [...problems, 'docs/errors.md is missing'];
  const page = readFileSync(errorsDocPath, 'utf8');
  if (errorsDocFromClasses(page, classes) !== page) problems.push('docs/errors.md is stale: run `npm run errors:update` and commit it');
  return problems;
};

/** Rewrites the generated part of docs/errors.md; throws when a class breaks the rules. */
export const writeErrorsDoc = (): void => {
  const { classes, problems } = collectErrorClasses();
  if (problems.length > 0) throw new Error(`errors-doc: fix the error classes first:\n${problems.join('\n')}`);
  const page = readFileSync(errorsDocPath, 'utf8');
  writeFileSync(errorsDocPath, errorsDocFromClasses(page, classes));
  console.log(`errors-doc: wrote the ${classes.length} error codes to docs/errors.md`);
};

// Run as a script (`tsx scripts/errors-doc.ts [--check]`), not when imported.
if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (process.argv.includes('--check')) {
    const problems = errorsDocProblems();
    for (const problem of problems) console.error(problem);
    if (problems.length > 0) process.exit(1);
    console.log('errors-doc: docs/errors.md lists every error class as declared');
  } else writeErrorsDoc();
}
