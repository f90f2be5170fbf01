import { ServiceError } from '../../../../lib/errors.ts';
import { defineService } from '../../../../lib/services.ts';
import { OidcSignInError, oidc, type PendingSignIn } from '../oidc/oidc-service.ts';
import { type AuditEntry, audit } from './audit-service.ts';
import { loginLimiter } from './login-limiter.ts';
import { sessions } from './session-service.ts';
import { type CodeCheck, totp } from './totp-service.ts';
import { type DeployUser, deployUsers } from './user-service.ts';
import { Service } from '../../../../lib/service.ts';

/** A refused password or code: 401, saying no more than which of them was wrong. */
export class SignInRefusedError extends ServiceError {
    constructor(message: string) {
        super(message, 401);
    }
}

/** Where a sign-in step comes from: the client's address, and the session its browser already holds, if any. */
export interface SignInClient {
    address: string;
    sessionId?: number;
}

/** A step that succeeded: the new session's id for the cookie, and whether it still waits for a second factor. */
export interface SignedIn {
    sid: string;
    user: DeployUser;
    mfaRequired: boolean;
}

/** The user's own password or current code, asked again before a change to the account. */
export interface Proof {
    password?: string;
    code?: string;
}

/**
 * The deploy manager's sign-in: password and second factor, or an identity provider's sign-in, each counted by
 * the login limiter where a secret is checked, audited, and ending in a new session.
 */
export class SignInService extends Service {
    /** Password first: a user with TOTP on gets a session that waits for the code. */
    async withPassword(email: string, password: string, client: SignInClient): Promise<SignedIn> {
        const user = await loginLimiter(this.server).guard(
            email,
            client.address,
            async (priority) => {
                const found = await deployUsers(this.server).authenticate(email, password, priority);
                return found && !found.disabled ? found : undefined;
            },
            (found) => !found.totpEnabled,
        );
        if (!user) {
            await this.#record(client, { action: 'auth.login', target: email.toLowerCase(), outcome: 'failure' });
            throw new SignInRefusedError('wrong e-mail or password');
        }

        const sid = await this.#rotate(client, user, user.totpEnabled);
        if (user.totpEnabled) {
            await this.#record(client, { actor: user, action: 'auth.password', target: user.email });
            return { sid, user, mfaRequired: true };
        }

        await this.#signedIn(client, user);
        return { sid, user, mfaRequired: false };
    }

    /** The second factor of a session that waits for it. */
    async withCode(user: DeployUser, code: string, client: SignInClient): Promise<SignedIn> {
        let check = 'refused' as CodeCheck;
        const valid = await loginLimiter(this.server).guard(user.email, client.address, async () => {
            check = await totp(this.server).checkCode(user.id, code);
            return check === 'accepted';
        });
        if (!valid) {
            await this.#record(client, { actor: user, action: 'auth.mfa', target: user.email, outcome: 'failure' });
            throw new SignInRefusedError(
                check === 'reused' ? 'this code was already used: wait for the next one from your app' : 'the code is not valid',
            );
        }

        const sid = await this.#rotate(client, user, false);
        await this.#signedIn(client, user, { mfa: true });
        return { sid, user, mfaRequired: false };
    }

    /** Sends the browser to the identity provider; a refusal is audited with its reason and thrown as OidcSignInError. */
    async beginOidc(client: SignInClient): Promise<{ authorizationUrl: string; pending: PendingSignIn }> {
        return await this.#auditedOidc(client, () => oidc(this.server).begin());
    }

    /**
     * A complete session, as after password and second factor: the identity provider's sign-in stands in for both
     * (its own second factor, when it asks for one), so the deploy user's TOTP is not asked again. The user is the
     * one with the e-mail the provider vouches for, and must not be disabled.
     */
    async completeOidc(pending: unknown, callbackQuery: string, client: SignInClient): Promise<SignedIn> {
        return await this.#auditedOidc(client, async () => {
            const email = await oidc(this.server).complete(pending, callbackQuery);
            const user = await deployUsers(this.server).byEmail(email);
            if (!user || user.disabled) {
                throw new OidcSignInError(user ? 'the user is disabled' : 'no user has this e-mail', email);
            }

            const sid = await this.#rotate(client, user, false);
            await this.#signedIn(client, user, { method: 'oidc' });
            return { sid, user, mfaRequired: false };
        });
    }

    async signOut(user: DeployUser, sessionId: number, address: string): Promise<void> {
        await sessions(this.server).end(sessionId);
        await this.#record({ address }, { actor: user, action: 'auth.logout', target: user.email });
    }

    /** A check of the signed-in user's own password or code, counted with the failed sign-ins of the account and address. */
    async confirm(user: DeployUser, address: string, { password, code }: Proof): Promise<boolean> {
        return await loginLimiter(this.server).guard(user.email, address, (priority) =>
            password
                ? deployUsers(this.server).checkPassword(user.id, password, priority)
                : totp(this.server).verifyCode(user.id, code ?? ''),
        );
    }

    /** A new session id for every step of a sign-in, so that a cookie from before it is worth nothing after. */
    async #rotate(client: SignInClient, user: DeployUser, mfaPending: boolean): Promise<string> {
        if (client.sessionId !== undefined) {
            await sessions(this.server).end(client.sessionId);
        }

        return await sessions(this.server).create(user.id, mfaPending, client.address);
    }

    async #signedIn(client: SignInClient, user: DeployUser, details?: AuditEntry['details']): Promise<void> {
        await deployUsers(this.server).touchLogin(user.id);
        await this.#record(client, { actor: user, action: 'auth.login', target: user.email, details });
    }

    /** Every refusal of an identity provider's sign-in is audited with its reason; the browser learns only that it failed. */
    async #auditedOidc<T>(client: SignInClient, work: () => Promise<T>): Promise<T> {
        try {
            return await work();
        } catch (error) {
            if (error instanceof OidcSignInError) {
                const details = { reason: error.reason.slice(0, 300) };
                await this.#record(client, { action: 'auth.oidc', target: error.email, outcome: 'failure', details });
            }

            throw error;
        }
    }

    async #record(client: Pick<SignInClient, 'address'>, entry: Omit<AuditEntry, 'clientAddress'>): Promise<void> {
        await audit(this.server).record({ ...entry, clientAddress: client.address });
    }
}

export const signIn = defineService<SignInService>('deploySignIn', (owner) => new SignInService(owner));
