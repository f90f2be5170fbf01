import Crypto from 'node:crypto';
import Fs from 'node:fs';
import Path from 'node:path';

import { sha256Hex } from '../../../../lib/crypto.ts';
import { ConflictError, ForbiddenError } from '../../../../lib/errors.ts';
import { defineService } from '../../../../lib/services.ts';
import { settings } from '../../../../lib/settings.ts';
import { type DeployUser, deployUsers } from './user-service.ts';
import { Service } from '../../../../lib/service.ts';

const TOKEN_SETTING = 'deploy.setup_token_hash';

export interface SetupInput {
    token: string;
    email: string;
    name: string;
    password: string;
}

/**
 * First run: until an administrator exists, a one-time setup token (printed to the log and written to
 * DATA_DIR/setup-token, mode 0600) is what creates the first one. The token dies with its use.
 */
export class SetupService extends Service {
    /** Where the setup token waits until the first administrator exists (shown on the setup page meanwhile). */
    get tokenFile(): string {
        return Path.join(this.server.app.config.dataDir, 'setup-token');
    }

    async needsSetup(): Promise<boolean> {
        return (await deployUsers(this.server).count()) === 0;
    }

    /** At start: makes (or keeps) the setup token while no user exists; returns it so it can be logged. */
    async ensureToken(): Promise<string | undefined> {
        if (!(await this.needsSetup())) {
            Fs.rmSync(this.tokenFile, { force: true });
            return undefined;
        }

        const stored = await settings(this.server).get<string>(TOKEN_SETTING);
        if (stored && Fs.existsSync(this.tokenFile)) {
            const token = Fs.readFileSync(this.tokenFile, 'utf8').trim();
            if (sha256Hex(token) === stored) {
                return token;
            }
        }

        const token = Crypto.randomBytes(24).toString('base64url');
        await settings(this.server).set(TOKEN_SETTING, sha256Hex(token));
        Fs.mkdirSync(this.server.app.config.dataDir, { recursive: true });
        Fs.rmSync(this.tokenFile, { force: true });
        Fs.writeFileSync(this.tokenFile, `${token}\n`, { mode: 0o600 });
        return token;
    }

    async complete(input: SetupInput): Promise<DeployUser> {
        const stored = await settings(this.server).get<string>(TOKEN_SETTING);
        if (!(await this.needsSetup()) || !stored) {
            throw new ConflictError('setup is already done');
        }

        const given = Buffer.from(sha256Hex(input.token));
        if (!Crypto.timingSafeEqual(given, Buffer.from(stored))) {
            throw new ForbiddenError('the setup token is not valid');
        }

        const user = await this.server.app.knex.transaction(async (trx) => {
            const created = await deployUsers(this.server).create(
                { email: input.email, name: input.name, password: input.password, role: 'admin' },
                trx,
            );
            await trx('instance_settings').where({ name: TOKEN_SETTING }).delete();
            return created;
        });
        Fs.rmSync(this.tokenFile, { force: true });
        return user;
    }
}

export const setup = defineService<SetupService>('setup', (owner) => new SetupService(owner));
