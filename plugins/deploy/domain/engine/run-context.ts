/** What every app run works with inside its worker: the app's paths, the host, a logger and the resource ledger. */
import Fs from 'node:fs';
import Path from 'node:path';

import type { Knex } from 'knex';

import type { Config } from '../../../../lib/config.ts';
import type { ActiveConnection } from '../../../idp/connection-service.ts';
import type { MethodSettings } from '../../../sso/method-types.ts';
import type { ResticRepository } from '../host/restic.ts';
import type { RecipeDump } from '../recipes/recipe-types.ts';
import type { RunMessage } from '../runs/run-service.ts';
import { fileEntry, type JournalEntry, rewriteJournal, writeJournal } from './run-journal.ts';

export type AppRunKind = 'deploy' | 'compose' | 'nginx' | 'action' | 'delete' | 'sso' | 'update';
export type AppAction = 'restart' | 'stop' | 'start';

export interface DeleteOptions {
    deleteData: boolean;
    removeDns: boolean;
    removeCert: boolean;
    removeAccess: boolean;
    removeVolumes: boolean;
    removeImages: boolean;
    removeArchives: boolean;
    includePreexisting: boolean;
    forgetHistory: boolean;
}

/** The files a deploy writes, rendered by the server (the worker never sees the master key). */
export interface AppFilesToWrite {
    compose: string;
    secrets: string;
    site: string;
}

/** The identity provider as a run uses it: the connection (its token opened for the run) and the app's groups. */
export interface RunAccess {
    connection: ActiveConnection;
    title: string;
    /** Group pks bound to the app's application; none lets every signed-in user of the provider through. */
    groups: string[];
    /** Hand-written locations of the site that the forward-auth check does not cover. */
    openLocations?: string[];
    /** No forward auth (the recipe's ownDoor): the app's own OpenID sign-in is the door, its client bound to the groups. */
    ownDoor?: boolean;
}

/** A recipe's one-time commands: shell text holding no values, the values (secrets too) in the variables it reads. */
export interface InitCommands {
    service: string;
    commands: string[];
    environment: Record<string, string>;
    user?: string;
}

/** A backup of the app as it is (BACKUP_BEFORE_CHANGES), taken by the run before it changes anything. */
export interface BackupFirst {
    restic: ResticRepository & { hash: string };
    /** Why it was made, as the backups list shows it: `before deploy`, `before delete`... */
    reason: string;
    /** The app's recipe's dump, when it says how to take one and the app is running. */
    dump?: RecipeDump;
}

export interface AppRunData {
    runId: number;
    app: string;
    kind: AppRunKind;
    domain: string;
    files?: AppFilesToWrite;
    /** The secrets as values for `${VAR}`. */
    values?: Record<string, string>;
    action?: AppAction;
    remove?: DeleteOptions;
    /** Set when a provider is connected: a deploy puts the app behind it, a delete may remove its objects. */
    access?: RunAccess;
    /** What the server noticed while preparing the run, logged as warnings when it starts. */
    notes?: string[];
    /** The recipe's one-time commands, run in the main service's container once it is healthy. */
    init?: InitCommands;
    /** The app's sign-in method and what it needs (the shared password opened for the run). */
    signIn?: { method: string; settings: MethodSettings };
    /** A backup to take first; a delete that takes one leaves no loose archives of what it holds. */
    backupFirst?: BackupFirst;
}

export type ResourceKind = 'image' | 'volume' | 'certificate' | 'dns' | 'archive' | 'access';

export interface AppPaths {
    appDir: string;
    composeFile: string;
    secretsFile: string;
    siteFile: string;
}

export function appPaths(config: Config, app: string): AppPaths {
    const appDir = Path.join(config.apps.appsDir, app);
    return {
        appDir,
        composeFile: Path.join(appDir, 'compose.yaml'),
        secretsFile: Path.join(appDir, 'secrets.env'),
        siteFile: Path.join(config.apps.nginxSitesDir, `${app}.conf`),
    };
}

export class RunContext {
    readonly config: Config;
    readonly data: AppRunData;
    readonly paths: AppPaths;
    readonly #database: () => Promise<Knex>;
    readonly #post: (message: RunMessage) => void;
    step = 'start';

    constructor(config: Config, data: AppRunData, database: () => Promise<Knex>, post: (message: RunMessage) => void) {
        this.config = config;
        this.data = data;
        this.#database = database;
        this.paths = appPaths(config, data.app);
        this.#post = post;
    }

    log = (text: string, level: 'info' | 'warning' | 'error' = 'info'): void => {
        this.#post({ type: 'event', step: this.step, level, text });
    };

    /** Blanks the app's secret values in text the app wrote (its logs, a command's output) before the run shows it. */
    mask = (text: string): string =>
        Object.values(this.data.values ?? {})
            .filter((secret) => secret.length >= 4)
            .reduce((masked, secret) => masked.replaceAll(secret, '••••••••'), text);

    /** The run's own database connection, opened on first use. */
    async database(): Promise<Knex> {
        return await this.#database();
    }

    /** Writes the change about to be made to the run's journal, for an interrupted run to be undone from; answers its id. */
    async journal(entry: JournalEntry): Promise<number> {
        return await writeJournal(await this.#database(), this.data.runId, entry);
    }

    /** Rewrites a journal entry with what is known now, before the next part of its change is made. */
    async rejournal(id: number, entry: JournalEntry): Promise<void> {
        await rewriteJournal(await this.#database(), id, entry);
    }

    /** Journals the file, then writes it (see writeChangedFile). */
    async writeFile(changed: FileSnapshot[], path: string, content: string, mode: number): Promise<void> {
        await this.journal(fileEntry(this.config.dataDir, this.data.runId, path));
        writeChangedFile(changed, path, content, mode);
    }

    /**
     * Test-only: with GATEHOUSE_TEST_PAUSE_AT=<step> and GATEHOUSE_TEST_PAUSE_FILE=<path>, the run writes the step
     * into the file when it reaches that point and waits there (at most ten minutes), for a test to kill its server.
     */
    async pauseIfAsked(step: string): Promise<void> {
        const file = process.env.GATEHOUSE_TEST_PAUSE_FILE;
        if (process.env.GATEHOUSE_TEST_PAUSE_AT !== step || !file) {
            return;
        }

        Fs.writeFileSync(file, step);
        await new Promise((resolve) => setTimeout(resolve, 600_000));
    }

    // The resource ledger.
    async recordResource(kind: ResourceKind, name: string): Promise<void> {
        const knex = await this.#database();
        const existing = await knex('dp_app_resources').where({ app_name: this.data.app, kind, name }).first('id');
        if (!existing) {
            await knex('dp_app_resources').insert({ app_name: this.data.app, kind, name, created_at: Date.now() });
        }
    }

    async resources(kind: ResourceKind): Promise<string[]> {
        const knex = await this.#database();
        return (await knex('dp_app_resources').where({ app_name: this.data.app, kind }).select('name')).map((row) => String(row.name));
    }

    async forgetResource(kind: ResourceKind, name: string): Promise<void> {
        const knex = await this.#database();
        await knex('dp_app_resources').where({ app_name: this.data.app, kind, name }).delete();
    }
}

/** A file's content before a run changed it (undefined: it did not exist), to put back on rollback. */
export interface FileSnapshot {
    path: string;
    content: string | undefined;
    mode: number;
}

export function snapshotFile(path: string): FileSnapshot {
    if (!Fs.existsSync(path)) {
        return { path, content: undefined, mode: 0o600 };
    }

    return { path, content: Fs.readFileSync(path, 'utf8'), mode: Fs.statSync(path).mode & 0o777 };
}

/**
 * Writes `path` and adds its snapshot to `changed` once the write has happened: a rollback then puts back only the
 * files the run did change (a write refused, say in an immutable folder, left the file as it was).
 */
export function writeChangedFile(changed: FileSnapshot[], path: string, content: string, mode: number): void {
    const snapshot = snapshotFile(path);
    writeFileAtomically(path, content, mode);
    changed.push(snapshot);
}

export function restoreFile(snapshot: FileSnapshot): void {
    if (snapshot.content === undefined) {
        Fs.rmSync(snapshot.path, { force: true });
    } else {
        writeFileAtomically(snapshot.path, snapshot.content, snapshot.mode);
    }
}

/** Written beside and renamed into place, so that a reader sees the old file or the new one, never half of one. */
export function writeFileAtomically(path: string, content: string, mode: number): void {
    Fs.mkdirSync(Path.dirname(path), { recursive: true });
    const temporary = `${path}.${process.pid}.tmp`;
    try {
        Fs.writeFileSync(temporary, content, { mode });
        Fs.chmodSync(temporary, mode);
        Fs.renameSync(temporary, path);
    } catch (error) {
        Fs.rmSync(temporary, { force: true, maxRetries: 0 });
        throw error;
    }
}
