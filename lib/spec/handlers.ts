import Fs from 'node:fs';
import Path from 'node:path';
import { pathToFileURL } from 'node:url';

import type { Lifecycle, Server } from '@hapi/hapi';

import { CODE_EXTENSION } from '../paths.ts';
import { knownExports } from './handler-manifest.ts';

export type HandlerTable = Map<string, Lifecycle.Method>;

/** The modules directly in `folder` (`.ts`, or `.js` when built), in name order; none when it does not exist. */
function moduleFiles(folder: string): string[] {
    if (!Fs.existsSync(folder)) {
        return [];
    }

    return Fs.readdirSync(folder)
        .filter((file) => file.endsWith(CODE_EXTENSION))
        .sort()
        .map((file) => Path.join(folder, file));
}

/**
 * Finds a route folder's handlers by name: the named function exports of its files (`routes/<group>/<resource>.ts`).
 * An export that no operation names, or one exported twice, is a developer mistake and stops start-up.
 */
export async function loadHandlers(folder: string, operationNames: Iterable<string>): Promise<HandlerTable> {
    return await handlersIn(moduleFiles(folder), operationNames);
}

async function handlersIn(files: string[], operationNames: Iterable<string>): Promise<HandlerTable> {
    const table: HandlerTable = new Map();
    const known = new Set(operationNames);
    for (const file of files) {
        const where = Path.relative(process.cwd(), file);
        for (const [name, handler] of await handlersOf(file)) {
            if (!known.has(name)) {
                throw new Error(`${where} exports handler ${name}, which no operation of its spec names`);
            }

            if (table.has(name)) {
                throw new Error(`${where} exports handler ${name}, which another handler file already exports`);
            }

            table.set(name, handler);
        }
    }

    return table;
}

/** A file's handlers by name: imported now, or, when the build listed its exports, on the first request. */
async function handlersOf(file: string): Promise<Array<[string, Lifecycle.Method]>> {
    const listed = knownExports(file);
    if (listed) {
        let module: Promise<Record<string, unknown>> | undefined;
        return listed.map((name) => [name, loadedOnFirstCall(() => (module ??= importModule(file)), name, file)]);
    }

    const module = await importModule(file);
    return Object.entries(module).filter((entry): entry is [string, Lifecycle.Method] => typeof entry[1] === 'function');
}

async function importModule(file: string): Promise<Record<string, unknown>> {
    return (await import(pathToFileURL(file).href)) as Record<string, unknown>;
}

/** A handler that imports its module when first called, then calls the function as hapi would have. */
function loadedOnFirstCall(load: () => Promise<Record<string, unknown>>, name: string, file: string): Lifecycle.Method {
    let method: Lifecycle.Method | undefined;
    return async function handler(this: ThisParameterType<Lifecycle.Method>, request, h, error) {
        if (!method) {
            const value = (await load())[name];
            if (typeof value !== 'function') {
                throw new Error(`${file} no longer exports handler ${name}: build the server again`);
            }

            method = value as Lifecycle.Method;
        }

        return await method.call(this, request, h, error);
    };
}

export type ServicesSetup = (server: Server) => void | Promise<void>;

/**
 * Each domain folder (`<domainRoot>/<concept>/`) may hold a `setup.ts` whose default export sets that concept up
 * (its services, scheduled jobs, listeners) before any route is registered: cron sets itself up in `cron/`,
 * webhooks in `webhooks/`, ACME renewal in `acme/`. They run in the order the service's plugin states (`order`),
 * never by accident of names: a setup.ts the order leaves out, or an order naming a concept without one, stops the
 * start.
 */
export async function setUpDomain(domainRoot: string, server: Server, order: readonly string[]): Promise<void> {
    const concepts = Fs.existsSync(domainRoot) ? Fs.readdirSync(domainRoot) : [];
    const withSetup = concepts.filter((concept) => Fs.existsSync(Path.join(domainRoot, concept, `setup${CODE_EXTENSION}`))).sort();
    const unlisted = withSetup.filter((concept) => !order.includes(concept));
    const absent = order.filter((concept) => !withSetup.includes(concept));
    if (unlisted.length > 0 || absent.length > 0) {
        const where = Path.relative(process.cwd(), domainRoot);
        const problems = [
            ...(unlisted.length > 0 ? [`${unlisted.map((concept) => `${concept}/setup.ts`).join(', ')} not in the setup order`] : []),
            ...(absent.length > 0 ? [`the setup order names ${absent.join(', ')}, which has no setup.ts`] : []),
        ];
        throw new Error(`${where}: ${problems.join('; ')}`);
    }

    for (const concept of order) {
        const file = Path.join(domainRoot, concept, `setup${CODE_EXTENSION}`);
        const module = (await import(pathToFileURL(file).href)) as { default?: ServicesSetup };
        if (typeof module.default !== 'function') {
            throw new Error(`${Path.relative(process.cwd(), file)} must export a default function (server) => void`);
        }

        await module.default(server);
    }
}
