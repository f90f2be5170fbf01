import Fs from 'node:fs';
import Path from 'node:path';
import { pathToFileURL } from 'node:url';

import type { Lifecycle, Server } from '@hapi/hapi';

export type HandlerTable = Map<string, Lifecycle.Method>;

/**
 * Finds a path group's handlers by name: the named exports of `<folder>/handlers.ts`.
 * An export that no operation names is a developer mistake and stops start-up.
 */
export async function loadHandlers(folder: string, operationNames: Iterable<string>): Promise<HandlerTable> {
    const table: HandlerTable = new Map();
    const file = ['handlers.ts', 'handlers.js'].map((name) => Path.join(folder, name)).find((candidate) => Fs.existsSync(candidate));
    if (!file) {
        return table;
    }

    const module = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
    const known = new Set(operationNames);
    for (const [name, value] of Object.entries(module)) {
        if (typeof value !== 'function') {
            continue;
        }

        if (!known.has(name)) {
            throw new Error(`${Path.relative(process.cwd(), file)} exports handler ${name}, which no operation of its spec names`);
        }

        table.set(name, value as Lifecycle.Method);
    }

    return table;
}

export type ServicesSetup = (server: Server) => void | Promise<void>;

/**
 * A path group's folder may hold `services.ts`, whose default export adds the group's services to
 * `server.app.services` before its routes are registered.
 */
export async function setUpServices(folder: string, server: Server): Promise<void> {
    const file = ['services.ts', 'services.js'].map((name) => Path.join(folder, name)).find((candidate) => Fs.existsSync(candidate));
    if (!file) {
        return;
    }

    const module = (await import(pathToFileURL(file).href)) as { default?: ServicesSetup };
    if (typeof module.default !== 'function') {
        throw new Error(`${Path.relative(process.cwd(), file)} must export a default function (server) => void`);
    }

    await module.default(server);
}
