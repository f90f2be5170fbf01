/**
 * Who may reach each app: the groups bound at the identity provider. A change to a deployed app takes effect at
 * once (no run): the bindings are replaced, then the sign-in is checked through nginx, and put back if it fails.
 * A draft keeps its groups for the deploy, whether saved here or as the draft's `auth`.
 */
import Fs from 'node:fs';

import { ConflictError, ValidationError } from '../../../../lib/errors.ts';
import { defineService } from '../../../../lib/services.ts';
import { idpConnection } from '../../../idp/connection-service.ts';
import type { DirectoryGroup } from '../../../idp/idp-types.ts';
import { type AppRecord, apps } from '../apps/app-service.ts';
import type { DraftInput } from '../apps/draft-shape.ts';
import { accessObjectName } from '../engine/access-steps.ts';
import { appPaths, type RunAccess } from '../engine/run-context.ts';
import { siteHasTls } from '../nginx/site-model.ts';
import { checkSignIn } from './sign-in-check.ts';
import { Service } from '../../../../lib/service.ts';

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

function accessMode(behindProvider: boolean, groups: AccessGroup[]): AccessMode {
    return !behindProvider ? 'public' : groups.length > 0 ? 'groups' : 'signed-in';
}

export class AccessService extends Service {
    async groupsOf(name: string): Promise<AccessGroup[]> {
        const row = await this.server.app.knex('dp_apps').where({ name }).first('access');
        return storedGroups(row?.access);
    }

    /** Whether the app was deployed behind the provider (its objects are recorded as the app's). */
    async isBehindProvider(name: string): Promise<boolean> {
        const row = await this.server.app.knex('dp_app_resources').where({ app_name: name, kind: 'access' }).first('id');
        return Boolean(row);
    }

    async describe(app: AppRecord): Promise<AppAccess> {
        const groups = await this.groupsOf(app.name);
        const behind = app.state === 'draft' ? Boolean(await idpConnection(this.server).stored()) : await this.isBehindProvider(app.name);
        return { groups, mode: accessMode(behind, groups) };
    }

    /**
     * The access mode of each of these apps (their stored `access` column given), in two queries whatever their
     * number: which deployed ones are behind the provider, and whether one is connected (for the drafts).
     */
    async modesOf(list: Array<{ name: string; state: string; access: string | null }>): Promise<Map<string, AccessMode>> {
        const deployed = list.filter((app) => app.state !== 'draft').map((app) => app.name);
        const [behindRows, connection] = await Promise.all([
            deployed.length > 0
                ? this.server.app.knex('dp_app_resources').where({ kind: 'access' }).whereIn('app_name', deployed).distinct('app_name')
                : [],
            deployed.length < list.length ? idpConnection(this.server).stored() : undefined,
        ]);
        const behind = new Set(behindRows.map((row: { app_name: string }) => String(row.app_name)));
        return new Map(
            list.map((app) => [
                app.name,
                accessMode(app.state === 'draft' ? Boolean(connection) : behind.has(app.name), storedGroups(app.access)),
            ]),
        );
    }

    /**
     * Access is a choice, never an accident: a deploy that would let in more than the draft says is refused before
     * anything is written. Without a connected provider the app is open to anyone (the draft must say `public`);
     * without a group every user of the provider gets in (the draft must say `signed-in`).
     */
    async refuseAccidentalAccess(app: AppRecord): Promise<void> {
        const said = app.draft.auth?.access ?? 'groups';
        if (!(await idpConnection(this.server).active())) {
            if (said !== 'public') {
                throw new ValidationError(
                    'auth.access: no identity provider is connected, so anyone who reaches the domain would get in; connect one, or say so with auth.access: public',
                );
            }

            return;
        }

        if ((await this.groupsOf(app.name)).length === 0 && said !== 'signed-in') {
            throw new ValidationError(
                'auth.access: no group is chosen, so every user of the identity provider would get in; choose groups, or say so with auth.access: signed-in',
            );
        }
    }

    /** What a run needs to put the app behind the provider; undefined when none is connected. */
    async forRun(app: AppRecord): Promise<RunAccess | undefined> {
        const connection = await idpConnection(this.server).active();
        if (!connection) {
            return undefined;
        }

        const groups = await this.groupsOf(app.name);
        return { connection, title: app.title, groups: groups.map((group) => group.pk) };
    }

    async setGroups(name: string, wanted: AccessGroup[]): Promise<AppAccess & { applied: boolean }> {
        const app = await apps(this.server).require(name);
        const provider = await idpConnection(this.server).client();
        const groups = knownGroups(wanted, await provider.groups());
        const pks = groups.map((group) => group.pk);
        const applied = app.state !== 'draft' && (await this.isBehindProvider(app.name));
        if (applied) {
            const objectName = accessObjectName(app.name);
            const before = await provider.replaceGroups(objectName, pks);
            const siteFile = appPaths(this.server.app.config, app.name).siteFile;
            const https = Fs.existsSync(siteFile) && siteHasTls(Fs.readFileSync(siteFile, 'utf8'));
            const check = await checkSignIn({ host: this.server.app.config.host, domain: app.domain, https });
            if (!check.ok) {
                await provider.replaceGroups(objectName, before);
                throw new ValidationError(`the access change could not be verified, so it was undone: ${check.text}. Fix: ${check.fix}`);
            }
        }

        await this.#storeGroups(app, groups);
        // The draft's `auth` shows the same groups, so that a draft read back agrees with the access.
        await apps(this.server).saveDraft(app.name, { auth: { ...app.draft.auth, groups } });
        return { ...(await this.describe(await apps(this.server).require(name))), applied };
    }

    /**
     * Saves a draft whose `auth.groups` are the app's access, so that the deploy binds the groups the draft shows.
     * A deployed app's groups change with setGroups (at once, checked), so its draft refuses other groups.
     */
    async saveDraft(name: string, input: DraftInput): Promise<AppRecord> {
        const wanted = input.auth?.groups;
        const app = await apps(this.server).require(name);
        // An `auth` without groups (the access said outright) keeps the groups the draft has.
        const auth = input.auth ? { ...app.draft.auth, ...input.auth } : undefined;
        if (wanted === undefined) {
            return await apps(this.server).saveDraft(name, { ...input, ...(auth ? { auth } : {}) });
        }

        const groups = await this.#draftGroups(app, wanted);
        const saved = await apps(this.server).saveDraft(name, { ...input, auth: { ...auth, groups } });
        await this.#storeGroups(app, groups);
        return saved;
    }

    /** A draft's groups as the provider names them; without a connected provider as given (the deploy checks them). */
    async #draftGroups(app: AppRecord, wanted: AccessGroup[]): Promise<AccessGroup[]> {
        if (app.state !== 'draft') {
            const current = await this.groupsOf(app.name);
            if (!samePks(current, wanted)) {
                throw new ConflictError(
                    `auth.groups: ${app.name} is deployed; its groups change with PUT /api/apps/${app.name}/access, which applies them at once`,
                );
            }

            return current;
        }

        const connection = idpConnection(this.server);
        return (await connection.active()) ? knownGroups(wanted, await (await connection.client()).groups()) : uniqueGroups(wanted);
    }

    async #storeGroups(app: AppRecord, groups: AccessGroup[]): Promise<void> {
        await this.server.app
            .knex('dp_apps')
            .where({ id: app.id })
            .update({ access: JSON.stringify({ groups }) });
    }

    /** The provider's groups with their members and the apps they open; for an app, the groups that look meant for it. */
    async directory(appName?: string) {
        const provider = await idpConnection(this.server).client();
        const groups = await provider.groups();
        const rows = await this.server.app.knex('dp_apps').select('name', 'title', 'access');
        const appsOf = (pk: string) =>
            rows.filter((row) => storedGroups(row.access).some((group) => group.pk === pk)).map((row) => String(row.name));
        const app = appName ? await apps(this.server).require(appName) : undefined;
        return {
            groups: groups.map((group) => ({ pk: group.pk, name: group.name, members: group.members, apps: appsOf(group.pk) })),
            suggestions: app ? suggestGroups(groups, app) : [],
        };
    }

    async users(query: string) {
        return await (await idpConnection(this.server).client()).users(query);
    }
}

function uniqueGroups(groups: AccessGroup[]): AccessGroup[] {
    return groups.filter((group, index) => groups.findIndex((other) => other.pk === group.pk) === index);
}

function samePks(left: AccessGroup[], right: AccessGroup[]): boolean {
    const pks = new Set(left.map((group) => group.pk));
    const others = new Set(right.map((group) => group.pk));
    return pks.size === others.size && [...pks].every((pk) => others.has(pk));
}

/** The wanted groups as the provider has them (its names), once each; a group it does not have is refused. */
function knownGroups(wanted: AccessGroup[], known: DirectoryGroup[]): AccessGroup[] {
    const groups = wanted.map((group, index) => {
        const found = known.find((candidate) => candidate.pk === group.pk);
        if (!found) {
            throw new ValidationError(`groups[${index}]: the identity provider has no group ${group.pk} (${group.name})`);
        }

        return { pk: found.pk, name: found.name };
    });
    return uniqueGroups(groups);
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
