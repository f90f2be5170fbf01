import type { Server } from '@hapi/hapi';

// Keyed by server.app, which every plugin realm of one server shares (request.server differs per realm).
const instances = new WeakMap<object, Map<string, unknown>>();

/**
 * One instance of a service per server, made on first use: `service(server, 'users', (s) => new UserService(s))`.
 * Each service module exports its own accessor, so no central registry needs editing to add one.
 */
export function service<T>(server: Server, name: string, create: (server: Server) => T): T {
    let byName = instances.get(server.app);
    if (!byName) {
        byName = new Map();
        instances.set(server.app, byName);
    }

    if (!byName.has(name)) {
        byName.set(name, create(server));
    }

    return byName.get(name) as T;
}
