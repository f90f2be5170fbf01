import Crypto from 'node:crypto';

import type { Server } from '@hapi/hapi';

import { sha256Hex } from '../../../../lib/crypto.ts';
import { now, toRfc3339 } from '../../../../lib/database.ts';
import { NotFoundError } from '../../../../lib/errors.ts';
import { readCache, type ReadCache, type VersionSnapshot } from '../../../../lib/read-cache.ts';
import { defineService } from '../../../../lib/services.ts';
import { type DeployUser, deployUserFromRow } from './user-service.ts';
import { Service } from '../../../../lib/service.ts';

export interface DeploySession {
    id: number;
    userId: number;
    mfaPending: boolean;
    expiresAt: number;
}

/** A signed-in session as its user sees it in the list: never its secret, nor the secret's hash. */
export interface SessionSummary {
    id: number;
    createdAt: string;
    lastSeenAt: string;
    clientAddress: string;
    current: boolean;
}

/** A session row as the look-up read it; expiry and the last-seen step are checked on every request. */
interface SessionRow {
    session: DeploySession;
    user: DeployUser;
    lastSeenAt: number;
}

/** A live session and its user, with the write counters the look-up checked: the request's view of the database. */
export interface FoundSession {
    session: DeploySession;
    user: DeployUser;
    asOf?: VersionSnapshot;
}

/** Last seen is written at most this often, not on every request. */
const LAST_SEEN_STEP_MS = 60_000;

/**
 * Server-side sessions: the cookie carries a random id, the database only its SHA-256, so logging out,
 * disabling a user or changing a password ends sessions at once.
 */
export class SessionService extends Service {
    // Every signed-in request looks its session up: kept until a session or a user is written.
    readonly #byHash: ReadCache<SessionRow | undefined>;

    constructor(server: Server) {
        super(server);
        this.#byHash = readCache(server, ['dp_sessions', 'dp_users']);
    }

    get #lifetimeMs(): number {
        return this.server.app.config.deploy.sessionHours * 3_600_000;
    }

    async create(userId: number, mfaPending: boolean, clientAddress: string): Promise<string> {
        const sessionId = Crypto.randomBytes(32).toString('base64url');
        const createdAt = now();
        await this.server.app.knex('dp_sessions').insert({
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

    /**
     * The live session and its user (it runs on every signed-in request): one query, then answered from memory while
     * no session or user is written; expired sessions and disabled users find nothing.
     */
    async find(sessionId: string): Promise<FoundSession | undefined> {
        const hash = sha256Hex(sessionId);
        const asOf = await this.#byHash.snapshot();
        const found = await this.#byHash.get(hash, async () => await this.#lookUp(hash), asOf);
        if (!found || found.session.expiresAt <= now() || found.user.disabled) {
            return undefined;
        }

        if (now() - found.lastSeenAt >= LAST_SEEN_STEP_MS) {
            await this.server.app.knex('dp_sessions').where({ id: found.session.id }).update({ last_seen_at: now() });
            // The write is this process's: the snapshot taken before it is not reused.
            return { session: found.session, user: found.user };
        }

        return { session: found.session, user: found.user, asOf };
    }

    async #lookUp(hash: string): Promise<SessionRow | undefined> {
        const row = await this.server.app
            .knex('dp_sessions')
            .join('dp_users', 'dp_users.id', 'dp_sessions.user_id')
            .where({ 'dp_sessions.id_hash': hash })
            .first(
                'dp_users.*',
                'dp_sessions.id as session_id',
                'dp_sessions.mfa_pending',
                'dp_sessions.expires_at',
                'dp_sessions.last_seen_at',
            );
        if (!row) {
            return undefined;
        }

        const user = deployUserFromRow(row);
        return {
            session: {
                id: Number(row.session_id),
                userId: user.id,
                mfaPending: Boolean(row.mfa_pending),
                expiresAt: Number(row.expires_at),
            },
            user,
            lastSeenAt: Number(row.last_seen_at),
        };
    }

    async completeMfa(sessionId: number): Promise<void> {
        await this.server.app.knex('dp_sessions').where({ id: sessionId }).update({ mfa_pending: false, last_seen_at: now() });
    }

    /** The user's signed-in sessions (not those still waiting for a second factor), the latest seen first. */
    async listFor(userId: number, currentSessionId: number): Promise<SessionSummary[]> {
        const rows = await this.server.app
            .knex('dp_sessions')
            .where({ user_id: userId, mfa_pending: false })
            .where('expires_at', '>', now())
            .orderBy([
                { column: 'last_seen_at', order: 'desc' },
                { column: 'id', order: 'desc' },
            ])
            .select('id', 'created_at', 'last_seen_at', 'client_address');
        return rows.map((row) => ({
            id: Number(row.id),
            createdAt: toRfc3339(Number(row.created_at)),
            lastSeenAt: toRfc3339(Number(row.last_seen_at)),
            clientAddress: String(row.client_address),
            current: Number(row.id) === currentSessionId,
        }));
    }

    /** Ends one of the user's own sessions; another user's is not found. */
    async endOwn(userId: number, sessionId: number): Promise<void> {
        const ended = await this.server.app.knex('dp_sessions').where({ id: sessionId, user_id: userId }).delete();
        if (ended === 0) {
            throw new NotFoundError('no such session');
        }
    }

    async end(sessionId: number): Promise<void> {
        await this.server.app.knex('dp_sessions').where({ id: sessionId }).delete();
    }

    /** Ends every session of the user, but the one given (the caller's own, when it changes its password). */
    async endAllFor(userId: number, exceptSessionId?: number): Promise<void> {
        const query = this.server.app.knex('dp_sessions').where({ user_id: userId });
        if (exceptSessionId !== undefined) {
            query.whereNot({ id: exceptSessionId });
        }

        await query.delete();
    }
}

export const sessions = defineService<SessionService>('deploySessions', (owner) => new SessionService(owner));
