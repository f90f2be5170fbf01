import Crypto from 'node:crypto';

import type { Server } from '@hapi/hapi';

import { sha256Hex } from '../../../../lib/crypto.ts';
import { now } from '../../../../lib/database.ts';
import { defineService } from '../../../../lib/services.ts';
import { type DeployUser, deployUserFromRow } from './user-service.ts';

export interface DeploySession {
    id: number;
    userId: number;
    mfaPending: boolean;
    expiresAt: number;
}

/**
 * Server-side sessions: the cookie carries a random id, the database only its SHA-256, so logging out,
 * disabling a user or changing a password ends sessions at once.
 */
export class SessionService {
    readonly #server: Server;

    constructor(server: Server) {
        this.#server = server;
    }

    get #lifetimeMs(): number {
        return this.#server.app.config.deploy.sessionHours * 3_600_000;
    }

    async create(userId: number, mfaPending: boolean, clientAddress: string): Promise<string> {
        const sessionId = Crypto.randomBytes(32).toString('base64url');
        const createdAt = now();
        await this.#server.app.knex('dp_sessions').insert({
            id_hash: sha256Hex(sessionId),
            user_id: userId,
            mfa_pending: mfaPending,
            client_address: clientAddress.slice(0, 64),
            created_at: createdAt,
            last_seen_at: createdAt,
            expires_at: createdAt + this.#lifetimeMs,
        });
        return sessionId;
    }

    /** The live session and its user, in one query (it runs on every signed-in request); expired sessions and disabled users find nothing. */
    async find(sessionId: string): Promise<{ session: DeploySession; user: DeployUser } | undefined> {
        const row = await this.#server.app
            .knex('dp_sessions')
            .join('dp_users', 'dp_users.id', 'dp_sessions.user_id')
            .where({ 'dp_sessions.id_hash': sha256Hex(sessionId) })
            .first('dp_users.*', 'dp_sessions.id as session_id', 'dp_sessions.mfa_pending', 'dp_sessions.expires_at');
        if (!row || Number(row.expires_at) <= now()) {
            return undefined;
        }

        const user = deployUserFromRow(row);
        if (user.disabled) {
            return undefined;
        }

        return {
            session: {
                id: Number(row.session_id),
                userId: user.id,
                mfaPending: Boolean(row.mfa_pending),
                expiresAt: Number(row.expires_at),
            },
            user,
        };
    }

    async completeMfa(sessionId: number): Promise<void> {
        await this.#server.app.knex('dp_sessions').where({ id: sessionId }).update({ mfa_pending: false, last_seen_at: now() });
    }

    async end(sessionId: number): Promise<void> {
        await this.#server.app.knex('dp_sessions').where({ id: sessionId }).delete();
    }

    /** Ends every session of the user, but the one given (the caller's own, when it changes its password). */
    async endAllFor(userId: number, exceptSessionId?: number): Promise<void> {
        const query = this.#server.app.knex('dp_sessions').where({ user_id: userId });
        if (exceptSessionId !== undefined) {
            query.whereNot({ id: exceptSessionId });
        }

        await query.delete();
    }
}

export const sessions = defineService<SessionService>('deploySessions', (owner) => new SessionService(owner));
