import type { Server } from '@hapi/hapi';

import { now } from './database.ts';
import { defineService } from './services.ts';

/** Instance-wide settings kept as JSON in `instance_settings`; secret ones sealed with the master key. */
export class SettingsService {
    readonly #server: Server;

    constructor(server: Server) {
        this.#server = server;
    }

    async get<T>(name: string): Promise<T | undefined> {
        const row = await this.#server.app.knex('instance_settings').where({ name }).first('value');
        return row ? (JSON.parse(String(row.value)) as T) : undefined;
    }

    async set(name: string, value: unknown): Promise<void> {
        const knex = this.#server.app.knex;
        const row = { name, value: JSON.stringify(value), updated_at: now() };
        await knex('instance_settings').insert(row).onConflict('name').merge(['value', 'updated_at']);
    }

    async remove(name: string): Promise<void> {
        await this.#server.app.knex('instance_settings').where({ name }).delete();
    }

    async getSecret(name: string): Promise<string | undefined> {
        const sealed = await this.get<string>(name);
        return sealed === undefined ? undefined : this.#server.app.sealer.open(sealed, `instance_settings:${name}`);
    }

    async setSecret(name: string, value: string): Promise<void> {
        await this.set(name, this.#server.app.sealer.seal(value, `instance_settings:${name}`));
    }
}

export const settings = defineService<SettingsService>('settings', (owner) => new SettingsService(owner));
