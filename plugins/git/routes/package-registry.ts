import type { Readable } from 'node:stream';

import Boom from '@hapi/boom';
import type { Lifecycle, Plugin, Request, RouteOptions } from '@hapi/hapi';

import { ForbiddenError } from '../../../lib/errors.ts';
import { accessCheck } from './shared/access.ts';
import { credentialsOf, GIT_AUTH_STRATEGY, signedInUser } from '../domain/identity/auth.ts';
import { users, type UserRow, visibilityName } from '../domain/identity/user-service.ts';
import { MAX_PACKAGE_FILE_BYTES } from '../domain/packages/package-blobs.ts';
import type { PackageVersionRef } from '../domain/packages/package-names.ts';
import { packages } from '../domain/packages/package-service.ts';

const VERSION_PATH = '/api/packages/{owner}/generic/{name}/{version}';
const FILE_PATH = `${VERSION_PATH}/{filename}`;
const NO_PERMISSION = 'user should have specific permission or be a site admin';

/** Organisations are not yet members-aware: for now only the owner itself or a site administrator writes. */
function canWrite(owner: UserRow, viewer: UserRow | undefined): boolean {
    return Boolean(viewer && (viewer.is_admin || viewer.id === owner.id));
}

/** Public owners' packages are open to all, limited ones to signed-in users, private ones to the writers. */
function canRead(owner: UserRow, viewer: UserRow | undefined): boolean {
    const visibility = visibilityName(owner.visibility);
    return visibility === 'public' || (visibility === 'limited' && viewer !== undefined) || canWrite(owner, viewer);
}

function refuse(viewer: UserRow | undefined): never {
    if (!viewer) {
        throw Boom.unauthorized(NO_PERMISSION, 'Basic', { realm: 'Gatehouse Package API' });
    }

    throw new ForbiddenError(NO_PERMISSION);
}

/** The version a request's path names, once the caller is known to be allowed the access asked. */
async function versionRef(request: Request, allowed: (owner: UserRow, viewer: UserRow | undefined) => boolean): Promise<PackageVersionRef> {
    const params = request.params as Record<string, string>;
    const owner = await users(request.server).resolve(params.owner ?? '');
    const viewer = credentialsOf(request)?.user;
    if (!allowed(owner, viewer)) {
        refuse(viewer);
    }

    return { owner, type: 'generic', name: params.name ?? '', version: params.version ?? '' };
}

const filenameOf = (request: Request): string => (request.params as Record<string, string>).filename ?? '';

const uploadFile: Lifecycle.Method = async (request, h) => {
    const ref = await versionRef(request, canWrite);
    await packages(request.server).upload(ref, filenameOf(request), request.payload as Readable, signedInUser(request));
    return h.response().code(201);
};

const downloadFile: Lifecycle.Method = async (request, h) => {
    const ref = await versionRef(request, canRead);
    const stored = await packages(request.server).file(ref, filenameOf(request));
    return h
        .file(stored.path, { confine: false, mode: 'attachment', filename: stored.file.name, etagMethod: false })
        .type('application/octet-stream')
        .etag(stored.blob.hash_sha256);
};

const deleteFile: Lifecycle.Method = async (request, h) => {
    const ref = await versionRef(request, canWrite);
    await packages(request.server).deleteFile(ref, filenameOf(request));
    return h.response().code(204);
};

const deleteVersion: Lifecycle.Method = async (request, h) => {
    const ref = await versionRef(request, canWrite);
    await packages(request.server).deleteVersion(ref);
    return h.response().code(204);
};

/** Gitea's credentials when given (a bad one is a 401), account state and the token's package scope. */
function routeOptions(handler: Lifecycle.Method): RouteOptions {
    return {
        tags: ['api', 'git', 'packages'],
        auth: { strategy: GIT_AUTH_STRATEGY, mode: 'optional' },
        ext: { onPostAuth: { method: accessCheck({ scopes: ['package'], signIn: false, siteAdmin: false }) } },
        handler,
    };
}

/** Gitea's generic package registry under /api/packages. */
export const packageRegistryPlugin: Plugin<undefined> = {
    name: 'git-packages',
    register(server) {
        server.route([
            {
                method: 'PUT',
                path: FILE_PATH,
                options: {
                    ...routeOptions(uploadFile),
                    payload: { output: 'stream', parse: false, maxBytes: MAX_PACKAGE_FILE_BYTES },
                },
            },
            { method: 'GET', path: FILE_PATH, options: routeOptions(downloadFile) },
            { method: 'DELETE', path: FILE_PATH, options: routeOptions(deleteFile) },
            { method: 'DELETE', path: VERSION_PATH, options: routeOptions(deleteVersion) },
        ]);
    },
};
