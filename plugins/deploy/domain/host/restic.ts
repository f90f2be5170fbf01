/**
 * Debian's restic, the one program that reads and writes the backups' repository: always called with its arguments
 * as an array (no shell), the password in RESTIC_PASSWORD (never on its command line, in a log line or an error).
 */
import { spawn } from 'node:child_process';
import Crypto from 'node:crypto';
import Path from 'node:path';

export interface ResticRepository {
    /** A folder, or any backend restic knows (`sftp:host:/path`, `s3:...`). */
    repository: string;
    password: string;
    /** restic's local cache of the repository's index. */
    cacheDir: string;
    /** `sftp.command` for the SFTP backend (BACKUP_SFTP_COMMAND), when ssh needs more than its defaults. */
    sftpCommand?: string | undefined;
}

export class ResticError extends Error {
    /** The repository was locked by another restic (a backup or a removal in progress). */
    readonly locked: boolean;

    constructor(message: string, locked: boolean) {
        super(message);
        this.locked = locked;
    }
}

/** The repository's identity in the database: its location's hash, so that a moved repository gets its own key. */
export function repositoryHash(repository: string): string {
    return Crypto.createHash('sha256').update(repository).digest('hex');
}

export function cacheDirOf(dataDir: string): string {
    return Path.join(dataDir, 'restic-cache');
}

const KEPT_ERROR_LINES = 6;

export interface ResticCall {
    cwd?: string;
    /** Where restic's standard output goes instead of the answer (restic dump). */
    stdout?: NodeJS.WritableStream;
}

/** Runs restic with `args`; answers its standard output. A failure names the subcommand and restic's last lines. */
export async function restic(repository: ResticRepository, args: string[], call: ResticCall = {}): Promise<string> {
    const environment: NodeJS.ProcessEnv = { ...process.env };
    for (const name of Object.keys(environment).filter((key) => key.startsWith('RESTIC_'))) {
        delete environment[name];
    }

    const options = repository.sftpCommand ? ['-o', `sftp.command=${repository.sftpCommand}`] : [];
    const child = spawn('restic', [...options, ...args], {
        cwd: call.cwd,
        env: {
            ...environment,
            RESTIC_REPOSITORY: repository.repository,
            RESTIC_PASSWORD: repository.password,
            RESTIC_CACHE_DIR: repository.cacheDir,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
    });
    const output: Buffer[] = [];
    const errors: Buffer[] = [];
    if (call.stdout) {
        child.stdout.pipe(call.stdout);
    } else {
        child.stdout.on('data', (chunk: Buffer) => output.push(chunk));
    }

    child.stderr.on('data', (chunk: Buffer) => errors.push(chunk));
    const code = await new Promise<number | null>((resolve, reject) => {
        child.once('error', reject);
        child.once('close', resolve);
    });
    if (code !== 0) {
        const said = Buffer.concat(errors).toString('utf8').replaceAll(repository.password, '••••••••').trim();
        const lines = said.split('\n').slice(-KEPT_ERROR_LINES).join(' / ');
        throw new ResticError(`restic ${args[0] ?? ''} failed (exit ${code ?? 'signal'}): ${lines}`, /already locked/i.test(said));
    }

    return Buffer.concat(output).toString('utf8');
}

/** restic found no repository at the place given (none made yet, or removed). */
function isMissingRepository(error: unknown): boolean {
    return error instanceof ResticError && /Is there a repository|unable to open config file/i.test(error.message);
}

/** Makes the repository; one made meanwhile by another restic is as good. */
async function makeRepository(repository: ResticRepository): Promise<void> {
    try {
        await restic(repository, ['init']);
    } catch (error) {
        if (!/already (exists|initialized)/i.test((error as Error).message)) {
            throw error;
        }
    }
}

interface SnapshotSummary {
    message_type?: string;
    snapshot_id?: string;
    total_bytes_processed?: number;
}

/**
 * Backs up the folder `cwd` (its contents at the snapshot's root), tagged, making the repository first when there is
 * none; answers the snapshot's id as restic gives it (short: see fullSnapshotIds) and the bytes read.
 */
export async function backupFolder(repository: ResticRepository, cwd: string, tags: string[]): Promise<{ snapshot: string; size: number }> {
    const args = ['backup', '--json', '--host', 'gatehouse', ...tags.flatMap((tag) => ['--tag', tag]), '.'];
    let output: string;
    try {
        output = await restic(repository, args, { cwd });
    } catch (error) {
        if (!isMissingRepository(error)) throw error;
        await makeRepository(repository);
        output = await restic(repository, args, { cwd });
    }

    const summary = output
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as SnapshotSummary)
        .find((message) => message.message_type === 'summary');
    if (!summary?.snapshot_id) {
        throw new Error('restic backup did not say which snapshot it made');
    }

    return { snapshot: summary.snapshot_id, size: summary.total_bytes_processed ?? 0 };
}

/**
 * The full ids of snapshots given by any prefix (restic backup answers a short one), in one call: each call opens
 * the repository, which costs restic its key derivation (about half a second).
 */
export async function fullSnapshotIds(repository: ResticRepository, ids: string[]): Promise<Map<string, string>> {
    const listed = JSON.parse(await restic(repository, ['snapshots', '--json', ...ids])) as Array<{ id: string }>;
    const full = new Map<string, string>();
    for (const id of ids) {
        const found = listed.find((snapshot) => snapshot.id.startsWith(id));
        if (!found) throw new Error(`restic does not list the snapshot ${id} it made`);
        full.set(id, found.id);
    }

    return full;
}

/** restic forget's options for a policy such as `7 daily, 4 weekly, 6 monthly` (BACKUP_KEEP, checked at start). */
export function keepOptions(policy: string): string[] {
    return policy
        .split(',')
        .map((part) => part.trim().split(/\s+/))
        .flatMap(([count = '', unit = '']) => [`--keep-${unit}`, count]);
}

/**
 * Applies the policy to the snapshots with the tag, as one group; answers the ids of the snapshots it forgot. What no
 * snapshot uses any more stays in the repository until `forgetAndPrune`.
 */
export async function forgetByPolicy(repository: ResticRepository, tag: string, policy: string): Promise<string[]> {
    const output = await restic(repository, ['forget', '--json', '--tag', tag, '--group-by', 'host', ...keepOptions(policy)]);
    const line = output.split('\n').find((candidate) => candidate.startsWith('['));
    const groups = line ? (JSON.parse(line) as Array<{ remove?: Array<{ id: string }> | null }>) : [];
    return groups.flatMap((group) => (group.remove ?? []).map((snapshot) => snapshot.id));
}

/** Forgets the snapshots (none: only prunes), then removes from the repository what no snapshot uses any more. */
export async function forgetAndPrune(repository: ResticRepository, snapshots: string[]): Promise<void> {
    await restic(repository, snapshots.length > 0 ? ['forget', '--prune', ...snapshots] : ['prune']);
}
