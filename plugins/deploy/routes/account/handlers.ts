import type { Lifecycle, Request } from '@hapi/hapi';

import { ForbiddenError, ValidationError } from '../../../../lib/errors.ts';
import type { HashPriority } from '../../../../lib/passwords.ts';
import { audit } from '../../domain/accounts/audit-service.ts';
import { loginLimiter } from '../../domain/accounts/login-limiter.ts';
import { sessions } from '../../domain/accounts/session-service.ts';
import { totp } from '../../domain/accounts/totp-service.ts';
import { type DeployUser, deployUsers } from '../../domain/accounts/user-service.ts';
import { clientAddress, requireDeployCredentials } from '../../security.ts';

/** A check of the signed-in user's own password or code, counted with the failed sign-ins of the account and address. */
async function confirmedByUser(request: Request, user: DeployUser, check: (priority: HashPriority) => Promise<boolean>): Promise<boolean> {
    return await loginLimiter(request.server).guard(user.email, clientAddress(request), check);
}

export const changePassword: Lifecycle.Method = async (request) => {
    const { user, sessionId } = requireDeployCredentials(request);
    const { currentPassword, newPassword } = request.payload as { currentPassword: string; newPassword: string };
    const confirmed = await confirmedByUser(request, user, (priority) =>
        deployUsers(request.server).checkPassword(user.id, currentPassword, priority),
    );
    if (!confirmed) {
        await audit(request.server).record({
            actor: user,
            action: 'account.password',
            target: user.email,
            outcome: 'failure',
            clientAddress: clientAddress(request),
        });
        throw new ForbiddenError('the current password is wrong');
    }

    await deployUsers(request.server).update(user.id, { password: newPassword });
    await sessions(request.server).endAllFor(user.id, sessionId);
    await audit(request.server).record({
        actor: user,
        action: 'account.password',
        target: user.email,
        clientAddress: clientAddress(request),
    });
    return { ok: true };
};

export const updateProfile: Lifecycle.Method = async (request) => {
    const { user } = requireDeployCredentials(request);
    const updated = await deployUsers(request.server).update(user.id, { name: (request.payload as { name: string }).name });
    await audit(request.server).record({
        actor: user,
        action: 'account.profile',
        target: user.email,
        clientAddress: clientAddress(request),
    });
    return { user: updated };
};

export const beginTotp: Lifecycle.Method = async (request) => {
    const { user } = requireDeployCredentials(request);
    return await totp(request.server).beginSetup(user);
};

export const enableTotp: Lifecycle.Method = async (request) => {
    const { user } = requireDeployCredentials(request);
    const recoveryCodes = await totp(request.server).enable(user, (request.payload as { code: string }).code);
    await audit(request.server).record({
        actor: user,
        action: 'account.totp.enable',
        target: user.email,
        clientAddress: clientAddress(request),
    });
    return { recoveryCodes };
};

export const disableTotp: Lifecycle.Method = async (request) => {
    const { user } = requireDeployCredentials(request);
    const { password, code } = request.payload as { password?: string; code?: string };
    if (!password && !code) {
        throw new ValidationError('password or code: one of them is required');
    }

    const confirmed = await confirmedByUser(request, user, (priority) =>
        password
            ? deployUsers(request.server).checkPassword(user.id, password, priority)
            : totp(request.server).verifyCode(user.id, code ?? ''),
    );
    if (!confirmed) {
        throw new ForbiddenError('the password or code is wrong');
    }

    await totp(request.server).disable(user.id);
    await audit(request.server).record({
        actor: user,
        action: 'account.totp.disable',
        target: user.email,
        clientAddress: clientAddress(request),
    });
    return { ok: true };
};
