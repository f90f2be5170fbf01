import { spawn } from 'node:child_process';
import Os from 'node:os';
import Path from 'node:path';

import { ValidationError } from '../../../../lib/errors.ts';

// git, run as a program: arguments as an array (no shell), with the caller's git configuration and GIT_* left out.

/** The branch a new repository starts on; adoption prefers it when HEAD names no branch that exists. */
export const DEFAULT_BRANCH = 'main';

interface GitOptions {
    gitDir?: string;
    input?: string;
    env?: Record<string, string>;
}

function gitEnvironment(options: GitOptions): NodeJS.ProcessEnv {
    const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('GIT_')));
    return {
        ...inherited,
        GIT_CONFIG_NOSYSTEM: '1',
        GIT_CONFIG_GLOBAL: Os.devNull,
        GIT_TERMINAL_PROMPT: '0',
        ...(options.gitDir ? { GIT_DIR: options.gitDir } : {}),
        ...options.env,
    };
}

export async function runGit(args: string[], options: GitOptions = {}): Promise<string> {
    return await new Promise((resolve, reject) => {
        const child = spawn('git', ['-c', 'safe.directory=*', ...args], { env: gitEnvironment(options), stdio: 'pipe' });
        const stdout: Buffer[] = [];
        const stderr: Buffer[] = [];
        child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
        child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
        child.on('error', reject);
        // A git that exits before reading its input breaks the pipe; its exit status tells what went wrong.
        child.stdin.on('error', () => undefined);
        child.on('close', (code) => {
            if (code === 0) {
                resolve(Buffer.concat(stdout).toString('utf8'));
                return;
            }

            reject(new Error(`git ${args[0] ?? ''} failed (${code}): ${Buffer.concat(stderr).toString('utf8').trim()}`));
        });
        child.stdin.end(options.input ?? '');
    });
}

/** git's rules for a branch name (check-ref-format), checked here so that nothing is spawned for a bad one. */
export function isValidBranchName(name: string): boolean {
    return (
        name.length > 0 &&
        name.length <= 255 &&
        name !== '@' &&
        !name.startsWith('-') &&
        !name.startsWith('/') &&
        !name.endsWith('/') &&
        !name.endsWith('.') &&
        !name.endsWith('.lock') &&
        !/(^|\/)\./.test(name) &&
        ![...name].some((character) => character <= ' ' || character === '\x7f') &&
        !/\.\.|\/\/|@\{|[~^:?*[\\]/.test(name) &&
        !name.split('/').some((part) => part.endsWith('.lock'))
    );
}

export interface InitialFile {
    name: string;
    content: string;
}

export interface Signature {
    name: string;
    email: string;
}

export async function initBareRepository(directory: string, branch: string, objectFormat: string): Promise<void> {
    await runGit(['init', '--quiet', '--bare', `--object-format=${objectFormat}`, `--initial-branch=${branch}`, directory]);
}

/** The first commit, written with plumbing straight into the object store: no work tree, no index. */
export async function writeInitialCommit(gitDir: string, branch: string, files: InitialFile[], author: Signature): Promise<void> {
    const entries: string[] = [];
    for (const file of files) {
        const blob = (await runGit(['hash-object', '-w', '--stdin'], { gitDir, input: file.content })).trim();
        entries.push(`100644 blob ${blob}\t${file.name}\n`);
    }

    const tree = (await runGit(['mktree'], { gitDir, input: entries.join('') })).trim();
    const env = {
        GIT_AUTHOR_NAME: author.name,
        GIT_AUTHOR_EMAIL: author.email,
        GIT_COMMITTER_NAME: author.name,
        GIT_COMMITTER_EMAIL: author.email,
    };
    const commit = (await runGit(['commit-tree', tree], { gitDir, env, input: 'Initial commit\n' })).trim();
    await runGit(['update-ref', `refs/heads/${branch}`, commit], { gitDir });
}

async function branchesOf(gitDir: string): Promise<string[]> {
    const output = await runGit(['for-each-ref', '--format=%(refname)', 'refs/heads/'], { gitDir });
    return output
        .split('\n')
        .filter((line) => line.startsWith('refs/heads/'))
        .map((line) => line.slice('refs/heads/'.length))
        .sort(byteOrder);
}

async function headBranch(gitDir: string): Promise<string | undefined> {
    const output = await runGit(['symbolic-ref', '-q', 'HEAD'], { gitDir }).catch(() => '');
    const reference = output.trim();
    return reference.startsWith('refs/heads/') ? reference.slice('refs/heads/'.length) : undefined;
}

export interface DiskFacts {
    defaultBranch: string;
    isEmpty: boolean;
    objectFormat: string;
    /** HEAD names a branch that does not exist while others do: it is pointed at the default branch. */
    headNeedsMoving: boolean;
}

/** What adoption learns from a bare repository: HEAD's branch, else main, master or the first branch. */
export async function inspectRepository(gitDir: string): Promise<DiskFacts> {
    const isBare = await runGit(['rev-parse', '--is-bare-repository'], { gitDir }).catch(() => '');
    if (isBare.trim() !== 'true') {
        throw new ValidationError(`not a bare git repository [path: ${Path.basename(gitDir)}]`);
    }

    const objectFormat = (await runGit(['rev-parse', '--show-object-format'], { gitDir })).trim() || 'sha1';
    const branches = await branchesOf(gitDir);
    const head = await headBranch(gitDir);
    if (branches.length === 0) {
        return { defaultBranch: head ?? DEFAULT_BRANCH, isEmpty: true, objectFormat, headNeedsMoving: false };
    }

    const preferred = [head, DEFAULT_BRANCH, 'master'].find((name) => name !== undefined && branches.includes(name));
    const defaultBranch = preferred ?? (branches[0] as string);
    return { defaultBranch, isEmpty: false, objectFormat, headNeedsMoving: defaultBranch !== head };
}

/** git and Go sort names by bytes: upper case before lower case. */
export function byteOrder(left: string, right: string): number {
    return Buffer.compare(Buffer.from(left), Buffer.from(right));
}
