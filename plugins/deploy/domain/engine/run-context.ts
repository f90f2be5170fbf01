/** What every app run works with inside its worker: the app's paths, the host, a logger and the resource ledger. */
import Fs from 'node:fs';
import Path from 'node:path';

import type { Knex } from 'knex';

import type { Config } from '../../../../lib/config.ts';
import type { ActiveConnection } from '../../../idp/connection-service.ts';
import type { MethodSettings } from '../../../sso/method-types.ts';
import type { RunMessage } from '../runs/run-service.ts';

export type AppRunKind = 'deploy' | 'compose' | 'nginx' | 'action' | 'delete' | 'sso';
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
    /** The recipe's one-time commands, run in the main service's container once it is healthy (values filled, secrets too). */
    init?: { service: string; commands: string[]; user?: string };
    /** The app's sign-in method and what it needs (the shared password opened for the run). */
    signIn?: { method: string; settings: MethodSettings };
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

    /** The run's own database connection, opened on first use. */
    async database(): Promise<Knex> {
        return await this.#database();
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
    Fs.writeFileSync(temporary, content, { mode });
    Fs.chmodSync(temporary, mode);
    Fs.renameSync(temporary, path);
}
