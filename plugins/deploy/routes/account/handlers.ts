import type { Lifecycle, Request } from '@hapi/hapi';

import { ForbiddenError, ValidationError } from '../../../../lib/errors.ts';
import { auditAs } from '../../audit-trail.ts';
import type { AuditEntry } from '../../domain/accounts/audit-service.ts';
import { sessions } from '../../domain/accounts/session-service.ts';
import { signIn } from '../../domain/accounts/sign-in-service.ts';
import { totp } from '../../domain/accounts/totp-service.ts';
import { type DeployUser, deployUsers } from '../../domain/accounts/user-service.ts';
import { clientAddress, requireDeployCredentials } from '../../security.ts';

/** A change the user makes to their own account: the audit entry its spec declares names the account. */
function auditOwn(request: Request, user: DeployUser, details?: AuditEntry['details']): void {
    auditAs(request, { target: user.email, details });
}

export const changePassword: Lifecycle.Method = async (request) => {
    const { user, sessionId } = requireDeployCredentials(request);
    const { currentPassword, newPassword } = request.payload as { currentPassword: string; newPassword: string };
    auditOwn(request, user);
    const confirmed = await signIn(request.server).confirm(user, clientAddress(request), { password: currentPassword });
    if (!confirmed) {
        throw new ForbiddenError('the current password is wrong');
    }

    await deployUsers(request.server).update(user.id, { password: newPassword });
    await sessions(request.server).endAllFor(user.id, sessionId);
    return { ok: true };
};

export const updateProfile: Lifecycle.Method = async (request) => {
    const { user } = requireDeployCredentials(request);
    const updated = await deployUsers(request.server).update(user.id, { name: (request.payload as { name: string }).name });
    auditOwn(request, user);
    return { user: updated };
};

export const beginTotp: Lifecycle.Method = async (request) => {
    const { user } = requireDeployCredentials(request);
    return await totp(request.server).beginSetup(user);
};

export const enableTotp: Lifecycle.Method = async (request) => {
    const { user } = requireDeployCredentials(request);
    const recoveryCodes = await totp(request.server).enable(user, (request.payload as { code: string }).code);
    auditOwn(request, user);
    return { recoveryCodes };
};

/** The password or a current code, asked again before a change to the second factor. */
async function requireProof(request: Request, user: DeployUser): Promise<void> {
    const { password, code } = request.payload as { password?: string; code?: string };
    if (!password && !code) {
        throw new ValidationError('give your password or a code from your app');
    }

    const confirmed = await signIn(request.server).confirm(user, clientAddress(request), { password, code });
    if (!confirmed) {
        throw new ForbiddenError('the password or code is wrong');
    }
}

export const disableTotp: Lifecycle.Method = async (request) => {
    const { user } = requireDeployCredentials(request);
    await requireProof(request, user);
    await totp(request.server).disable(user.id);
    auditOwn(request, user);
    return { ok: true };
};

export const regenerateRecoveryCodes: Lifecycle.Method = async (request) => {
    const { user } = requireDeployCredentials(request);
    await requireProof(request, user);
    const recoveryCodes = await totp(request.server).regenerateRecoveryCodes(user.id);
    auditOwn(request, user);
    return { recoveryCodes };
};

export const listSessions: Lifecycle.Method = async (request) => {
    const { user, sessionId } = requireDeployCredentials(request);
    return { sessions: await sessions(request.server).listFor(user.id, sessionId) };
};

export const endSession: Lifecycle.Method = async (request, h) => {
    const { user } = requireDeployCredentials(request);
    const id = request.params.id as unknown as number;
    await sessions(request.server).endOwn(user.id, id);
    auditOwn(request, user, { session: id });
    return h.response().code(204);
};
