import { spawn } from 'node:child_process';
import Fs from 'node:fs';
import Os from 'node:os';
import Path from 'node:path';

import type { Server } from '@hapi/hapi';
import type { Knex } from 'knex';

import { isUniqueViolation, now, toRfc3339 } from '../../../../lib/database.ts';
import { BadRequestError, ConflictError, ForbiddenError, NotFoundError, ValidationError } from '../../../../lib/errors.ts';
import type { Paging } from '../../../../lib/paging.ts';
import { defineService } from '../../../../lib/services.ts';
import { type ApiUser, toApiUser } from '../identity/format.ts';
import { repositoryNameProblem } from '../identity/names.ts';
import { onUserRename, registerOwnedThings, users, type UserRow } from '../identity/user-service.ts';
import { repositoryEvents } from '../webhooks/repository-events.ts';
import { directorySize } from '../../../../lib/files.ts';

export const DEFAULT_BRANCH = 'main';
const README_TEMPLATES = ['Default'];
const MAX_DESCRIPTION_LENGTH = 2048;
const VISIBILITY_PRIVATE = 2;

export interface RepositoryRow {
    id: number;
    owner_id: number;
    owner_name: string;
    lower_name: string;
    name: string;
    description: string;
    website: string;
    is_private: boolean;
    is_empty: boolean;
    is_template: boolean;
    is_archived: boolean;
    default_branch: string;
    /** Bytes on disk; the API shows KiB. */
    size: number;
    object_format_name: string;
    created_at: number;
    updated_at: number;
}

/** Gitea's CreateRepoOption. */
export interface CreateRepositoryInput {
    name: string;
    description?: string;
    private?: boolean;
    template?: boolean;
    auto_init?: boolean;
    default_branch?: string;
    gitignores?: string;
    license?: string;
    readme?: string;
    issue_labels?: string;
    object_format_name?: string;
    trust_model?: string;
}

const BOOLEAN_COLUMNS = ['is_private', 'is_empty', 'is_template', 'is_archived'] as const;
const NUMBER_COLUMNS = ['id', 'owner_id', 'size', 'created_at', 'updated_at'] as const;

export function toRepositoryRow(raw: Record<string, unknown>): RepositoryRow {
    const row = { ...raw };
    for (const column of BOOLEAN_COLUMNS) {
        row[column] = Boolean(row[column]);
    }

    for (const column of NUMBER_COLUMNS) {
        row[column] = Number(row[column]);
    }

    return row as unknown as RepositoryRow;
}

// ---------------------------------------------------------------------------------------------------------------
// git, run as a program: arguments as an array (no shell), with the caller's git configuration and GIT_* left out.

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

interface InitialFile {
    name: string;
    content: string;
}

interface Signature {
    name: string;
    email: string;
}

async function initBareRepository(directory: string, branch: string, objectFormat: string): Promise<void> {
    await runGit(['init', '--quiet', '--bare', `--object-format=${objectFormat}`, `--initial-branch=${branch}`, directory]);
}

/** The first commit, written with plumbing straight into the object store: no work tree, no index. */
async function writeInitialCommit(gitDir: string, branch: string, files: InitialFile[], author: Signature): Promise<void> {
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

interface DiskFacts {
    defaultBranch: string;
    isEmpty: boolean;
    objectFormat: string;
    /** HEAD names a branch that does not exist while others do: it is pointed at the default branch. */
    headNeedsMoving: boolean;
}

/** What adoption learns from a bare repository: HEAD's branch, else main, master or the first branch. */
async function inspectRepository(gitDir: string): Promise<DiskFacts> {
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

// ---------------------------------------------------------------------------------------------------------------
// Globs for the unadopted list: Gitea's `*`, `?`, `[...]` (`[!...]` negated) and `{a,b}`.

function byteOrder(left: string, right: string): number {
    return Buffer.compare(Buffer.from(left), Buffer.from(right));
}

function escapeForRegExp(text: string): string {
    return text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}

function characterClass(glob: string, open: number): { source: string; close: number } {
    let start = open + 1;
    const negated = glob[start] === '!' || glob[start] === '^';
    if (negated) {
        start += 1;
    }

    const close = glob.indexOf(']', start);
    if (close <= start) {
        throw new ValidationError(`invalid pattern [${glob}]`);
    }

    const body = glob.slice(start, close).replace(/[\\\]^[]/g, '\\$&');
    return { source: `[${negated ? '^' : ''}${body}]`, close };
}

export function globToRegExp(glob: string): RegExp {
    let source = '';
    let openBraces = 0;
    for (let index = 0; index < glob.length; index += 1) {
        const character = glob[index] as string;
        if (character === '*') {
            source += '.*';
        } else if (character === '?') {
            source += '.';
        } else if (character === '[') {
            const range = characterClass(glob, index);
            source += range.source;
            index = range.close;
        } else if (character === '{') {
            openBraces += 1;
            source += '(?:';
        } else if (character === '}' && openBraces > 0) {
            openBraces -= 1;
            source += ')';
        } else if (character === ',' && openBraces > 0) {
            source += '|';
        } else if (character === '\\' && index + 1 < glob.length) {
            index += 1;
            source += escapeForRegExp(glob[index] as string);
        } else {
            source += escapeForRegExp(character);
        }
    }

    if (openBraces > 0) {
        throw new ValidationError(`invalid pattern [${glob}]`);
    }

    try {
        return new RegExp(`^${source}$`);
    } catch {
        throw new ValidationError(`invalid pattern [${glob}]`);
    }
}

/** `owner` or `owner/repo`, split once at the first slash; an empty side matches everything. */
function unadoptedMatchers(query: string): { owner: RegExp; repo: RegExp } {
    const slash = query.indexOf('/');
    const ownerGlob = slash < 0 ? query : query.slice(0, slash);
    const repoGlob = slash < 0 ? '' : query.slice(slash + 1);
    return { owner: globToRegExp(ownerGlob || '*'), repo: globToRegExp(repoGlob || '*') };
}

function sortedDirectories(directory: string): string[] {
    if (!Fs.existsSync(directory)) {
        return [];
    }

    return Fs.readdirSync(directory, { withFileTypes: true })
        .filter((entry) => entry.isDirectory())
        .map((entry) => entry.name)
        .sort(byteOrder);
}

function isPlainDirectory(path: string): boolean {
    try {
        return Fs.lstatSync(path).isDirectory();
    } catch {
        return false;
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Gitea's Repository.

export interface ApiPermission {
    admin: boolean;
    push: boolean;
    pull: boolean;
}

export interface ApiRepository {
    id: number;
    owner: ApiUser;
    name: string;
    full_name: string;
    description: string;
    empty: boolean;
    private: boolean;
    fork: boolean;
    template: boolean;
    mirror: boolean;
    size: number;
    language: string;
    languages_url: string;
    html_url: string;
    url: string;
    link: string;
    ssh_url: string;
    clone_url: string;
    original_url: string;
    website: string;
    stars_count: number;
    forks_count: number;
    watchers_count: number;
    open_issues_count: number;
    open_pr_counter: number;
    release_counter: number;
    default_branch: string;
    default_target_branch: string;
    branch_count: number;
    archived: boolean;
    created_at: string;
    updated_at: string;
    archived_at: string;
    permissions: ApiPermission;
    has_code: boolean;
    has_issues: boolean;
    internal_tracker: { enable_time_tracker: boolean; allow_only_contributors_to_track_time: boolean; enable_issue_dependencies: boolean };
    has_wiki: boolean;
    has_pull_requests: boolean;
    has_projects: boolean;
    projects_mode: string;
    has_releases: boolean;
    has_packages: boolean;
    has_actions: boolean;
    ignore_whitespace_conflicts: boolean;
    allow_merge_commits: boolean;
    allow_rebase: boolean;
    allow_rebase_explicit: boolean;
    allow_squash_merge: boolean;
    allow_fast_forward_only_merge: boolean;
    allow_rebase_update: boolean;
    allow_manual_merge: boolean;
    autodetect_manual_merge: boolean;
    allow_merge_update: boolean;
    default_delete_branch_after_merge: boolean;
    default_merge_style: string;
    default_update_style: string;
    default_allow_maintainer_edit: boolean;
    avatar_url: string;
    internal: boolean;
    mirror_interval: string;
    object_format_name: string;
    mirror_updated: string;
    mirror_last_sync_at: string;
    topics: string[];
    licenses: string[];
}

/** Site administrators and the owner have every right; anyone else may read a public repository. */
export function permissionsFor(repo: RepositoryRow, viewer: UserRow | undefined): ApiPermission {
    const full = Boolean(viewer && (viewer.is_admin || viewer.id === repo.owner_id));
    return { admin: full, push: full, pull: full || !repo.is_private };
}

function sshUrl(publicUrl: string, fullName: string): string {
    return `git@${new URL(publicUrl).hostname}:${fullName}.git`;
}

function repositoryLinks(fullName: string, publicUrl: string) {
    const apiUrl = `${publicUrl}api/v1/repos/${fullName}`;
    return {
        html_url: `${publicUrl}${fullName}`,
        url: apiUrl,
        languages_url: `${apiUrl}/languages`,
        clone_url: `${publicUrl}${fullName}.git`,
        ssh_url: sshUrl(publicUrl, fullName),
        link: '',
        original_url: '',
    };
}

/** The features and merge settings every new Gitea repository starts with. */
const DEFAULT_UNITS = {
    has_code: true,
    has_issues: true,
    internal_tracker: { enable_time_tracker: true, allow_only_contributors_to_track_time: true, enable_issue_dependencies: true },
    has_wiki: true,
    has_pull_requests: true,
    has_projects: true,
    projects_mode: 'all',
    has_releases: true,
    has_packages: true,
    has_actions: true,
    ignore_whitespace_conflicts: false,
    allow_merge_commits: true,
    allow_rebase: true,
    allow_rebase_explicit: true,
    allow_squash_merge: true,
    allow_fast_forward_only_merge: true,
    allow_rebase_update: true,
    allow_manual_merge: false,
    autodetect_manual_merge: false,
    allow_merge_update: true,
    default_delete_branch_after_merge: false,
    default_merge_style: 'merge',
    default_update_style: 'merge',
    default_allow_maintainer_edit: false,
};

const NO_ACTIVITY = {
    fork: false,
    mirror: false,
    language: '',
    stars_count: 0,
    forks_count: 0,
    watchers_count: 0,
    open_issues_count: 0,
    open_pr_counter: 0,
    release_counter: 0,
    mirror_interval: '',
    mirror_updated: toRfc3339(null),
    mirror_last_sync_at: toRfc3339(null),
    avatar_url: '',
    topics: [],
    licenses: [],
};

async function countOwnedRepositories(ownerId: number, server: Server): Promise<number> {
    const row = await server.app.knex('repositories').where({ owner_id: ownerId }).count({ count: '*' }).first();
    return Number(row?.count ?? 0);
}

async function purgeOwnedRepositories(owner: UserRow, trx: Knex.Transaction, server: Server): Promise<() => Promise<void>> {
    const announceDeleted = await repositoryEvents.deletingOwned(server, owner, trx);
    await trx('repositories').where({ owner_id: owner.id }).delete();
    const ownerDir = Path.join(server.app.config.repositoriesDir, owner.lower_name);
    return async () => {
        await Fs.promises.rm(ownerDir, { recursive: true, force: true });
        await announceDeleted();
    };
}

/** Records follow inside the rename's transaction; the owner's folder moves once it has committed. */
async function followOwnerRename(
    user: UserRow,
    newName: string,
    trx: Knex.Transaction,
    server: Server,
): Promise<(() => Promise<void>) | void> {
    await trx('repositories').where({ owner_id: user.id }).update({ owner_name: newName });
    const newLower = newName.toLowerCase();
    const root = server.app.config.repositoriesDir;
    const from = Path.join(root, user.lower_name);
    const to = Path.join(root, newLower);
    if (newLower === user.lower_name || !Fs.existsSync(from)) {
        return;
    }

    if (Fs.existsSync(to)) {
        throw new ValidationError(`user directory already exists [name: ${newName}]`);
    }

    return async () => await Fs.promises.rename(from, to);
}

registerOwnedThings({ name: 'repositories', count: countOwnedRepositories, purge: purgeOwnedRepositories });
onUserRename(followOwnerRename);

// ---------------------------------------------------------------------------------------------------------------

interface CreationPlan {
    name: string;
    defaultBranch: string;
    objectFormat: string;
    /** The first commit's files when auto_init is asked for. */
    files?: InitialFile[];
}

function sameNameConflict(): ConflictError {
    return new ConflictError('The repository with the same name already exists.');
}

function signatureOf(doer: UserRow): Signature {
    return { name: doer.full_name || doer.name, email: doer.email || `${doer.lower_name}@noreply.localhost` };
}

/** Fills the usual copyright placeholders of licence texts, as Gitea does. */
function fillLicense(text: string, owner: UserRow): string {
    const year = String(new Date().getUTCFullYear());
    return text
        .replace(/<year>|\[year\]|\[yyyy\]|\{year\}|<yyyy>/g, year)
        .replace(
            /<copyright holders>|<name of author>|<owner>|\[fullname\]|\[name of copyright owner\]|\{owner\}/g,
            owner.full_name || owner.name,
        );
}

export class RepositoryService {
    readonly #server: Server;

    constructor(server: Server) {
        this.#server = server;
    }

    get #knex(): Knex {
        return this.#server.app.knex;
    }

    get #root(): string {
        return this.#server.app.config.repositoriesDir;
    }

    /** `<root>/<owner>/<repo>.git`; both names must already be safe single path segments. */
    repositoryPath(ownerLowerName: string, repoName: string): string {
        const segments = [ownerLowerName, repoName];
        if (segments.some((segment) => !/^[-.\w]+$/.test(segment) || segment === '.' || segment === '..')) {
            throw new ValidationError(`invalid repository path [${ownerLowerName}/${repoName}]`);
        }

        const path = Path.join(this.#root, ownerLowerName, `${repoName.toLowerCase()}.git`);
        const relative = Path.relative(this.#root, path);
        if (relative.startsWith('..') || Path.isAbsolute(relative)) {
            throw new ValidationError(`invalid repository path [${ownerLowerName}/${repoName}]`);
        }

        return path;
    }

    async byName(owner: UserRow, name: string, knex: Knex = this.#knex): Promise<RepositoryRow | undefined> {
        const raw = await knex('repositories').where({ owner_id: owner.id, lower_name: name.toLowerCase() }).first();
        return raw ? toRepositoryRow(raw) : undefined;
    }

    async create(owner: UserRow, input: CreateRepositoryInput, doer: UserRow): Promise<RepositoryRow> {
        this.#checkReadme(input);
        checkRepositoryName(input.name);
        if ((input.description ?? '').length > MAX_DESCRIPTION_LENGTH) {
            throw new ValidationError('[Description]: MaxSize');
        }

        const defaultBranch = input.default_branch || DEFAULT_BRANCH;
        if (!isValidBranchName(defaultBranch)) {
            throw new ValidationError(`invalid default branch name [name: ${defaultBranch}]`);
        }

        if (await this.byName(owner, input.name)) {
            throw sameNameConflict();
        }

        await this.#checkRepositoryLimit(owner, doer);
        const plan: CreationPlan = { name: input.name, defaultBranch, objectFormat: input.object_format_name || 'sha1' };
        if (input.auto_init) {
            plan.files = this.#initialFiles(owner, input);
        }

        const repository = await this.#createOnDisk(owner, input, plan, doer);
        await repositoryEvents.created(this.#server, repository, owner, doer);
        return repository;
    }

    async #createOnDisk(owner: UserRow, input: CreateRepositoryInput, plan: CreationPlan, doer: UserRow): Promise<RepositoryRow> {
        const directory = this.repositoryPath(owner.lower_name, plan.name);
        let claimed = false;
        try {
            return await this.#knex.transaction(async (trx) => {
                const id = await this.#insertRecord(trx, owner, input, plan);
                claimDirectory(directory, owner, plan.name);
                claimed = true;
                await initBareRepository(directory, plan.defaultBranch, plan.objectFormat);
                if (plan.files) {
                    await writeInitialCommit(directory, plan.defaultBranch, plan.files, signatureOf(doer));
                }

                await trx('repositories')
                    .where({ id })
                    .update({ size: await directorySize(directory) });
                return toRepositoryRow(await trx('repositories').where({ id }).first());
            });
        } catch (error) {
            if (claimed) {
                await Fs.promises.rm(directory, { recursive: true, force: true });
            }

            throw isUniqueViolation(error) ? sameNameConflict() : error;
        }
    }

    async #insertRecord(trx: Knex.Transaction, owner: UserRow, input: CreateRepositoryInput, plan: CreationPlan): Promise<number> {
        const created = now();
        const [id] = await trx('repositories').insert({
            owner_id: owner.id,
            owner_name: owner.name,
            lower_name: plan.name.toLowerCase(),
            name: plan.name,
            description: input.description ?? '',
            is_private: input.private ?? false,
            is_template: input.template ?? false,
            is_empty: !plan.files,
            default_branch: plan.defaultBranch,
            object_format_name: plan.objectFormat,
            created_at: created,
            updated_at: created,
        });
        return Number(id);
    }

    /** Gitea offers one readme template, and refuses any other with 400 before anything else. */
    #checkReadme(input: CreateRepositoryInput): void {
        const readme = input.readme || 'Default';
        if (input.auto_init && !README_TEMPLATES.includes(readme)) {
            throw new BadRequestError(`readme template does not exist, available templates: [${README_TEMPLATES.join(' ')}]`);
        }
    }

    async #checkRepositoryLimit(owner: UserRow, doer: UserRow): Promise<void> {
        if (doer.is_admin || owner.max_repo_creation < 0) {
            return;
        }

        if ((await countOwnedRepositories(owner.id, this.#server)) >= owner.max_repo_creation) {
            throw new ForbiddenError(`user has reached maximum limit of repositories [limit: ${owner.max_repo_creation}]`);
        }
    }

    #initialFiles(owner: UserRow, input: CreateRepositoryInput): InitialFile[] {
        const files: InitialFile[] = [{ name: 'README.md', content: `# ${input.name}\n\n${input.description ?? ''}\n` }];
        const gitignore = this.#gitignoreContent(input.gitignores ?? '');
        if (gitignore) {
            files.push({ name: '.gitignore', content: gitignore });
        }

        if (input.license) {
            files.push({ name: 'LICENSE', content: fillLicense(this.#templateText('license', input.license), owner) });
        }

        if (input.issue_labels) {
            this.#templateText('label', input.issue_labels);
        }

        return files;
    }

    #gitignoreContent(names: string): string {
        const templates = names
            .split(',')
            .map((name) => name.trim())
            .filter((name) => name !== '');
        return templates.map((name) => `# ---> ${name}\n${this.#templateText('gitignore', name)}\n`).join('');
    }

    #templateText(kind: 'gitignore' | 'license' | 'label', name: string): string {
        const templates = this.#server.app.services.templates;
        try {
            if (kind === 'gitignore') {
                return templates.gitignore(name).source;
            }

            if (kind === 'license') {
                return templates.license(name).body;
            }

            templates.labelSet(name);
            return '';
        } catch (error) {
            if (error instanceof NotFoundError) {
                const message =
                    kind === 'label'
                        ? `failed to load label template file "${name}": not found`
                        : `${kind} template does not exist [name: ${name}]`;
                throw new ValidationError(message);
            }

            throw error;
        }
    }

    // -----------------------------------------------------------------------------------------------------------
    // Unadopted repositories: bare directories under the root whose owner exists but which have no record.

    async listUnadopted(query: string, paging: Paging): Promise<{ names: string[]; total: number }> {
        const matchers = unadoptedMatchers(query);
        const found: string[] = [];
        for (const ownerName of sortedDirectories(this.#root)) {
            if (ownerName !== ownerName.toLowerCase() || !matchers.owner.test(ownerName)) {
                continue;
            }

            found.push(...(await this.#unadoptedOf(ownerName, matchers.repo)));
        }

        return { names: found.slice(paging.offset, paging.offset + paging.limit), total: found.length };
    }

    async #unadoptedOf(ownerName: string, repoMatcher: RegExp): Promise<string[]> {
        const candidates = sortedDirectories(Path.join(this.#root, ownerName))
            .filter((entry) => entry.endsWith('.git'))
            .map((entry) => entry.slice(0, -'.git'.length))
            .filter((name) => !repositoryNameProblem(name) && name === name.toLowerCase() && repoMatcher.test(name));
        if (candidates.length === 0) {
            return [];
        }

        const owner = await users(this.#server).byName(ownerName);
        if (!owner) {
            return [];
        }

        const recorded = new Set(await this.#knex('repositories').where({ owner_id: owner.id }).pluck('lower_name'));
        return candidates.filter((name) => !recorded.has(name)).map((name) => `${ownerName}/${name}`);
    }

    /** The owner and directory of an unadopted repository, or 404. */
    async #unadopted(ownerName: string, repoName: string): Promise<{ owner: UserRow; directory: string }> {
        const owner = await users(this.#server).byName(ownerName);
        if (!owner) {
            throw new NotFoundError();
        }

        checkRepositoryName(repoName);
        const directory = this.repositoryPath(owner.lower_name, repoName);
        if ((await this.byName(owner, repoName)) || !isPlainDirectory(directory)) {
            throw new NotFoundError();
        }

        return { owner, directory };
    }

    /** Makes a record for a repository found on disk: private, its default branch and size read from disk. */
    async adopt(ownerName: string, repoName: string): Promise<RepositoryRow> {
        const { owner, directory } = await this.#unadopted(ownerName, repoName);
        const facts = await inspectRepository(directory);
        const size = await directorySize(directory);
        try {
            return await this.#knex.transaction(async (trx) => {
                const created = now();
                const [id] = await trx('repositories').insert({
                    owner_id: owner.id,
                    owner_name: owner.name,
                    lower_name: repoName.toLowerCase(),
                    name: repoName,
                    is_private: true,
                    is_empty: facts.isEmpty,
                    default_branch: facts.defaultBranch,
                    object_format_name: facts.objectFormat,
                    size,
                    created_at: created,
                    updated_at: created,
                });
                if (facts.headNeedsMoving) {
                    await runGit(['symbolic-ref', 'HEAD', `refs/heads/${facts.defaultBranch}`], { gitDir: directory });
                }

                return toRepositoryRow(await trx('repositories').where({ id }).first());
            });
        } catch (error) {
            throw isUniqueViolation(error) ? new NotFoundError() : error;
        }
    }

    async deleteUnadopted(ownerName: string, repoName: string): Promise<void> {
        const { directory } = await this.#unadopted(ownerName, repoName);
        await Fs.promises.rm(directory, { recursive: true, force: true });
    }

    toApiRepository(repo: RepositoryRow, owner: UserRow, viewer: UserRow | undefined, publicUrl: string): ApiRepository {
        const fullName = `${owner.name}/${repo.name}`;
        return {
            id: repo.id,
            owner: toApiUser(owner, viewer, publicUrl),
            name: repo.name,
            full_name: fullName,
            description: repo.description,
            empty: repo.is_empty,
            private: repo.is_private,
            template: repo.is_template,
            size: Math.floor(repo.size / 1024),
            ...repositoryLinks(fullName, publicUrl),
            website: repo.website,
            default_branch: repo.default_branch,
            default_target_branch: '',
            // Branches are not recorded yet: a repository made here has one, or none while empty.
            branch_count: repo.is_empty ? 0 : 1,
            archived: repo.is_archived,
            created_at: toRfc3339(repo.created_at),
            updated_at: toRfc3339(repo.updated_at),
            archived_at: toRfc3339(0),
            permissions: permissionsFor(repo, viewer),
            internal: !repo.is_private && owner.visibility === VISIBILITY_PRIVATE,
            object_format_name: repo.object_format_name,
            ...DEFAULT_UNITS,
            ...NO_ACTIVITY,
        };
    }
}

function checkRepositoryName(name: string): void {
    const problem = repositoryNameProblem(name);
    if (problem) {
        throw new ValidationError(problem.message);
    }
}

/** Creating the directory itself (not its parents) claims it: files already there are never taken over. */
function claimDirectory(directory: string, owner: UserRow, name: string): void {
    Fs.mkdirSync(Path.dirname(directory), { recursive: true });
    try {
        Fs.mkdirSync(directory);
    } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
            throw new ConflictError(`repository files already exist [uname: ${owner.name}, name: ${name}]`);
        }

        throw error;
    }
}

export const repositories = defineService<RepositoryService>('repositories', (owner) => new RepositoryService(owner));
