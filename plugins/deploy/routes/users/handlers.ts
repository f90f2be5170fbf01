import type { Lifecycle } from '@hapi/hapi';

import { auditAs } from '../../audit-trail.ts';
import { sessions } from '../../domain/accounts/session-service.ts';
import { totp } from '../../domain/accounts/totp-service.ts';
import { type DeployRole, deployUsers, type NewDeployUser } from '../../domain/accounts/user-service.ts';

interface UserUpdate {
    name?: string;
    role?: DeployRole;
    disabled?: boolean;
    password?: string;
    resetTotp?: boolean;
}

export const listUsers: Lifecycle.Method = async (request) => ({ users: await deployUsers(request.server).list() });

export const createUser: Lifecycle.Method = async (request, h) => {
    const user = await deployUsers(request.server).create(request.payload as NewDeployUser);
    auditAs(request, { target: user.email, details: { role: user.role } });
    return h.response({ user }).code(201);
};

export const updateUser: Lifecycle.Method = async (request) => {
    const id = request.params.id as unknown as number;
    const { resetTotp, ...changes } = request.payload as UserUpdate;
    const before = await deployUsers(request.server).require(id);
    const user = await deployUsers(request.server).update(id, changes);
    if (resetTotp) {
        await totp(request.server).disable(id);
    }

    // A disabled user, or one whose password was reset, is signed out everywhere at once.
    if (changes.disabled === true || changes.password !== undefined) {
        await sessions(request.server).endAllFor(id);
    }

    const details = {
        ...(changes.role !== undefined && changes.role !== before.role ? { roleFrom: before.role, roleTo: changes.role } : {}),
        ...(changes.disabled !== undefined ? { disabled: changes.disabled } : {}),
        ...(changes.password !== undefined ? { passwordReset: true } : {}),
        ...(resetTotp ? { totpReset: true } : {}),
    };
    auditAs(request, { target: user.email, details });
    return { user: resetTotp ? await deployUsers(request.server).require(id) : user };
};

export const deleteUser: Lifecycle.Method = async (request, h) => {
    const user = await deployUsers(request.server).delete(request.params.id as unknown as number);
    auditAs(request, { target: user.email });
    return h.response().code(204);
};
