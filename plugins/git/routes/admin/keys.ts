import type { Lifecycle } from '@hapi/hapi';

import { toRfc3339 } from '../../../../lib/database.ts';
import { ValidationError } from '../../../../lib/errors.ts';
import { type ApiUser, toApiUser } from '../../domain/identity/format.ts';
import { pathUser } from '../shared/access.ts';
import { publicKeys, type PublicKeyRow } from '../../domain/identity/key-service.ts';
import type { UserRow } from '../../domain/identity/user-service.ts';

interface CreateKeyPayload {
    key?: string;
    title?: string;
    read_only?: boolean;
}

export interface ApiPublicKey {
    id: number;
    key: string;
    url: string;
    title: string;
    fingerprint: string;
    created_at: string;
    last_used_at: string;
    key_type: string;
    read_only: boolean;
    user: ApiUser;
}

/** Gitea's PublicKey as an administrator sees it: with the key type and the owner, shown as they see themself. */
function toApiPublicKey(key: PublicKeyRow, owner: UserRow, publicUrl: string): ApiPublicKey {
    return {
        id: key.id,
        key: key.content,
        url: `${publicUrl}api/v1/user/keys/${key.id}`,
        title: key.name,
        fingerprint: key.fingerprint,
        created_at: toRfc3339(key.created_at),
        last_used_at: toRfc3339(key.last_used_at || null),
        key_type: key.type,
        read_only: key.read_only,
        user: toApiUser(owner, owner, publicUrl),
    };
}

/** Gitea's binding rule `Required` refuses an empty string too, which the schema lets through. */
function required(field: string, value: string | undefined): string {
    if (value === undefined || value === '') {
        throw new ValidationError(`[${field}]: Required`);
    }

    return value;
}

export const adminCreatePublicKey: Lifecycle.Method = async (request, h) => {
    const owner = pathUser(request);
    const payload = request.payload as CreateKeyPayload;
    const title = required('Title', payload.title);
    const key = required('Key', payload.key);
    const created = await publicKeys(request.server).add(owner, { title, key });
    return h.response(toApiPublicKey(created, owner, request.server.app.config.publicUrl)).code(201);
};

/** Gitea checks the key against the path's user, not the caller: an administrator there may delete anyone's key. */
export const adminDeleteUserPublicKey: Lifecycle.Method = async (request, h) => {
    await publicKeys(request.server).delete(pathUser(request), request.params.id as number);
    return h.response().code(204);
};
