import type { Server } from '@hapi/hapi';

// Keyed by server.app, which every plugin realm of one server shares (request.server differs per realm).
const instances = new WeakMap<object, Map<string, unknown>>();
const defined = new Set<string>();

/**
 * Defines a service by its name: `export const users = defineService('users', (server) => new UserService(server))`.
 * The accessor gives one instance per server, made on first use. Each service module defines its own, so no central
 * registry needs editing to add one; a name defined twice is a mistake that stops start-up when the second module loads.
 */
export function defineService<T>(name: string, create: (server: Server) => T): (server: Server) => T {
    if (defined.has(name)) {
        throw new Error(`service ${name} is defined twice: give one of them another name`);
    }

    defined.add(name);
    return (server) => {
        let byName = instances.get(server.app);
        if (!byName) {
            byName = new Map();
            instances.set(server.app, byName);
        }

        if (!byName.has(name)) {
            byName.set(name, create(server));
        }

        return byName.get(name) as T;
    };
}
