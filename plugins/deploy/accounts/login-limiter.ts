import type { Server } from '@hapi/hapi';

import { TooManyRequestsError } from '../../../lib/errors.ts';
import { service } from '../../../lib/services.ts';

interface Window {
    failures: number;
    startedAt: number;
}

export class TooManyAttemptsError extends TooManyRequestsError {
    constructor(retryAfterSeconds: number) {
        super('too many failed attempts; try again later', retryAfterSeconds);
    }
}

/**
 * Counts failed sign-ins and two-factor codes per account and per client address within a window;
 * past the limit, attempts are refused (429 with Retry-After) until the window ends. Kept in memory:
 * a restart forgets, which errs on the side of letting people in.
 */
export class LoginLimiter {
    readonly #server: Server;
    readonly #windows = new Map<string, Window>();

    constructor(server: Server) {
        this.#server = server;
    }

    get #settings() {
        return this.#server.app.config.deploy;
    }

    #window(key: string, at: number): Window {
        const windowMs = this.#settings.loginWindowSeconds * 1000;
        let window = this.#windows.get(key);
        if (!window || at - window.startedAt >= windowMs) {
            window = { failures: 0, startedAt: at };
            this.#windows.set(key, window);
        }

        return window;
    }

    #keys(account: string, address: string): Array<[string, number]> {
        return [
            [`account:${account.toLowerCase()}`, this.#settings.maxFailuresPerAccount],
            [`address:${address}`, this.#settings.maxFailuresPerAddress],
        ];
    }

    /** Throws TooManyAttemptsError when either the account or the address has used up its attempts. */
    check(account: string, address: string, at = Date.now()): void {
        for (const [key, limit] of this.#keys(account, address)) {
            const window = this.#window(key, at);
            if (window.failures >= limit) {
                const retryAfter = Math.ceil((window.startedAt + this.#settings.loginWindowSeconds * 1000 - at) / 1000);
                throw new TooManyAttemptsError(Math.max(1, retryAfter));
            }
        }
    }

    fail(account: string, address: string, at = Date.now()): void {
        for (const [key] of this.#keys(account, address)) {
            this.#window(key, at).failures += 1;
        }
    }

    succeed(account: string): void {
        this.#windows.delete(`account:${account.toLowerCase()}`);
    }
}

export const loginLimiter = (server: Server): LoginLimiter => service(server, 'loginLimiter', (owner) => new LoginLimiter(owner));
