/**
 * The handler manifest the build writes (lib/spec/handler-manifest.ts reads it): for each route file of
 * `plugins/<service>/routes/`, the names of the functions it exports, read from its syntax with TypeScript's
 * parser, so that the built server can register a route without importing its module until the first request.
 * A file whose exports the syntax alone does not tell (`export *`, a re-export, a value made by a call) is left
 * out: the built server imports it at start, as the sources are.
 */
import Fs from 'node:fs';
import Path from 'node:path';

import ts from 'typescript';

import type { HandlerManifest } from '../lib/spec/handler-manifest.ts';

/** The function names a module exports, or undefined when its syntax does not settle them. */
export function exportedFunctions(source: string, fileName: string): string[] | undefined {
    const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
    const names: string[] = [];
    const localFunctions = functionsDeclaredIn(file);
    for (const statement of file.statements) {
        if (ts.isExportDeclaration(statement)) {
            if (statement.isTypeOnly) continue;
            return undefined;
        }

        if (ts.isExportAssignment(statement)) return undefined;
        const exported = ts.canHaveModifiers(statement) && ts.getModifiers(statement)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
        if (!exported) continue;
        if (ts.isFunctionDeclaration(statement)) {
            if (!statement.name) return undefined;
            names.push(statement.name.text);
        } else if (ts.isVariableStatement(statement)) {
            for (const declaration of statement.declarationList.declarations) {
                const value = declaration.initializer;
                if (!ts.isIdentifier(declaration.name)) return undefined;
                const isFunction =
                    value !== undefined &&
                    (ts.isArrowFunction(value) ||
                        ts.isFunctionExpression(value) ||
                        (ts.isIdentifier(value) && localFunctions.has(value.text)));
                if (isFunction) {
                    names.push(declaration.name.text);
                } else if (!value || !isPlainValue(value)) {
                    // A call or a reference may well give a function: only importing the module would tell.
                    return undefined;
                }
            }
        } else if (ts.isClassDeclaration(statement) || ts.isEnumDeclaration(statement)) {
            return undefined;
        }
        // Interfaces and type aliases are erased.
    }

    return names;
}

function isFunctionLiteral(value: ts.Expression): boolean {
    return ts.isArrowFunction(value) || ts.isFunctionExpression(value);
}

/** The module's own top-level functions, declared or given to a constant: an export may name one of them. */
function functionsDeclaredIn(file: ts.SourceFile): Set<string> {
    const names = new Set<string>();
    for (const statement of file.statements) {
        if (ts.isFunctionDeclaration(statement) && statement.name) {
            names.add(statement.name.text);
        } else if (ts.isVariableStatement(statement) && statement.declarationList.flags & ts.NodeFlags.Const) {
            for (const { name, initializer } of statement.declarationList.declarations) {
                if (ts.isIdentifier(name) && initializer && isFunctionLiteral(initializer)) names.add(name.text);
            }
        }
    }

    return names;
}

/** A literal that is surely not a function: a string, number, boolean, array or object literal. */
function isPlainValue(value: ts.Expression): boolean {
    return (
        ts.isStringLiteralLike(value) ||
        ts.isNumericLiteral(value) ||
        ts.isArrayLiteralExpression(value) ||
        ts.isObjectLiteralExpression(value) ||
        value.kind === ts.SyntaxKind.TrueKeyword ||
        value.kind === ts.SyntaxKind.FalseKeyword
    );
}

function routeFiles(folder: string): string[] {
    if (!Fs.existsSync(folder)) return [];
    return Fs.readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
        const path = Path.join(folder, entry.name);
        if (entry.isDirectory()) return routeFiles(path);
        return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
    });
}

/** The manifest of every route file under `<rootDir>/plugins/<service>/routes/`, keyed as the build names them. */
export function handlerManifest(rootDir: string): HandlerManifest {
    const manifest: HandlerManifest = {};
    const plugins = Path.join(rootDir, 'plugins');
    for (const service of Fs.readdirSync(plugins)) {
        for (const file of routeFiles(Path.join(plugins, service, 'routes'))) {
            const names = exportedFunctions(Fs.readFileSync(file, 'utf8'), file);
            if (names) {
                manifest[Path.relative(rootDir, file).replace(/\.ts$/, '.js').split(Path.sep).join('/')] = names;
            }
        }
    }

    return manifest;
}
