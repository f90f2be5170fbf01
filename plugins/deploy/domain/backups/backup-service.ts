/**
 * Apps' backups: made and restored by runs (jobs/app-backup.ts), listed from `dp_backups`, removed from the restic
 * repository with `forget --prune`. The repository's password is BACKUP_PASSWORD or, unset, one generated at the
 * first backup and kept sealed with the master key; the server opens it for each run, the worker never sees the key.
 */
import Fs from 'node:fs';
import Path from 'node:path';

import { isUniqueViolation, now } from '../../../../lib/database.ts';
import { randomToken } from '../../../../lib/crypto.ts';
import { ConflictError, NotFoundError, ValidationError } from '../../../../lib/errors.ts';
import { defineService } from '../../../../lib/services.ts';
import { jobFile } from '../../../jobs.ts';
import { audit } from '../accounts/audit-service.ts';
import type { DeployUser } from '../accounts/user-service.ts';
import { type AppRecord, apps } from '../apps/app-service.ts';
import { recipes } from '../recipes/recipe-service.ts';
import { mainService } from '../recipes/recipe-compose.ts';
import { parseCompose } from '../compose/compose-model.ts';
import { withServiceImage } from '../compose/compose-yaml.ts';
import { runs } from '../runs/run-service.ts';
import type { BackupFirst } from '../engine/run-context.ts';
import type { BackupHolds, BackupRunData } from './backup-runs.ts';
import { snapshotIds, volumeSnapshotsOf } from './backup-row.ts';
import { cacheDirOf, forgetAndPrune, repositoryHash, ResticError, type ResticRepository } from '../host/restic.ts';
import { Service } from '../../../../lib/service.ts';
import { cell, nullable, rowReader } from '../../../../lib/row-reader.ts';

/** The run worker, in the project's jobs/ (this file is plugins/deploy/domain/backups/). */
const BACKUP_SCRIPT = jobFile('app-backup');

export interface Backup {
    id: number;
    time: string;
    /** Bytes read for it (before restic's deduplication and compression). */
    size: number;
    holds: BackupHolds;
    /** Why it was made: `manual`, `scheduled` (the app's schedule), `before restore`, or `before <change>` (BACKUP_BEFORE_CHANGES). */
    reason: string;
    runId: number | null;
}

const toBackup = rowReader<Backup>({
    id: ['id', cell.number],
    time: ['created_at', cell.time],
    size: ['size', cell.number],
    holds: ['holds', cell.json<BackupHolds>()],
    reason: ['reason', cell.string],
    runId: ['run_id', nullable(cell.number)],
});

export class BackupService extends Service {
    get #hash(): string {
        return repositoryHash(this.server.app.config.backups.repository);
    }

    /** The repository as restic is called with it: its password opened (or generated, sealed and kept, the first time). */
    async repository(): Promise<ResticRepository & { hash: string }> {
        const { config } = this.server.app;
        const hash = this.#hash;
        const { repository, sftpCommand } = config.backups;
        const place = { repository, sftpCommand, cacheDir: cacheDirOf(config.dataDir), hash };
        if (config.backups.password) {
            return { ...place, password: config.backups.password };
        }

        return { ...place, password: await this.#generatedPassword(hash) };
    }

    async #generatedPassword(hash: string): Promise<string> {
        const knex = this.server.app.knex;
        const sealer = this.server.app.sealer;
        const associated = `backup-key:${hash}`;
        const stored = await knex('dp_backup_keys').where({ repository_hash: hash }).first('password_sealed');
        if (stored) {
            return sealer.open(String(stored.password_sealed), associated);
        }

        const password = randomToken(32);
        try {
            await knex('dp_backup_keys').insert({
                repository_hash: hash,
                password_sealed: sealer.seal(password, associated),
                created_at: now(),
            });
            return password;
        } catch (error) {
            if (!isUniqueViolation(error)) {
                throw error;
            }

            // Another request made it first: theirs is the key.
            return await this.#generatedPassword(hash);
        }
    }

    async list(name: string): Promise<Backup[]> {
        const app = await apps(this.server).require(name);
        const rows = await this.server.app
            .knex('dp_backups')
            .where({ app_name: app.name, repository_hash: this.#hash })
            .orderBy('id', 'desc');
        return rows.map(toBackup);
    }

    /**
     * What a run that changes the app needs to take a backup first (BACKUP_BEFORE_CHANGES); none while nothing of the
     * app is deployed. The recipe's dump is taken only from a running app: a stopped or failed one still has its
     * folder and volumes backed up, and a dump command would fail the change it is meant to protect.
     */
    async firstOf(app: AppRecord, reason: string): Promise<BackupFirst | undefined> {
        if (!this.#deployed(app.name)) {
            return undefined;
        }

        const dump = app.state === 'running' ? (await recipes(this.server).forApp(app))?.backup?.dump : undefined;
        return { restic: await this.repository(), reason, ...(dump ? { dump } : {}) };
    }

    /** Starts a backup run of the app; answers its id. `actor` null: the schedule's (the app's own, or BACKUP_SCHEDULE). */
    async start(name: string, actor: DeployUser | null): Promise<number> {
        const app = await apps(this.server).require(name);
        this.#refuseUndeployed(app.name, app.state);
        return await this.#run(app, 'backup', actor, { reason: actor ? 'manual' : 'scheduled' }, async () => undefined);
    }

    /**
     * The schedule's backups of the apps whose time came (backup-schedules.ts): one after the other (restic locks its
     * repository for each), an app with a run in progress left for its next time. Answers what was started and what was not.
     */
    async backUpScheduled(names: string[]): Promise<{
        backedUp: Array<{ app: string; runId: number; state: string }>;
        skipped: Array<{ app: string; reason: string }>;
    }> {
        const backedUp: Array<{ app: string; runId: number; state: string }> = [];
        const skipped: Array<{ app: string; reason: string }> = [];
        for (const name of names) {
            try {
                const runId = await this.start(name, null);
                backedUp.push({ app: name, runId, state: (await runs(this.server).untilEnded(runId)).state });
            } catch (error) {
                skipped.push({ app: name, reason: (error as Error).message });
            }
        }

        return { backedUp, skipped };
    }

    /** Starts a run that puts the backup back in place of the app's folder, site and volumes; answers its id. */
    async restore(name: string, id: number, actor: DeployUser): Promise<number> {
        const app = await apps(this.server).require(name);
        this.#refuseUndeployed(app.name, app.state);
        const backup = await this.#row(app.name, id);
        const snapshots = { snapshot: String(backup.snapshot), volumeSnapshots: volumeSnapshotsOf(backup) };
        return await this.#run(app, 'restore', actor, { reason: 'restore', ...snapshots }, async (state) => {
            // A restore that was rolled back started the app again as it was; one that failed left it as it could.
            const after = state === 'succeeded' || state === 'rolled back' ? 'running' : 'failed';
            await this.server.app.knex('dp_apps').where({ name: app.name }).update({ state: after });
            if (state === 'succeeded') await this.#followRestoredImage(app);
        });
    }

    /**
     * The image the restored compose file runs, into the app's draft and its image and tag: a backup taken before an
     * update brings the old tag back, and the app says so (the rest of the draft stays as it is).
     */
    async #followRestoredImage(app: AppRecord): Promise<void> {
        if (!app.image) return;
        const written = Path.join(this.server.app.config.apps.appsDir, app.name, 'compose.yaml');
        const restoredSpec = parseCompose(await Fs.promises.readFile(written, 'utf8'));
        const restored = restoredSpec.services[mainService(restoredSpec, { image: app.image }) ?? '']?.image;
        const current = (await apps(this.server).require(app.name)).draft.compose;
        const draftSpec = parseCompose(current);
        const service = mainService(draftSpec, { image: app.image });
        if (!restored || /\{\{|\$\{/.test(restored) || !service || draftSpec.services[service]?.image === restored) return;
        await apps(this.server).saveDraft(app.name, { compose: withServiceImage(current, service, restored) });
        await apps(this.server).followDeployedImage(app.name);
    }

    /** Forgets the backup's snapshots and prunes what no other snapshot uses. */
    async remove(name: string, id: number, actor: DeployUser): Promise<void> {
        const app = await apps(this.server).require(name);
        const backup = await this.#row(app.name, id);
        if (await runs(this.server).inProgress(app.name)) {
            throw new ConflictError(`another run is in progress for ${app.name}`);
        }

        try {
            await forgetAndPrune(await this.repository(), [String(backup.snapshot), ...snapshotIds(volumeSnapshotsOf(backup))]);
        } catch (error) {
            if (error instanceof ResticError && error.locked) {
                throw new ConflictError('the backup repository is in use by another backup; try again when it ends');
            }

            throw error;
        }

        await this.server.app.knex('dp_backups').where({ id }).delete();
        await audit(this.server).record({ actor, action: 'backups.delete', target: app.name, details: { backup: id } });
    }

    #deployed(name: string): boolean {
        return Fs.existsSync(Path.join(this.server.app.config.apps.appsDir, name, 'compose.yaml'));
    }

    #refuseUndeployed(name: string, state: string): void {
        if (state === 'draft' || !this.#deployed(name)) {
            throw new ValidationError(`${name} has not been deployed yet: there is nothing to back up or restore`);
        }
    }

    async #row(app: string, id: number): Promise<Record<string, unknown>> {
        const row = (await this.server.app.knex('dp_backups').where({ id, app_name: app, repository_hash: this.#hash }).first()) as
            Record<string, unknown> | undefined;
        if (!row) {
            throw new NotFoundError(`${app} has no backup ${id}`);
        }

        return row;
    }

    /** A backup or restore run of the app, with the repository opened and the app's recipe's dump, if it has one. */
    async #run(
        app: AppRecord,
        kind: 'backup' | 'restore',
        actor: DeployUser | null,
        extra: Pick<BackupRunData, 'reason' | 'snapshot' | 'volumeSnapshots'>,
        onEnd: (state: string) => Promise<void>,
    ): Promise<number> {
        const dump = (await recipes(this.server).forApp(app))?.backup?.dump;
        const data = { domain: app.domain, backupKind: kind, restic: await this.repository(), ...(dump ? { dump } : {}), ...extra };
        return await runs(this.server).start({ app: app.name, kind, actor, script: BACKUP_SCRIPT, data, onEnd });
    }
}

export const backups = defineService<BackupService>('backups', (owner) => new BackupService(owner));
