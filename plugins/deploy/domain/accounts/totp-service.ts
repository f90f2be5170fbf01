import Crypto from 'node:crypto';

import type { Knex } from 'knex';

import { sha256Hex } from '../../../../lib/crypto.ts';
import { now } from '../../../../lib/database.ts';
import { ValidationError } from '../../../../lib/errors.ts';
import { defineService } from '../../../../lib/services.ts';
import type { DeployUser } from './user-service.ts';
import { Service } from '../../../../lib/service.ts';

const PERIOD_SECONDS = 30;
const RECOVERY_CODES = 10;
const ISSUER = 'Gatehouse';

/** How a code check went: a current code already used within its window is `reused`. */
export type CodeCheck = 'accepted' | 'refused' | 'reused';

export interface TotpSetup {
    secret: string;
    otpauthUri: string;
    /** The URI as a QR code, a PNG data URL. */
    qrCode: string;
}

function recoveryCode(): string {
    const raw = Crypto.randomBytes(5).toString('hex');
    return `${raw.slice(0, 5)}-${raw.slice(5)}`;
}

/** Stores only the codes' hashes; the codes themselves are returned to be shown once. */
async function replaceRecoveryCodes(trx: Knex.Transaction, userId: number): Promise<string[]> {
    const codes = Array.from({ length: RECOVERY_CODES }, recoveryCode);
    await trx('dp_recovery_codes').where({ user_id: userId }).delete();
    await trx('dp_recovery_codes').insert(codes.map((code) => ({ user_id: userId, code_hash: sha256Hex(code) })));
    return codes;
}

/**
 * Two factors with TOTP (otplib): the secret is sealed with the master key; a code is accepted once
 * (the time step it matched is remembered); recovery codes are shown once and stored hashed.
 */
export class TotpService extends Service {
    #aad(userId: number): string {
        return `dp_users.totp:${userId}`;
    }

    async beginSetup(user: DeployUser): Promise<TotpSetup> {
        // otplib and the QR code encoder are loaded when first needed, not by every server at start (about 12 MB).
        const { generateSecret, generateURI } = await import('otplib');
        const secret = generateSecret();
        const otpauthUri = generateURI({ issuer: ISSUER, label: user.email, secret });
        await this.server.app
            .knex('dp_users')
            .where({ id: user.id })
            .update({ totp_pending_sealed: this.server.app.sealer.seal(secret, this.#aad(user.id)) });
        const { default: QRCode } = await import('qrcode');
        return { secret, otpauthUri, qrCode: await QRCode.toDataURL(otpauthUri) };
    }

    /** Turns two factors on with the pending secret once a code from it is given; returns the recovery codes. */
    async enable(user: DeployUser, code: string): Promise<string[]> {
        const row = await this.server.app.knex('dp_users').where({ id: user.id }).first('totp_pending_sealed');
        if (!row?.totp_pending_sealed) {
            throw new ValidationError('start the two-factor setup first');
        }

        const secret = this.server.app.sealer.open(String(row.totp_pending_sealed), this.#aad(user.id));
        const step = await this.#matchingStep(secret, code, 0);
        if (step === undefined) {
            throw new ValidationError('code: the code is not valid');
        }

        return await this.server.app.knex.transaction(async (trx) => {
            await trx('dp_users').where({ id: user.id }).update({
                totp_secret_sealed: row.totp_pending_sealed,
                totp_pending_sealed: null,
                totp_enabled: true,
                totp_last_step: step,
                updated_at: now(),
            });
            return await replaceRecoveryCodes(trx, user.id);
        });
    }

    /** New recovery codes in place of all the old ones, used or not; only while two factors are on. */
    async regenerateRecoveryCodes(userId: number): Promise<string[]> {
        return await this.server.app.knex.transaction(async (trx) => {
            const row = await trx('dp_users').where({ id: userId }).first('totp_enabled');
            if (!row?.totp_enabled) {
                throw new ValidationError('two factors are off: turn them on first');
            }

            return await replaceRecoveryCodes(trx, userId);
        });
    }

    async disable(userId: number): Promise<void> {
        await this.server.app.knex.transaction(async (trx) => {
            await trx('dp_users')
                .where({ id: userId })
                .update({ totp_secret_sealed: null, totp_pending_sealed: null, totp_enabled: false, totp_last_step: 0, updated_at: now() });
            await trx('dp_recovery_codes').where({ user_id: userId }).delete();
        });
    }

    /** A current TOTP code not used before, or an unused recovery code (used up by this call). */
    async verifyCode(userId: number, code: string): Promise<boolean> {
        return (await this.checkCode(userId, code)) === 'accepted';
    }

    /**
     * As verifyCode, telling a refused code from a current one that was already used (a TOTP code counts once, so
     * the person must wait for the next one, and should be told so).
     */
    async checkCode(userId: number, code: string): Promise<CodeCheck> {
        const row = await this.server.app
            .knex('dp_users')
            .where({ id: userId })
            .first('totp_secret_sealed', 'totp_last_step', 'totp_enabled');
        if (!row?.totp_enabled || !row.totp_secret_sealed) {
            return 'refused';
        }

        const normalised = code.trim();
        if (/^\d{6}$/.test(normalised)) {
            const secret = this.server.app.sealer.open(String(row.totp_secret_sealed), this.#aad(userId));
            const step = await this.#matchingStep(secret, normalised, 0);
            if (step === undefined) {
                return 'refused';
            }

            // Only one request can move the last step forward past this one: a replay loses the race.
            const updated = await this.server.app
                .knex('dp_users')
                .where({ id: userId })
                .where('totp_last_step', '<', step)
                .update({ totp_last_step: step });
            return updated === 1 ? 'accepted' : 'reused';
        }

        const used = await this.server.app
            .knex('dp_recovery_codes')
            .where({ user_id: userId, code_hash: sha256Hex(normalised.toLowerCase()), used_at: 0 })
            .update({ used_at: now() });
        return used === 1 ? 'accepted' : 'refused';
    }

    /** The time step a code matches (one step of drift either way), if it is later than `afterStep`. */
    async #matchingStep(secret: string, code: string, afterStep: number): Promise<number | undefined> {
        if (!/^\d{6}$/.test(code.trim())) {
            return undefined;
        }

        const { verify } = await import('otplib');
        const result = await verify({ secret, token: code.trim(), epochTolerance: PERIOD_SECONDS });
        if (!result.valid) {
            return undefined;
        }

        const step = Math.floor(Date.now() / 1000 / PERIOD_SECONDS) + result.delta;
        return step > afterStep ? step : undefined;
    }
}

export const totp = defineService<TotpService>('totp', (owner) => new TotpService(owner));
