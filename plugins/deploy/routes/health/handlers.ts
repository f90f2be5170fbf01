import type { Lifecycle } from '@hapi/hapi';

/** Ready means the server has started: its database is migrated and every plugin registered. */
export const getHealth: Lifecycle.Method = async (request, h) => {
    await request.server.app.knex.raw('select 1');
    return h.response({ status: 'ok' }).header('Cache-Control', 'no-store');
};
