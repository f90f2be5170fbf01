import Crypto from 'node:crypto';

import type { Server } from '@hapi/hapi';

import { sha256Hex } from '../../../../lib/crypto.ts';
import { now } from '../../../../lib/database.ts';
import { ValidationError } from '../../../../lib/errors.ts';
import { readCache, type ReadCache, type VersionSnapshot } from '../../../../lib/read-cache.ts';
import { defineService } from '../../../../lib/services.ts';
import { toUserRow, type UserRow } from './user-service.ts';
import { Service } from '../../../../lib/service.ts';

/** Gitea's scope categories; each is granted at read or write level (write includes read). */
export const SCOPE_CATEGORIES = [
    'activitypub',
    'admin',
    'issue',
    'misc',
    'notification',
    'organization',
    'package',
    'repository',
    'user',
] as const;
export type ScopeCategory = (typeof SCOPE_CATEGORIES)[number];
export type ScopeLevel = 'read' | 'write';

/** Checks and normalises a scope list (`all`, `public-only`, `read:admin`, `write:user`...) into Gitea's stored form. */
export function normaliseScopes(requested: string[]): string {
    const scopes = new Set<string>();
    for (const raw of requested.flatMap((item) => item.split(','))) {
        const scope = raw.trim().toLowerCase();
        if (scope === '') {
            continue;
        }

        const [level, category] = scope.split(':');
        const known =
            scope === 'all' ||
            scope === 'public-only' ||
            ((level === 'read' || level === 'write') && SCOPE_CATEGORIES.includes(category as ScopeCategory));
        if (!known) {
            throw new ValidationError(`invalid access token scope: ${scope}`);
        }

        scopes.add(scope);
    }

    return [...scopes].sort().join(',');
}

/** Whether a token's scope holds `public-only`, which limits it to public resources (`all` does not include it). */
export function isPublicOnlyScope(scope: string): boolean {
    return scope.split(',').includes('public-only');
}

export function tokenGrants(scope: string, category: ScopeCategory, level: ScopeLevel): boolean {
    const scopes = scope.split(',');
    if (scopes.includes('all')) {
        return true;
    }

    return scopes.includes(`write:${category}`) || (level === 'read' && scopes.includes(`read:${category}`));
}

export interface TokenRow {
    id: number;
    uid: number;
    name: string;
    scope: string;
    token_last_eight: string;
    created_at: number;
}

export interface NewToken {
    /** Shown once; only its SHA-256 is stored. */
    token: string;
    row: TokenRow;
}

export interface TokenOwner {
    token: TokenRow;
    user: UserRow;
}

/** A token's owner, with the write counters the look-up checked: the request's view of the database. */
export interface FoundToken extends TokenOwner {
    asOf?: VersionSnapshot;
}

export class TokenService extends Service {
    // Every authenticated request looks its token up: kept until a token or a user is written.
    readonly #byHash: ReadCache<TokenOwner | undefined>;

    constructor(server: Server) {
        super(server);
        this.#byHash = readCache(server, ['access_tokens', 'users']);
    }

    async create(user: UserRow, name: string, scopes: string[]): Promise<NewToken> {
        if (!name.trim()) {
            throw new ValidationError('token name is required');
        }

        const scope = normaliseScopes(scopes);
        const knex = this.server.app.knex;
        if (await knex('access_tokens').where({ uid: user.id, name }).first('id')) {
            throw new ValidationError(`access token name has been used already [name: ${name}]`);
        }

        const token = Crypto.randomBytes(20).toString('hex');
        const createdAt = now();
        const [id] = await knex('access_tokens').insert({
            uid: user.id,
            name,
            token_hash: sha256Hex(token),
            token_last_eight: token.slice(-8),
            scope,
            created_at: createdAt,
            updated_at: createdAt,
        });
        return { token, row: { id: Number(id), uid: user.id, name, scope, token_last_eight: token.slice(-8), created_at: createdAt } };
    }

    /** The token's record and its user, or undefined for a token that does not exist. */
    async find(token: string): Promise<FoundToken | undefined> {
        if (!/^[0-9a-f]{40}$/i.test(token)) {
            return undefined;
        }

        const hash = sha256Hex(token.toLowerCase());
        const asOf = await this.#byHash.snapshot();
        const owner = await this.#byHash.get(hash, async () => await this.#lookUp(hash), asOf);
        return owner && { ...owner, asOf };
    }

    /** One query for the token and its user; the result is shared by the requests that present the token. */
    async #lookUp(hash: string): Promise<TokenOwner | undefined> {
        const row = await this.server.app
            .knex('access_tokens')
            .join('users', 'users.id', 'access_tokens.uid')
            .where({ 'access_tokens.token_hash': hash })
            .first(
                'users.*',
                'access_tokens.id as token_id',
                'access_tokens.name as token_name',
                'access_tokens.scope as token_scope',
                'access_tokens.token_last_eight',
                'access_tokens.created_at as token_created_at',
            );
        if (!row) {
            return undefined;
        }

        const { token_id, token_name, token_scope, token_last_eight, token_created_at, ...user } = row;
        return {
            token: {
                id: Number(token_id),
                uid: Number(user.id),
                name: token_name,
                scope: token_scope,
                token_last_eight,
                created_at: Number(token_created_at),
            },
            user: toUserRow(user),
        };
    }
}

export const tokens = defineService<TokenService>('tokens', (owner) => new TokenService(owner));
