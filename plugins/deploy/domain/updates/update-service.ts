/**
 * Which updates an app's image has (`GET /api/apps/{name}/updates`): for a version tag, the newer tags of its line
 * at the image's registry (the hub's tag lists, kept a few minutes); for a moving tag (`latest`, `stable`), whether
 * the tag names another image now than the one running. What is found is kept in `dp_app_updates` for the lists to
 * mark (`GET /api/updates`); the daily check (jobs/check-updates.ts) looks at every app and tells of each update
 * once, whichever server on the database finds it. The update itself is a run of the lifecycle's.
 */
import { now } from '../../../../lib/database.ts';
import { ValidationError } from '../../../../lib/errors.ts';
import { cell, rowReader } from '../../../../lib/row-reader.ts';
import { Service } from '../../../../lib/service.ts';
import { defineService } from '../../../../lib/services.ts';
import { type AppRecord, apps } from '../apps/app-service.ts';
import { hub } from '../hub/hub-service.ts';
import { lifecycle } from '../lifecycle/lifecycle-service.ts';
import type { DeployUser } from '../accounts/user-service.ts';
import { audit } from '../accounts/audit-service.ts';
import { notifications } from '../notifications/notification-service.ts';
import { availableUpdates } from './digest-check.ts';
import { type AutomaticUpdates, automaticTarget, newerTags, parseVersionTag, type VersionChange } from './version-tags.ts';

export interface ImageUpdate {
    tag: string;
    /** How far the tag moves (a version tag), or `digest`: the same tag names a newer image. */
    change: VersionChange | 'digest';
    /** The newer image's digest (a moving tag's update). */
    digest?: string;
}

export interface AppUpdates {
    image: string;
    tag: string;
    /** Whether the tag is a version (updates are newer tags) or a moving tag (an update is a new image under it). */
    versioned: boolean;
    updates: ImageUpdate[];
    /** False when the registry's list of tags was cut short: a newer tag may be missing. */
    complete: boolean;
    /** How far the daily check updates the app by itself. */
    automatic: AutomaticUpdates;
}

export interface KnownUpdates {
    app: string;
    tag: string;
    updates: ImageUpdate[];
    checkedAt: string;
}

const toKnownUpdates = rowReader<KnownUpdates>({
    app: ['app_name', cell.string],
    tag: ['tag', cell.string],
    updates: ['updates', cell.json<ImageUpdate[]>()],
    checkedAt: ['checked_at', cell.time],
});

export class UpdateService extends Service {
    async available(name: string, options: { otherMajors?: boolean } = {}): Promise<AppUpdates> {
        const app = await apps(this.server).require(name);
        if (app.state === 'draft') {
            throw new ValidationError(`${app.name} has not been deployed yet: there is nothing to update`);
        }

        if (!app.image) {
            throw new ValidationError(`${app.name} runs no image of its own (it was made from a template): update its compose file`);
        }

        const found = { ...(await this.#lookUp(app, app.image, options)), automatic: await this.automatic(app.name) };
        // Other majors are asked for by hand: what the lists mark is the default line.
        if (!options.otherMajors) await this.#remember(app.name, app.tag, found.updates);
        return found;
    }

    async #lookUp(app: AppRecord, image: string, options: { otherMajors?: boolean }): Promise<Omit<AppUpdates, 'automatic'>> {
        const described = { image, tag: app.tag };
        if (parseVersionTag(app.tag)) {
            const listed = await hub(this.server).tags(image);
            const tags = listed.tags.map((tag) => tag.name);
            return { ...described, versioned: true, updates: newerTags(app.tag, tags, options), complete: listed.complete };
        }

        const reference = `${image}:${app.tag}`;
        const moved = (await availableUpdates(this.server, app.name)).find((update) => update.image === reference);
        const updates: ImageUpdate[] = moved ? [{ tag: app.tag, change: 'digest', digest: moved.latest }] : [];
        return { ...described, versioned: false, updates, complete: true };
    }

    async #remember(app: string, tag: string, updates: ImageUpdate[]): Promise<void> {
        await this.knex('dp_app_updates')
            .insert({ app_name: app, tag, updates: JSON.stringify(updates), checked_at: now() })
            .onConflict('app_name')
            .merge(['tag', 'updates', 'checked_at']);
    }

    /** The updates last found of the apps whose tag has not changed since: what the apps list and dashboard mark. */
    async known(): Promise<KnownUpdates[]> {
        const rows = (await this.knex('dp_app_updates as u')
            .join('dp_apps as a', 'a.name', 'u.app_name')
            .whereRaw('a.tag = u.tag')
            .whereNot('u.updates', '[]')
            .orderBy('u.app_name')
            .select('u.app_name', 'u.tag', 'u.updates', 'u.checked_at')) as Array<Record<string, unknown>>;
        return rows.map(toKnownUpdates);
    }

    /** How far the daily check updates the app by itself: `off` unless an editor chose otherwise. */
    async automatic(app: string): Promise<AutomaticUpdates> {
        const row = (await this.knex('dp_app_auto_updates').where({ app_name: app }).first('mode')) as { mode: string } | undefined;
        return (row?.mode as AutomaticUpdates | undefined) ?? 'off';
    }

    async setAutomatic(name: string, mode: AutomaticUpdates, actor: DeployUser): Promise<AutomaticUpdates> {
        const app = await apps(this.server).require(name);
        if (mode === 'off') {
            await this.knex('dp_app_auto_updates').where({ app_name: app.name }).delete();
        } else {
            await this.knex('dp_app_auto_updates')
                .insert({ app_name: app.name, mode, updated_at: now() })
                .onConflict('app_name')
                .merge(['mode', 'updated_at']);
        }

        await audit(this.server).record({ actor, action: 'updates.automatic', target: app.name, details: { mode } });
        return mode;
    }

    /** What was found is stale once the app moved (an update run succeeded). */
    async forget(app: string): Promise<void> {
        await this.knex('dp_app_updates').where({ app_name: app }).delete();
    }

    /** A deleted app leaves nothing behind for an app of the same name to inherit. */
    async forgetApp(app: string): Promise<void> {
        await this.forget(app);
        await this.knex('dp_app_auto_updates').where({ app_name: app }).delete();
    }

    /**
     * Looks at every deployed app's image; tells whoever asked for `update-available` of each update not told of
     * before (the newest tag, or the new digest), once whichever server finds it, and starts the update of each app
     * that asked for automatic ones, as far as it asked. Answers what was found, and the runs started.
     */
    async checkAll(): Promise<Array<AppUpdates & { app: string; runId?: number }>> {
        const rows = (await this.knex('dp_apps')
            .whereNot({ state: 'draft' })
            .whereNotNull('image')
            .orderBy('name')
            .select('name')) as Array<{
            name: string;
        }>;
        const found: Array<AppUpdates & { app: string }> = [];
        for (const { name } of rows) {
            let answer: AppUpdates;
            try {
                answer = await this.available(name);
            } catch {
                // A registry this server may not ask, or one that does not answer: the next check tries again.
                continue;
            }

            const [newest] = answer.updates;
            if (!newest) continue;
            await this.#tellOnce(name, answer, newest);
            const runId = await this.#updateByItself(name, answer);
            found.push({ app: name, ...answer, ...(runId === undefined ? {} : { runId }) });
        }

        return found;
    }

    /** Starts the app's automatic update, when it asked for them and an update is within what it asked; a run in progress waits for the next check. */
    async #updateByItself(app: string, answer: AppUpdates): Promise<number | undefined> {
        const target = automaticTarget(answer.updates, answer.automatic);
        if (!target) return undefined;
        try {
            return await lifecycle(this.server).updateImage(app, null, target.tag);
        } catch (error) {
            this.server.log(
                ['deploy', 'updates'],
                `the automatic update of ${app} to ${target.tag} was not started: ${(error as Error).message}`,
            );
            return undefined;
        }
    }

    async #tellOnce(app: string, answer: AppUpdates, newest: ImageUpdate): Promise<void> {
        const key = newest.change === 'digest' ? `digest:${newest.digest ?? ''}` : `tag:${newest.tag}`;
        // One server's write wins: only the one that changed the row tells.
        const claimed = await this.knex('dp_app_updates')
            .where({ app_name: app })
            .andWhere((query) => query.whereNull('told').orWhereNot('told', key))
            .update({ told: key });
        if (claimed !== 1) return;
        const reference = `${answer.image}:${answer.tag}`;
        await notifications(this.server).notify({
            kind: 'update-available',
            app,
            summary:
                newest.change === 'digest'
                    ? `an update of ${reference} is available for ${app}`
                    : `${answer.image}:${newest.tag} is available for ${app} (it runs ${answer.tag})`,
            details: { image: reference, tag: newest.tag, change: newest.change, ...(newest.digest ? { digest: newest.digest } : {}) },
        });
    }
}

export const updates = defineService<UpdateService>('updates', (owner) => new UpdateService(owner));
