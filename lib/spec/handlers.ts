import Fs from 'node:fs';
import Path from 'node:path';
import { pathToFileURL } from 'node:url';

import type { Lifecycle, Server } from '@hapi/hapi';

import { CODE_EXTENSION } from '../paths.ts';

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
        const module = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
        const where = Path.relative(process.cwd(), file);
        for (const [name, value] of Object.entries(module)) {
            if (typeof value !== 'function') {
                continue;
            }

            if (!known.has(name)) {
                throw new Error(`${where} exports handler ${name}, which no operation of its spec names`);
            }

            if (table.has(name)) {
                throw new Error(`${where} exports handler ${name}, which another handler file already exports`);
            }

            table.set(name, value as Lifecycle.Method);
        }
    }

    return table;
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
