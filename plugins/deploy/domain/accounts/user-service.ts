import Crypto from 'node:crypto';

import type { Knex } from 'knex';

import { now } from '../../../../lib/database.ts';
import { ConflictError, NotFoundError, ValidationError } from '../../../../lib/errors.ts';
import { defineService } from '../../../../lib/services.ts';
import { isValidEmail } from '../../../../lib/email.ts';
import { type HashPriority, hashPassword, verifyPassword } from '../../../../lib/passwords.ts';
import { Service } from '../../../../lib/service.ts';
import { cell, rowReader } from '../../../../lib/row-reader.ts';

export const DEPLOY_ROLES = ['viewer', 'editor', 'admin'] as const;
export type DeployRole = (typeof DEPLOY_ROLES)[number];

export interface DeployUser {
    id: number;
    email: string;
    name: string;
    role: DeployRole;
    disabled: boolean;
    totpEnabled: boolean;
    createdAt: number;
    lastLoginAt: number;
}

interface DeployUserRow extends DeployUser {
    passwordHash: string;
}

const toUser = rowReader<DeployUserRow>({
    id: ['id', cell.number],
    email: ['email', cell.string],
    name: ['name', cell.string],
    role: ['role', cell.as<DeployRole>()],
    disabled: ['disabled', cell.boolean],
    totpEnabled: ['totp_enabled', cell.boolean],
    createdAt: ['created_at', cell.number],
    lastLoginAt: ['last_login_at', cell.number],
    passwordHash: ['password_hash', cell.string],
});

/** A user from a `dp_users` row (or a join carrying its columns), without the password hash. */
export function deployUserFromRow(row: Record<string, unknown>): DeployUser {
    return publicUser(toUser(row));
}

/** What the API shows of a user: never the password hash or the two-factor secret. */
export function publicUser(user: DeployUser): DeployUser {
    const { id, email, name, role, disabled, totpEnabled, createdAt, lastLoginAt } = user;
    return { id, email, name, role, disabled, totpEnabled, createdAt, lastLoginAt };
}

export interface NewDeployUser {
    email: string;
    name: string;
    password: string;
    role: DeployRole;
}

export interface DeployUserChanges {
    name?: string;
    role?: DeployRole;
    disabled?: boolean;
    password?: string;
}

export const MIN_DEPLOY_PASSWORD_LENGTH = 10;

/** The deploy manager's own users (not the git service's): e-mail, name, argon2id password, role. */
export class DeployUserService extends Service {
    async count(): Promise<number> {
        return Number((await this.knex('dp_users').count({ count: '*' }).first())?.count ?? 0);
    }

    /** How many users there are, and how many of them are disabled: one counting query. */
    async counts(): Promise<{ total: number; disabled: number }> {
        const row = await this.knex('dp_users')
            .first()
            .count({ total: '*' })
            .sum({ disabled: this.knex.raw('case when disabled then 1 else 0 end') });
        return { total: Number(row?.total ?? 0), disabled: Number(row?.disabled ?? 0) };
    }

    async byId(id: number): Promise<DeployUser | undefined> {
        const row = await this.knex('dp_users').where({ id }).first();
        return row ? deployUserFromRow(row) : undefined;
    }

    /** The user with this e-mail (stored in lower case), or undefined. */
    async byEmail(email: string): Promise<DeployUser | undefined> {
        const row = await this.knex('dp_users').where({ email }).first();
        return row ? deployUserFromRow(row) : undefined;
    }

    async require(id: number): Promise<DeployUser> {
        const user = await this.byId(id);
        if (!user) {
            throw new NotFoundError('user not found');
        }

        return user;
    }

    async list(): Promise<DeployUser[]> {
        return (await this.knex('dp_users').orderBy('id')).map(deployUserFromRow);
    }

    /** The user whose e-mail and password these are, or undefined (the caller must not say which part was wrong). */
    async authenticate(email: string, password: string, priority?: HashPriority): Promise<DeployUser | undefined> {
        const row = await this.knex('dp_users').where({ email: email.trim().toLowerCase() }).first();
        if (!row) {
            // Spend the same time as a real check, so that timing does not tell which e-mails exist.
            await verifyPassword(await unknownUserHash(), password, priority);
            return undefined;
        }

        const user = toUser(row);
        return (await verifyPassword(user.passwordHash, password, priority)) ? publicUser(user) : undefined;
    }

    async checkPassword(userId: number, password: string, priority?: HashPriority): Promise<boolean> {
        const row = await this.knex('dp_users').where({ id: userId }).first('password_hash');
        return Boolean(row) && (await verifyPassword(String(row.password_hash), password, priority));
    }

    async create(input: NewDeployUser, trx: Knex = this.knex): Promise<DeployUser> {
        const email = input.email.trim().toLowerCase();
        if (!isValidEmail(email)) {
            throw new ValidationError('email: not a valid e-mail address');
        }

        checkPassword(input.password);
        if (await trx('dp_users').where({ email }).first('id')) {
            throw new ConflictError('a user with this e-mail already exists');
        }

        const createdAt = now();
        const [id] = await trx('dp_users').insert({
            email,
            name: input.name,
            password_hash: await hashPassword(input.password),
            role: input.role,
            created_at: createdAt,
            updated_at: createdAt,
        });
        return deployUserFromRow(await trx('dp_users').where({ id }).first());
    }

    /** Changes a user; the last active administrator can be neither demoted nor disabled. */
    async update(id: number, changes: DeployUserChanges): Promise<DeployUser> {
        const user = await this.require(id);
        const losesAdmin =
            user.role === 'admin' &&
            !user.disabled &&
            ((changes.role !== undefined && changes.role !== 'admin') || changes.disabled === true);
        if (losesAdmin && (await this.#activeAdmins()) <= 1) {
            throw new ValidationError('the last active administrator cannot be demoted or disabled');
        }

        const update: Record<string, unknown> = { updated_at: now() };
        if (changes.name !== undefined) update.name = changes.name;
        if (changes.role !== undefined) update.role = changes.role;
        if (changes.disabled !== undefined) update.disabled = changes.disabled;
        if (changes.password !== undefined) {
            checkPassword(changes.password);
            update.password_hash = await hashPassword(changes.password);
        }

        await this.knex('dp_users').where({ id }).update(update);
        return await this.require(id);
    }

    async delete(id: number): Promise<DeployUser> {
        const user = await this.require(id);
        if (user.role === 'admin' && !user.disabled && (await this.#activeAdmins()) <= 1) {
            throw new ValidationError('the last active administrator cannot be deleted');
        }

        await this.knex('dp_users').where({ id }).delete();
        return user;
    }

    async touchLogin(id: number): Promise<void> {
        await this.knex('dp_users').where({ id }).update({ last_login_at: now() });
    }

    async #activeAdmins(): Promise<number> {
        return Number((await this.knex('dp_users').where({ role: 'admin', disabled: false }).count({ count: '*' }).first())?.count ?? 0);
    }
}

let dummyHash: Promise<string> | undefined;

/** A hash to check against when the e-mail is unknown, made once. */
function unknownUserHash(): Promise<string> {
    dummyHash ??= hashPassword(Crypto.randomBytes(16).toString('hex'));
    return dummyHash;
}

function checkPassword(password: string): void {
    if (password.length < MIN_DEPLOY_PASSWORD_LENGTH) {
        throw new ValidationError(`password: must be at least ${MIN_DEPLOY_PASSWORD_LENGTH} characters`);
    }
}

export const deployUsers = defineService<DeployUserService>('deployUsers', (owner) => new DeployUserService(owner));
