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

/** Makes the repository when there is none yet; one made meanwhile by another restic is as good. */
export async function ensureRepository(repository: ResticRepository): Promise<void> {
    try {
        await restic(repository, ['cat', 'config']);
        return;
    } catch (error) {
        if (!/Is there a repository|unable to open config file/i.test((error as Error).message)) {
            throw error;
        }
    }

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

/** Backs up the folder `cwd` (its contents at the snapshot's root), tagged; answers the snapshot's full id and size. */
export async function backupFolder(repository: ResticRepository, cwd: string, tags: string[]): Promise<{ snapshot: string; size: number }> {
    const output = await restic(repository, ['backup', '--json', '--host', 'gatehouse', ...tags.flatMap((tag) => ['--tag', tag]), '.'], {
        cwd,
    });
    const summary = output
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as SnapshotSummary)
        .find((message) => message.message_type === 'summary');
    if (!summary?.snapshot_id) {
        throw new Error('restic backup did not say which snapshot it made');
    }

    const [snapshot] = JSON.parse(await restic(repository, ['snapshots', '--json', summary.snapshot_id])) as Array<{ id: string }>;
    return { snapshot: snapshot?.id ?? summary.snapshot_id, size: summary.total_bytes_processed ?? 0 };
}

/** restic forget's options for a policy such as `7 daily, 4 weekly, 6 monthly` (BACKUP_KEEP, checked at start). */
export function keepOptions(policy: string): string[] {
    return policy
        .split(',')
        .map((part) => part.trim().split(/\s+/))
        .flatMap(([count = '', unit = '']) => [`--keep-${unit}`, count]);
}

/**
 * Applies the policy to the snapshots with the tag, as one group, then prunes what no snapshot uses any more;
 * answers the ids of the snapshots removed.
 */
export async function forgetByPolicy(repository: ResticRepository, tag: string, policy: string): Promise<string[]> {
    const output = await restic(repository, ['forget', '--json', '--tag', tag, '--group-by', 'host', ...keepOptions(policy)]);
    const line = output.split('\n').find((candidate) => candidate.startsWith('['));
    const groups = line ? (JSON.parse(line) as Array<{ remove?: Array<{ id: string }> | null }>) : [];
    const removed = groups.flatMap((group) => (group.remove ?? []).map((snapshot) => snapshot.id));
    if (removed.length > 0) {
        await restic(repository, ['prune']);
    }

    return removed;
}
