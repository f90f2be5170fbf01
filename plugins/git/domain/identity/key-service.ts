import { createRequire } from 'node:module';

import type { Knex } from 'knex';
import type sshpk from 'sshpk';

import { isUniqueViolation, now } from '../../../../lib/database.ts';
import { ForbiddenError, NotFoundError, ValidationError } from '../../../../lib/errors.ts';
import { defineService } from '../../../../lib/services.ts';
import type { UserRow } from './user-service.ts';
import { Service } from '../../../../lib/service.ts';

export interface PublicKeyRow {
    id: number;
    owner_id: number;
    name: string;
    fingerprint: string;
    content: string;
    read_only: boolean;
    type: string;
    created_at: number;
    updated_at: number;
    /** 0 until the key is first used. */
    last_used_at: number;
}

export interface ParsedPublicKey {
    /** `ssh-ed25519`, `ssh-rsa`, `ecdsa-sha2-nistp256`... */
    algorithm: string;
    /** The authorized_keys line: algorithm, base64 and the comment if there was one. */
    content: string;
    /** OpenSSH's `SHA256:...` form. */
    fingerprint: string;
}

/** Gitea's default `[ssh.minimum_key_sizes]`; a type missing here (DSA) is refused. */
const MINIMUM_KEY_BITS: Partial<Record<string, number>> = { ed25519: 256, ecdsa: 256, rsa: 3071 };

/** Titles share a unique index with the owner, so they stay within an indexable length on MySQL. */
export const MAX_KEY_TITLE_LENGTH = 191;

const SSH2_BEGIN = '---- BEGIN SSH2 PUBLIC KEY ----';
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

function invalidKey(reason: string): ValidationError {
    return new ValidationError(`Invalid key content: ${reason}`);
}

interface KeyText {
    algorithm?: string;
    base64: string;
    comment: string;
}

/** RFC 4716 (what PuTTY exports): header lines hold `:` (and may continue with `\`), the markers hold `-`. */
function ssh2KeyText(text: string): KeyText {
    let base64 = '';
    let continuation = false;
    for (const line of text.split(/\r\n|\r|\n/)) {
        if (continuation || /[:-]/.test(line)) {
            continuation = line.endsWith('\\');
        } else {
            base64 += line.trim();
        }
    }

    return { base64, comment: '' };
}

/** An authorized_keys line, `[type] base64 [comment]`, possibly wrapped over several lines. */
function openSshKeyText(text: string): KeyText {
    const [first = '', second, ...rest] = text
        .replace(/\r?\n/g, '')
        .trim()
        .split(/[ \t]+/);
    return second === undefined ? { base64: first, comment: '' } : { algorithm: first, base64: second, comment: rest.join(' ') };
}

function readWireKey(base64: string): sshpk.Key {
    if (!BASE64.test(base64)) {
        throw invalidKey('invalid ssh public key');
    }

    try {
        // Loaded on first use, not at start (about 10 MB and a fifth of a second).
        const { parseKey } = createRequire(import.meta.url)('sshpk') as typeof sshpk;
        return parseKey(Buffer.from(base64, 'base64'), 'rfc4253');
    } catch {
        throw invalidKey('invalid ssh public key');
    }
}

function checkKeySize(key: sshpk.Key): void {
    const minimum = MINIMUM_KEY_BITS[key.type];
    if (minimum === undefined) {
        throw invalidKey(`key type is not allowed: ${key.type}`);
    }

    if (key.size < minimum) {
        throw invalidKey(`key length is not enough: got ${key.size}, needs ${minimum}`);
    }
}

/** Parses a public key as Gitea reads one (OpenSSH or SSH2 text) and checks its type and size. */
export function parsePublicKey(text: string): ParsedPublicKey {
    const trimmed = text.trim();
    const keyText = trimmed.startsWith(SSH2_BEGIN) ? ssh2KeyText(trimmed) : openSshKeyText(trimmed);
    const key = readWireKey(keyText.base64);
    const algorithm = key.toString('ssh').split(' ')[0] ?? '';
    if (keyText.algorithm !== undefined && keyText.algorithm !== algorithm) {
        throw invalidKey(`key type and content does not match: ${keyText.algorithm} - ${algorithm}`);
    }

    checkKeySize(key);
    const base64 = key.toBuffer('rfc4253').toString('base64');
    return {
        algorithm,
        content: [algorithm, base64, keyText.comment].filter((part) => part !== '').join(' '),
        fingerprint: key.fingerprint('sha256').toString(),
    };
}

function toPublicKeyRow(raw: Record<string, unknown>): PublicKeyRow {
    return {
        id: Number(raw.id),
        owner_id: Number(raw.owner_id),
        name: String(raw.name),
        fingerprint: String(raw.fingerprint),
        content: String(raw.content),
        read_only: Boolean(raw.read_only),
        type: String(raw.type),
        created_at: Number(raw.created_at),
        updated_at: Number(raw.updated_at),
        last_used_at: Number(raw.last_used_at),
    };
}

export interface NewPublicKey {
    title: string;
    key: string;
}

/** Users' SSH public keys, with Gitea's rules: a key belongs to one account only, titles are unique per user. */
export class PublicKeyService extends Service {
    async byId(id: number): Promise<PublicKeyRow | undefined> {
        const raw = await this.knex('public_keys').where({ id }).first();
        return raw ? toPublicKeyRow(raw) : undefined;
    }

    /** Adds a user key; as in Gitea, user keys are always read-write (read-only applies to deploy keys). */
    async add(owner: UserRow, input: NewPublicKey): Promise<PublicKeyRow> {
        if (input.title.length > MAX_KEY_TITLE_LENGTH) {
            throw new ValidationError('[Title]: MaxSize');
        }

        const parsed = parsePublicKey(input.key);
        try {
            return await this.knex.transaction(async (trx) => {
                await this.#checkFree(trx, owner, input.title, parsed.fingerprint);
                const createdAt = now();
                const [id] = await trx('public_keys').insert({
                    owner_id: owner.id,
                    name: input.title,
                    fingerprint: parsed.fingerprint,
                    content: parsed.content,
                    read_only: false,
                    type: 'user',
                    created_at: createdAt,
                    updated_at: createdAt,
                    last_used_at: 0,
                });
                return toPublicKeyRow(await trx('public_keys').where({ id }).first());
            });
        } catch (error) {
            if (isUniqueViolation(error)) {
                // Another request added the same key or title meanwhile: answer as if it had come first.
                await this.#checkFree(this.knex, owner, input.title, parsed.fingerprint);
            }

            throw error;
        }
    }

    async #checkFree(knex: Knex, owner: UserRow, title: string, fingerprint: string): Promise<void> {
        if (await knex('public_keys').where({ fingerprint }).first('id')) {
            throw new ValidationError('Key content has been used as non-deploy key');
        }

        if (await knex('public_keys').where({ owner_id: owner.id, name: title }).first('id')) {
            throw new ValidationError('Key title has been used');
        }
    }

    /** Deletes a key on behalf of `actor`, who must own it or be a site administrator. */
    async delete(actor: UserRow, id: number): Promise<void> {
        const key = await this.byId(id);
        if (!key) {
            throw new NotFoundError();
        }

        if (key.owner_id !== actor.id && !actor.is_admin) {
            throw new ForbiddenError('You do not have access to this key');
        }

        await this.knex('public_keys').where({ id }).delete();
    }
}

export const publicKeys = defineService<PublicKeyService>('publicKeys', (owner) => new PublicKeyService(owner));
