import type { Plugin } from '@hapi/hapi';
import type { Knex } from 'knex';

import { createKnex, migrate } from '../lib/database.ts';

export interface DbPluginOptions {
    databaseUrl: string;
    /** A knex made by the caller (tests share one); it is then not destroyed on stop. */
    knex?: Knex;
}

/** knex on `server.app.knex`: migrated when the server initializes, destroyed when it stops. */
export const dbPlugin: Plugin<DbPluginOptions> = {
    name: 'db',
    async register(server, options) {
        const knex = options.knex ?? createKnex(options.databaseUrl);
        server.app.knex = knex;
        await migrate(knex);
        if (!options.knex) {
            server.ext('onPostStop', async () => {
                await knex.destroy();
            });
        }
    },
};
