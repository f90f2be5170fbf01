/**
 * Who may reach each app: the groups bound at the identity provider. A change to a deployed app takes effect at
 * once (no run): the bindings are replaced, then the sign-in is checked through nginx, and put back if it fails.
 * A draft keeps its groups for the deploy.
 */
import Fs from 'node:fs';

import type { Server } from '@hapi/hapi';

import { ValidationError } from '../../../../lib/errors.ts';
import { defineService } from '../../../../lib/services.ts';
import { idpConnection } from '../../../idp/connection-service.ts';
import type { DirectoryGroup } from '../../../idp/idp-types.ts';
import { type AppRecord, apps } from '../apps/app-service.ts';
import { accessObjectName } from '../engine/access-steps.ts';
import { appPaths, type RunAccess } from '../engine/run-context.ts';
import { siteHasTls } from '../nginx/site-model.ts';
import { checkSignIn } from './sign-in-check.ts';

export interface AccessGroup {
    pk: string;
    name: string;
}

/** public: nothing in front; signed-in: any user the provider knows; groups: only members of the chosen groups. */
export type AccessMode = 'public' | 'signed-in' | 'groups';

export interface AppAccess {
    groups: AccessGroup[];
    mode: AccessMode;
}

function storedGroups(value: unknown): AccessGroup[] {
    if (typeof value !== 'string' || value === '') {
        return [];
    }

    const parsed = JSON.parse(value) as { groups?: AccessGroup[] };
    return parsed.groups ?? [];
}

export class AccessService {
    readonly #server: Server;

    constructor(server: Server) {
        this.#server = server;
    }

    async groupsOf(name: string): Promise<AccessGroup[]> {
        const row = await this.#server.app.knex('dp_apps').where({ name }).first('access');
        return storedGroups(row?.access);
    }

    /** Whether the app was deployed behind the provider (its objects are recorded as the app's). */
    async isBehindProvider(name: string): Promise<boolean> {
        const row = await this.#server.app.knex('dp_app_resources').where({ app_name: name, kind: 'access' }).first('id');
        return Boolean(row);
    }

    async describe(app: AppRecord): Promise<AppAccess> {
        const groups = await this.groupsOf(app.name);
        const behind = app.state === 'draft' ? Boolean(await idpConnection(this.#server).stored()) : await this.isBehindProvider(app.name);
        return { groups, mode: !behind ? 'public' : groups.length > 0 ? 'groups' : 'signed-in' };
    }

    /** What a run needs to put the app behind the provider; undefined when none is connected. */
    async forRun(app: AppRecord): Promise<RunAccess | undefined> {
        const connection = await idpConnection(this.#server).active();
        if (!connection) {
            return undefined;
        }

        const groups = await this.groupsOf(app.name);
        return { connection, title: app.title, groups: groups.map((group) => group.pk) };
    }

    async setGroups(name: string, wanted: AccessGroup[]): Promise<AppAccess & { applied: boolean }> {
        const app = await apps(this.#server).require(name);
        const provider = await idpConnection(this.#server).client();
        const known = await provider.groups();
        const groups = wanted.map((group, index) => {
            const found = known.find((candidate) => candidate.pk === group.pk);
            if (!found) {
                throw new ValidationError(`groups[${index}]: the identity provider has no group ${group.pk} (${group.name})`);
            }

            return { pk: found.pk, name: found.name };
        });
        const pks = [...new Set(groups.map((group) => group.pk))];
        const applied = app.state !== 'draft' && (await this.isBehindProvider(app.name));
        if (applied) {
            const objectName = accessObjectName(app.name);
            const before = await provider.replaceGroups(objectName, pks);
            const siteFile = appPaths(this.#server.app.config, app.name).siteFile;
            const https = Fs.existsSync(siteFile) && siteHasTls(Fs.readFileSync(siteFile, 'utf8'));
            const check = await checkSignIn({ host: this.#server.app.config.host, domain: app.domain, https });
            if (!check.ok) {
                await provider.replaceGroups(objectName, before);
                throw new ValidationError(`the access change could not be verified, so it was undone: ${check.text}. Fix: ${check.fix}`);
            }
        }

        const unique = pks.map((pk) => groups.find((group) => group.pk === pk) as AccessGroup);
        await this.#server.app
            .knex('dp_apps')
            .where({ id: app.id })
            .update({ access: JSON.stringify({ groups: unique }) });
        // The draft's `auth` shows the same groups, so that a draft read back agrees with the access.
        await apps(this.#server).saveDraft(app.name, { auth: { groups: unique } });
        return { ...(await this.describe(await apps(this.#server).require(name))), applied };
    }

    /** The provider's groups with their members and the apps they open; for an app, the groups that look meant for it. */
    async directory(appName?: string) {
        const provider = await idpConnection(this.#server).client();
        const groups = await provider.groups();
        const rows = await this.#server.app.knex('dp_apps').select('name', 'title', 'access');
        const appsOf = (pk: string) =>
            rows.filter((row) => storedGroups(row.access).some((group) => group.pk === pk)).map((row) => String(row.name));
        const app = appName ? await apps(this.#server).require(appName) : undefined;
        return {
            groups: groups.map((group) => ({ pk: group.pk, name: group.name, members: group.members, apps: appsOf(group.pk) })),
            suggestions: app ? suggestGroups(groups, app) : [],
        };
    }

    async users(query: string) {
        return await (await idpConnection(this.#server).client()).users(query);
    }
}

/** Groups named after the app, then the administrators' groups. */
function suggestGroups(groups: DirectoryGroup[], app: AppRecord): Array<{ pk: string; name: string; reason: string }> {
    const words = [app.name, app.title].map((word) => word.toLowerCase()).filter((word) => word.length >= 3);
    const named = groups
        .filter((group) => words.some((word) => group.name.toLowerCase().includes(word)))
        .map((group) => ({ pk: group.pk, name: group.name, reason: `named like the app (${app.name})` }));
    const admins = groups
        .filter((group) => group.isSuperuser && !named.some((suggested) => suggested.pk === group.pk))
        .map((group) => ({ pk: group.pk, name: group.name, reason: "the provider's administrators (a superuser group)" }));
    return [...named, ...admins];
}

export const appAccess = defineService<AccessService>('appAccess', (owner) => new AccessService(owner));
