import { now } from '../../../../lib/database.ts';
import { BadRequestError, NotFoundError } from '../../../../lib/errors.ts';
import type { Paging } from '../../../../lib/paging.ts';
import { cell, rowReader } from '../../../../lib/row-reader.ts';
import { defineService } from '../../../../lib/services.ts';
import { Service } from '../../../../lib/service.ts';

const NAME_PATTERN = /^[A-Z_][A-Z0-9_]*$/i;
const RESERVED_PREFIXES = ['GITEA_', 'GITHUB_'];
const MAX_DATA_BYTES = 65_536;
const MAX_DESCRIPTION_CHARACTERS = 4_096;

export interface SecretInput {
    data: string;
    description?: string;
}

export interface ApiSecret {
    name: string;
    description: string;
    created_at: string;
}

const toApiSecret = rowReader<ApiSecret>({
    name: ['name', cell.string],
    description: ['description', cell.string],
    created_at: ['created_at', cell.time],
});

/** Gitea's rules for a secret's name; names are kept upper-cased, so `foo` and `FOO` are one secret. */
export function checkedSecretName(name: string): string {
    const upper = name.toUpperCase();
    if (!NAME_PATTERN.test(name) || RESERVED_PREFIXES.some((prefix) => upper.startsWith(prefix)) || upper === 'CI') {
        throw new BadRequestError('invalid variable or secret name');
    }

    return upper;
}

/** Actions secrets of an owner: values sealed under the master key, bound to owner and name, never handed out. */
export class SecretService extends Service {
    #context(ownerId: number, name: string): string {
        return `actions-secret:${ownerId}:${name}`;
    }

    /** Creates (true) or replaces (false) the secret. */
    async put(ownerId: number, rawName: string, input: SecretInput): Promise<boolean> {
        const name = checkedSecretName(rawName);
        if (Buffer.byteLength(input.data, 'utf8') > MAX_DATA_BYTES) {
            throw new BadRequestError('data too long');
        }

        const values = {
            description: [...(input.description ?? '')].slice(0, MAX_DESCRIPTION_CHARACTERS).join(''),
            data: this.server.app.sealer.seal(input.data, this.#context(ownerId, name)),
            updated_at: now(),
        };
        return await this.knex.transaction(async (trx) => {
            const updated = await trx('secrets').where({ owner_id: ownerId, repo_id: 0, name }).update(values);
            if (updated > 0) {
                return false;
            }

            await trx('secrets').insert({ owner_id: ownerId, repo_id: 0, name, created_at: values.updated_at, ...values });
            return true;
        });
    }

    async delete(ownerId: number, rawName: string): Promise<void> {
        const name = checkedSecretName(rawName);
        const deleted = await this.knex('secrets').where({ owner_id: ownerId, repo_id: 0, name }).delete();
        if (deleted === 0) {
            throw new NotFoundError('secret not found');
        }
    }

    async list(ownerId: number, paging: Paging): Promise<{ rows: ApiSecret[]; total: number }> {
        const query = this.knex('secrets').where({ owner_id: ownerId, repo_id: 0 });
        const total = Number((await query.clone().count({ count: '*' }).first())?.count ?? 0);
        const rows = await query
            .orderBy('name', 'asc')
            .limit(paging.limit)
            .offset(paging.offset)
            .select('name', 'description', 'created_at');
        return {
            rows: rows.map(toApiSecret),
            total,
        };
    }

    /** A secret's value, for the jobs that will need it. */
    async reveal(ownerId: number, rawName: string): Promise<string> {
        const name = checkedSecretName(rawName);
        const row = await this.knex('secrets').where({ owner_id: ownerId, repo_id: 0, name }).first('data');
        if (!row) {
            throw new NotFoundError('secret not found');
        }

        return this.server.app.sealer.open(String(row.data), this.#context(ownerId, name));
    }
}

export const secrets = defineService<SecretService>('actionsSecrets', (owner) => new SecretService(owner));
