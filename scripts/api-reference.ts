// The API reference (docs/api/): every export of every package entry with its kind, type, doc comment and deprecation, members
// of interfaces and classes, and @example blocks. Written by `npm run api:update`; `npm run lint:docs` checks it.
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { entriesOf } from './api-report.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const referenceDir = join(root, 'docs', 'api');

const flat = (text: string): string => text.replace(/\s+/g, ' ').trim();

const docOf = (symbol: ts.Symbol, checker: ts.TypeChecker): { text: string; examples: string[]; deprecated: string | undefined } => {
  const text = ts.displayPartsToString(symbol.getDocumentationComment(checker)).trim();
  const tags = symbol.getJsDocTags(checker);
  const examples = tags
    .filter((t) => t.name === 'example')
    .map((t) => ts.displayPartsToString(t.text).trim())
    .filter((t) => t.length > 0);
  const deprecation = tags.find((t) => t.name === 'deprecated');
  return { text, examples, deprecated: deprecation === undefined ? undefined : ts.displayPartsToString(deprecation.text).trim() };
};

const kindOf = (symbol: ts.Symbol): string => {
  const f = symbol.flags;
  if (f & ts.SymbolFlags.Class) return 'class';
  if (f & ts.SymbolFlags.Function) return 'function';
  if (f & ts.SymbolFlags.Interface) return 'interface';
  if (f & ts.SymbolFlags.TypeAlias) return 'type';
  if (f & ts.SymbolFlags.Enum) return 'enum';
  if (f & ts.SymbolFlags.Variable) return 'const';
  return 'other';
};

const typeText = (checker: ts.TypeChecker, type: ts.Type): string => checker.typeToString(type, undefined, ts.TypeFormatFlags.UseAliasDefinedOutsideCurrentScope | ts.TypeFormatFlags.NoTruncation);

/** Builds the reference pages: file name → text. */
export const buildApiReference = (): Map<string, string> => {
  const entries = entriesOf();
  const config = ts.getParsedCommandLineOfConfigFile(join(root, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} });
  if (!config) throw new Error('api-reference: cannot read tsconfig.json');
  const program = ts.createProgram(entries.map((e) => e.file), { ...config.options, noEmit: true });
  const checker = program.getTypeChecker();
  const pages = new Map<string, string>();
  const index: string[] = [];
  for (const { entry, file } of entries) {
    const source = program.getSourceFile(file);
    if (!source) throw new Error(`api-reference: ${file} is not in the program`);
    const moduleSymbol = checker.getSymbolAtLocation(source);
    const exports = (moduleSymbol ? checker.getExportsOfModule(moduleSymbol) : []).slice().sort((a, b) => a.name.localeCompare(b.name));
    const name = entry.replace(/\//g, '__');
    const lines: string[] = [`# \`${entry}\``, '', `Generated from the source by \`npm run api:update\` (scripts/api-reference.ts); \`npm run lint:docs\` checks it is current. ${exports.length} exports.`, ''];
    for (const exported of exports) {
      const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      const kind = kindOf(symbol);
      lines.push(`## ${exported.name}`, '', `*${kind}*`, '');
      if (kind === 'function' || kind === 'const') lines.push('```ts', `${exported.name}: ${typeText(checker, checker.getTypeOfSymbol(symbol))}`, '```', '');
      else if (kind === 'type') lines.push('```ts', `type ${exported.name} = ${typeText(checker, checker.getDeclaredTypeOfSymbol(symbol))}`, '```', '');
      const { text, examples, deprecated } = docOf(symbol, checker);
      if (deprecated !== undefined) lines.push(`**Deprecated**${deprecated ? `: ${deprecated}` : ''}.`, '');
      if (text) lines.push(text, '');
      for (const example of examples) lines.push('Example:', '', '```ts', example, '```', '');
      if (kind === 'interface' || kind === 'class') {
        const type = checker.getDeclaredTypeOfSymbol(symbol);
        const visible = (m: ts.Symbol): boolean => !m.name.startsWith('#') && !m.name.startsWith('__');
        // A class's own statics (and those it inherits from ours), not Error's.
        const ours = (m: ts.Symbol): boolean => (m.declarations ?? []).some((d) => !d.getSourceFile().isDeclarationFile);
        const statics = kind === 'class' ? checker.getPropertiesOfType(checker.getTypeOfSymbol(symbol)).filter((m) => visible(m) && m.name !== 'prototype' && ours(m)) : [];
        const members = [...statics, ...checker.getPropertiesOfType(type).filter(visible)];
        if (members.length > 0) {
          lines.push('| member | type | |', '|---|---|---|');
          for (const member of members) {
            const prefix = statics.includes(member) ? 'static ' : '';
            const declaration = member.valueDeclaration ?? member.declarations?.[0];
            const memberType = declaration ? typeText(checker, checker.getTypeOfSymbolAtLocation(member, declaration)) : '';
            const optional = member.flags & ts.SymbolFlags.Optional ? '?' : '';
            const cell = (s: string): string => flat(s).replace(/\|/g, '\\|');
            lines.push(`| \`${prefix}${member.name}${optional}\` | \`${cell(memberType)}\` | ${cell(docOf(member, checker).text)} |`);
          }
          lines.push('');
        }
      }
    }
    pages.set(`${name}.md`, `${lines.join('\n').trimEnd()}\n`);
    index.push(`- [\`${entry}\`](${name}.md): ${exports.length} exports`);
  }
  pages.set(
    'README.md',
    `# API reference\n\nEvery export of every package entry, with its type and doc comment. Generated from the source by \`npm run api:update\`; \`npm run lint:docs\` fails when it is stale. What the version number promises about these names: [stability.md](../stability.md).\n\n${index.join('\n')}\n`,
  );
  return pages;
};

/** Writes docs/api/ afresh. */
export const writeApiReference = (): void => {
  const pages = buildApiReference();
  rmSync(referenceDir, { recursive: true, force: true });
  mkdirSync(referenceDir, { recursive: true });
  for (const [name, text] of pages) writeFileSync(join(referenceDir, name), text);
  console.log(`api-reference: wrote ${pages.size} page(s) to docs/api/`);
};

/** The names of the pages that differ from the code (missing, changed or left over). */
export const staleApiReference = (): string[] => {
  const pages = buildApiReference();
  const stale = [...pages].filter(([name, text]) => !existsSync(join(referenceDir, name)) || readFileSync(join(referenceDir, name), 'utf8') !== text).map(([name]) => name);
  if (existsSync(referenceDir)) for (const name of readdirSync(referenceDir)) if (!pages.has(name)) stale.push(name);
  return stale;
};
