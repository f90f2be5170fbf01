import type { Server } from '@hapi/hapi';
import type { Knex } from 'knex';

/**
 * What every service starts from, as schmervice's Service does: the server it belongs to (its configuration, its
 * other services) and the server's knex. `defineService` (lib/services.ts) makes one instance per server.
 */
export abstract class Service {
    protected readonly server: Server;

    constructor(server: Server) {
        this.server = server;
    }

    protected get knex(): Knex {
        return this.server.app.knex;
    }
}
