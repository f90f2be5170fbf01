/**
 * A run's journal: every change a run makes to the host is written to the database before it is made, so that a
 * run whose server was killed can be undone, last change first, by the server that takes it over. A file's previous
 * content is kept as a copy under the data directory (never in the database: secrets.env holds secrets).
 */
import Fs from 'node:fs';
import Path from 'node:path';

import type { Knex } from 'knex';

import type { ForwardAuthApp, ForwardAuthChanges } from '../../../idp/idp-types.ts';
import type { MethodWorkJournal } from '../../../sso/method-types.ts';

export type JournalEntry =
    /** A file about to be written; `backup` holds its previous content, null when it did not exist. */
    | { type: 'file'; path: string; backup: string | null; mode: number }
    /** A container about to be made under this name (a previous one was set aside first). */
    | { type: 'container'; name: string }
    /** A container about to be stopped and renamed out of the way. */
    | { type: 'set-aside'; id: string; name: string; wasRunning: boolean }
    | { type: 'network'; name: string }
    | { type: 'volume'; name: string }
    /** A Swarm service about to be made under this name. */
    | { type: 'service'; name: string }
    /** A Swarm service about to be updated: undone by Swarm's rollback to its previous spec. */
    | { type: 'service-update'; id: string; name: string }
    /** A Swarm secret or config about to be made under this name (never with its value). */
    | { type: 'swarm-object'; kind: 'secret' | 'config'; name: string }
    /**
     * An identity-provider object about to be made or updated; `existed`: it was the app's before the run. For forward
     * auth, `forwardAuth` holds what the adapter found before each change it made (rewritten as it goes), so that an
     * object that existed is put back as it was.
     */
    | {
          type: 'access';
          objectName: string;
          existed: boolean;
          forwardAuth?: { app: ForwardAuthApp; changes: ForwardAuthChanges };
          /** The same for a sign-in method's objects (an OpenID client, a SAML provider). */
          method?: MethodWorkJournal;
      }
    /**
     * A DNS name about to be pointed at this host; `previous`: the addresses it had (none: it had no record);
     * `existed`: the record was the app's before the run.
     */
    | { type: 'dns'; domain: string; previous: string[]; existed: boolean }
    /**
     * The app's draft as it was before the run changed it (a sign-in change, a compose update), put back when the
     * run is undone; sealed, as it may hold the shared account's password.
     */
    | { type: 'draft'; sealed: string };

const TABLE = 'dp_run_journal';

/** What a journalled draft is sealed for (the sealer's associated data). */
export const DRAFT_IN_JOURNAL = 'dp_run_journal:draft';

export function backupsDir(dataDir: string, runId: number): string {
    return Path.join(dataDir, 'run-journal', String(runId));
}

/**
 * The entry as stored: never with a secret (the worker cannot seal, having no master key). An OpenID client's
 * secret is the app's own value, which a run does not change, so its undo needs none.
 */
function stored(entry: JournalEntry): string {
    return JSON.stringify(entry, (key, value: unknown) => (SECRET_KEYS.has(key) ? undefined : value));
}

const SECRET_KEYS = new Set(['clientSecret', 'client_secret']);

/** Adds the entry to the run's journal; answers its id, for rewriteJournal. */
export async function writeJournal(knex: Knex, runId: number, entry: JournalEntry): Promise<number> {
    const [id] = await knex(TABLE).insert({ run_id: runId, entry: stored(entry), at: Date.now() });
    return Number(id);
}

/** Replaces an entry with what is known now (a change about to be made learnt more of what it changes). */
export async function rewriteJournal(knex: Knex, id: number, entry: JournalEntry): Promise<void> {
    await knex(TABLE)
        .where({ id })
        .update({ entry: stored(entry) });
}

/** Keeps a copy of `path` for the journal (0600), and answers the journal's entry for writing it. */
export function fileEntry(dataDir: string, runId: number, path: string): JournalEntry {
    if (!Fs.existsSync(path)) {
        return { type: 'file', path, backup: null, mode: 0o600 };
    }

    const dir = backupsDir(dataDir, runId);
    Fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const backup = Path.join(dir, `${Fs.readdirSync(dir).length + 1}`);
    Fs.copyFileSync(path, backup);
    Fs.chmodSync(backup, 0o600);
    return { type: 'file', path, backup, mode: Fs.statSync(path).mode & 0o777 };
}

/** The run's entries, in the order they were written. */
export async function journalOf(knex: Knex, runId: number): Promise<JournalEntry[]> {
    const rows = await knex(TABLE).where({ run_id: runId }).orderBy('id').select('entry');
    return rows.map((row) => JSON.parse(String(row.entry)) as JournalEntry);
}

/** A run that ended (succeeded, or undone) needs its journal no more. */
export async function forgetJournal(knex: Knex, dataDir: string, runId: number): Promise<void> {
    await knex(TABLE).where({ run_id: runId }).delete();
    Fs.rmSync(backupsDir(dataDir, runId), { recursive: true, force: true });
}
