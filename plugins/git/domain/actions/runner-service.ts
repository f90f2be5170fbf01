import Crypto from 'node:crypto';

import type { Knex } from 'knex';

import { randomToken, sha256Hex } from '../../../../lib/crypto.ts';
import { now } from '../../../../lib/database.ts';
import { BadRequestError, NotFoundError } from '../../../../lib/errors.ts';
import type { Paging } from '../../../../lib/paging.ts';
import { defineService } from '../../../../lib/services.ts';
import { Service } from '../../../../lib/service.ts';

/** A runner is offline a minute after its last contact, and busy for ten seconds after its last task update. */
export const RUNNER_OFFLINE_MS = 60_000;
export const RUNNER_IDLE_MS = 10_000;

/** Whose runners: the instance (owner 0) or an organisation. */
export interface RunnerScope {
    ownerId: number;
}

export const INSTANCE_SCOPE: RunnerScope = { ownerId: 0 };

export interface RunnerRow {
    id: number;
    uuid: string;
    name: string;
    owner_id: number;
    repo_id: number;
    version: string;
    labels: string[];
    ephemeral: boolean;
    is_disabled: boolean;
    last_online: number;
    last_active: number;
}

export interface ApiRunner {
    id: number;
    name: string;
    status: string;
    busy: boolean;
    disabled: boolean;
    ephemeral: boolean;
    labels: Array<{ id: number; name: string; type: string }>;
}

export interface Registration {
    token: string;
    name: string;
    version?: string;
    labels?: string[];
    ephemeral?: boolean;
}

/** A registration the runner protocol refuses, with the Connect code to answer. */
export class RegistrationError extends Error {
    constructor(
        readonly code: 'invalid_argument' | 'unauthenticated' | 'internal',
        message: string,
    ) {
        super(message);
    }
}

function toRunnerRow(raw: Record<string, unknown>): RunnerRow {
    return {
        id: Number(raw.id),
        uuid: String(raw.uuid),
        name: String(raw.name),
        owner_id: Number(raw.owner_id),
        repo_id: Number(raw.repo_id),
        version: String(raw.version),
        labels: JSON.parse(String(raw.agent_labels)) as string[],
        ephemeral: Boolean(raw.ephemeral),
        is_disabled: Boolean(raw.is_disabled),
        last_online: Number(raw.last_online),
        last_active: Number(raw.last_active),
    };
}

/** Gitea's ToActionRunner: online within a minute of the last contact, busy while active. */
export function toApiRunner(runner: RunnerRow, at = now()): ApiRunner {
    const online = at - runner.last_online <= RUNNER_OFFLINE_MS;
    return {
        id: runner.id,
        name: runner.name,
        status: online ? 'online' : 'offline',
        busy: online && at - runner.last_active <= RUNNER_IDLE_MS,
        disabled: runner.is_disabled,
        ephemeral: runner.ephemeral,
        labels: runner.labels.map((name, index) => ({ id: index, name, type: 'custom' })),
    };
}

function sameSecret(token: string, hash: string): boolean {
    const presented = Buffer.from(sha256Hex(token), 'hex');
    const stored = Buffer.from(hash, 'hex');
    return presented.length === stored.length && Crypto.timingSafeEqual(presented, stored);
}

/** Runners and their registration tokens, per scope (the instance or an organisation). */
export class RunnerService extends Service {
    #sealContext(ownerId: number): string {
        return `runner-registration-token:${ownerId}`;
    }

    /** The scope's latest token while it is active; otherwise a new one, which retires every earlier one. */
    async registrationToken(scope: RunnerScope): Promise<string> {
        return await this.knex.transaction(async (trx) => {
            const latest = await trx('action_runner_tokens').where({ owner_id: scope.ownerId, repo_id: 0 }).orderBy('id', 'desc').first();
            if (latest && latest.is_active) {
                return this.server.app.sealer.open(String(latest.token_sealed), this.#sealContext(scope.ownerId));
            }

            const token = randomToken(20);
            const at = now();
            await trx('action_runner_tokens').where({ owner_id: scope.ownerId, repo_id: 0 }).update({ is_active: false, updated_at: at });
            await trx('action_runner_tokens').insert({
                token_hash: sha256Hex(token),
                token_sealed: this.server.app.sealer.seal(token, this.#sealContext(scope.ownerId)),
                owner_id: scope.ownerId,
                repo_id: 0,
                is_active: true,
                created_at: at,
                updated_at: at,
            });
            return token;
        });
    }

    /** The runner protocol's Register: a valid, active token makes a runner in its scope; the token is then spent. */
    async register(registration: Registration): Promise<{ runner: RunnerRow; token: string }> {
        if (!registration.token || !registration.name) {
            throw new RegistrationError('invalid_argument', 'missing runner token, name');
        }

        return await this.knex.transaction(async (trx) => {
            const found = await trx('action_runner_tokens')
                .where({ token_hash: sha256Hex(registration.token) })
                .first();
            if (!found) {
                throw new RegistrationError('invalid_argument', 'runner registration token not found');
            }

            if (!found.is_active) {
                throw new RegistrationError(
                    'invalid_argument',
                    'runner registration token has been invalidated, please use the latest one',
                );
            }

            const ownerId = Number(found.owner_id);
            if (ownerId > 0 && !(await trx('users').where({ id: ownerId }).first('id'))) {
                throw new RegistrationError('internal', 'owner of the token not found');
            }

            const token = randomToken(20);
            const at = now();
            const [id] = await trx('action_runners').insert({
                uuid: Crypto.randomUUID(),
                name: [...registration.name].slice(0, 255).join(''),
                owner_id: ownerId,
                repo_id: 0,
                version: (registration.version ?? '').slice(0, 64),
                agent_labels: JSON.stringify(registration.labels ?? []),
                ephemeral: registration.ephemeral ?? false,
                token_hash: sha256Hex(token),
                last_online: at,
                created_at: at,
                updated_at: at,
            });
            await trx('action_runner_tokens').where({ id: found.id }).update({ is_active: false, updated_at: at });
            return { runner: toRunnerRow(await trx('action_runners').where({ id }).first()), token };
        });
    }

    /** The runner behind the protocol's `x-runner-uuid` and `x-runner-token` headers; its contact is recorded. */
    async authenticate(uuid: string, token: string): Promise<RunnerRow | undefined> {
        const raw = uuid ? await this.knex('action_runners').where({ uuid }).first() : undefined;
        if (!raw || !sameSecret(token, String(raw.token_hash))) {
            return undefined;
        }

        const lastOnline = now();
        await this.knex('action_runners').where({ id: raw.id }).update({ last_online: lastOnline });
        return toRunnerRow({ ...raw, last_online: lastOnline });
    }

    async declare(runner: RunnerRow, version: string, labels: string[]): Promise<RunnerRow> {
        await this.knex('action_runners')
            .where({ id: runner.id })
            .update({ version: version.slice(0, 64), agent_labels: JSON.stringify(labels), updated_at: now() });
        return { ...runner, version, labels };
    }

    #scoped(scope: RunnerScope | undefined): Knex.QueryBuilder {
        const query = this.knex('action_runners');
        return scope ? query.where({ owner_id: scope.ownerId }) : query;
    }

    /** Every runner for the instance's administrators (`scope` undefined), else the scope's own. */
    async list(
        scope: RunnerScope | undefined,
        disabled: boolean | undefined,
        paging: Paging,
    ): Promise<{ rows: RunnerRow[]; total: number }> {
        const query = this.#scoped(scope);
        if (disabled !== undefined) {
            query.where({ is_disabled: disabled });
        }

        const total = Number((await query.clone().count({ count: '*' }).first())?.count ?? 0);
        const rows = await query
            .orderBy([
                { column: 'last_online', order: 'desc' },
                { column: 'id', order: 'asc' },
            ])
            .limit(paging.limit)
            .offset(paging.offset);
        return { rows: rows.map(toRunnerRow), total };
    }

    /** A runner by its path id: 400 when not a number, 404 when unknown or outside the caller's scope. */
    async get(scope: RunnerScope | undefined, runnerId: string): Promise<RunnerRow> {
        if (!/^\d+$/.test(runnerId)) {
            throw new BadRequestError(`invalid runner id [${runnerId}]`);
        }

        const raw = await this.knex('action_runners')
            .where({ id: Number(runnerId) })
            .first();
        if (!raw) {
            throw new NotFoundError(`runner with id ${runnerId}: resource does not exist`);
        }

        const runner = toRunnerRow(raw);
        if (scope && runner.owner_id !== scope.ownerId) {
            throw new NotFoundError('No permission to access this runner');
        }

        return runner;
    }

    async setDisabled(runner: RunnerRow, disabled: boolean): Promise<RunnerRow> {
        await this.knex('action_runners').where({ id: runner.id }).update({ is_disabled: disabled, updated_at: now() });
        return { ...runner, is_disabled: disabled };
    }

    async delete(runner: RunnerRow): Promise<void> {
        await this.knex('action_runners').where({ id: runner.id }).delete();
    }
}

export const runners = defineService<RunnerService>('actionRunners', (owner) => new RunnerService(owner));
